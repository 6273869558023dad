// A sweep's results in the two machine-readable forms: results.json (every cell's result.json,
// in matrix order, under the matrix it came from) and results.csv (one row per cell, the axes and
// the figures; RFC 4180 quoting).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweep/sweep_matrix.h"

namespace genai::sweep {

// The figures of a cell's "metrics", in the CSV's and the report's column order.
const std::vector<std::string>& metric_names();
// The axes of a cell, in the same order.
const std::vector<std::string>& axis_names();

nlohmann::json sweep_results_json(const SweepMatrix& matrix, const std::vector<nlohmann::json>& results);
std::string sweep_results_csv(const std::vector<nlohmann::json>& results);

}  // namespace genai::sweep
