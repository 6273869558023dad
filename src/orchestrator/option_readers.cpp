#include "orchestrator/option_readers.h"

#include <algorithm>

#include "core/error.h"
#include "options/validate.h"

namespace genai::orchestrator {

graph::ModelMode graph_mode(const options::OptionValues& v) {
  const std::string& mode = v.get_string("model_mode");
  if (mode == "lookahead")
    throw_input_error("--model_mode lookahead: lookahead decoding graphs are not built natively; use kv or hybrid");
  return graph::model_mode_from_name(mode);
}

graph::DecoderGraphOptions decoder_graph_options(const options::OptionValues& v) {
  graph::DecoderGraphOptions g;
  g.mode = graph_mode(v);
  g.max_context_len = options::effective_max_context_len(v);
  g.prefill_ar_len = v.get_int("prefill_ar_len");
  return g;
}

quant::CalibrationOptions calibration_options(const options::OptionValues& v) {
  quant::CalibrationOptions c;
  c.context_len = std::min<int64_t>(c.context_len, options::effective_max_context_len(v));
  c.max_windows = 2;
  if (v.has_value("calib_samples")) {
    for (const auto& f : v.get_list("calib_samples")) c.sample_files.emplace_back(f);
  }
  c.seed = static_cast<uint64_t>(v.get_optional_int("seed").value_or(0));
  return c;
}

}  // namespace genai::orchestrator
