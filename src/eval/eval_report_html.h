// A quantization evaluation as one self-contained HTML page: the summary numbers, the recipe's
// overrides, and inline-SVG charts of per-tensor SQNR, calibration ranges and layer sensitivity.
// The page carries no script and fetches nothing, so it can be archived next to the artifact and
// opened offline.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace genai {

struct EvalReportPage {
  std::string model;                                           // checkpoint path as given
  std::string recipe;                                          // e.g. "16a4w_block:32 (+2 overrides)"
  std::vector<std::string> techniques;                         // e.g. {"range search: 20 candidates"}
  std::vector<std::pair<std::string, std::string>> overrides;  // (regex, scheme), in match order
  int64_t eval_tokens = 0;
  std::string eval_text;  // what text: a file path or "built-in paragraph"
  double sqnr_db = 0;     // logits SQNR (may be +inf)
  double perplexity_float = 0, perplexity_quantized = 0;
  int64_t top1_agreed = 0;  // out of eval_tokens
  double quantize_seconds = 0, eval_seconds = 0;
  struct TensorRow {
    std::string name;
    double sqnr_db = 0;  // may be +inf
  };
  std::vector<TensorRow> per_tensor;  // per quantized op result, in graph order
  struct RangeRow {
    std::string name;
    double min = 0, max = 0;
    std::string encoding;  // e.g. "uint16 scale 0.0012 zp 31000"
  };
  std::vector<RangeRow> ranges;  // calibration activation ranges, in graph order
  struct LayerCost {
    std::string layer;
    double sqnr_db = 0;  // logits SQNR with only this layer quantized
  };
  std::vector<LayerCost> sensitivity;  // empty: the analysis was not run
};

// One self-contained HTML5 page: no network, no script; charts are inline SVG. Deterministic: the
// same page gives the same bytes.
std::string render_eval_report_html(const EvalReportPage& page);

// Writes render_eval_report_html(page) atomically (see core/atomic_file.h).
void write_eval_report_html(const EvalReportPage& page, const std::filesystem::path& file);

}  // namespace genai
