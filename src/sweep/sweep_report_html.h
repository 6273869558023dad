// A sweep as one self-contained HTML page, in the eval report's manner (inline SVG, no script,
// nothing fetched): the table of every cell, sortable by any figure through links (each order
// is a table of its own, the linked one shown by CSS :target), and per model two Pareto charts:
// the perplexity ratio (quantized / float) against decode tokens/s and against program size, one
// colour per SoC, the cells no other cell beats on both axes joined by the frontier line.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweep/sweep_matrix.h"

namespace genai::sweep {

// Deterministic: the same results give the same bytes.
std::string render_sweep_report_html(const SweepMatrix& matrix, const std::vector<nlohmann::json>& results);

}  // namespace genai::sweep
