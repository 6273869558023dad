#include "orchestrator/option_readers.h"

#include <algorithm>

#include "core/error.h"
#include "options/validate.h"
#include "orchestrator/stage_settings.h"
#include "quant/encoding_set.h"

namespace genai::orchestrator {

graph::ModelMode graph_mode(const pipeline::GraphShapeSettings& g) {
  const std::string& mode = g.model_mode.value;
  // Lookahead decoding runs hybrid's two graphs; only kv_forward's AR length differs.
  return mode == "lookahead" ? graph::ModelMode::kHybrid : graph::model_mode_from_name(mode);
}

int64_t decode_ar_len(const pipeline::GraphShapeSettings& g) {
  if (g.model_mode.value != "lookahead") return 1;
  return options::lookahead_ar_len(g.window.value, g.gcap.value, g.ngram.value);
}

namespace {

enum class Kind { kString, kInteger };

// The compiled value of a setting the run did not give, when the manifest has one of that kind.
const nlohmann::json* compiled_value(bool given, const nlohmann::json& compiled, const char* name, Kind kind) {
  if (given || !compiled.is_object() || !compiled.contains(name)) return nullptr;
  const nlohmann::json& c = compiled[name];
  return (kind == Kind::kString ? c.is_string() : c.is_number_integer()) ? &c : nullptr;
}

}  // namespace

std::optional<AttentionSinkOptions> attention_sink_setting(const pipeline::InferenceSettings& run,
                                                           const nlohmann::json& compiled) {
  std::optional<std::pair<int64_t, int64_t>> values = run.attention_sink;
  if (const auto* c = compiled_value(values.has_value(), compiled, "use_attention_sink", Kind::kString); c && !values) {
    // Read back through the option table, so a hand-edited manifest meets the same checks.
    values = options::attention_sink_from_text(c->get<std::string>(), options::kRunScope);
  }
  if (!values) return std::nullopt;
  return AttentionSinkOptions{values->first, values->second};
}

std::optional<LookaheadOptions> lookahead_setting(const pipeline::InferenceSettings& run, const nlohmann::json& compiled) {
  const pipeline::GraphShapeSettings& g = run.graphs;
  std::string mode = g.model_mode.value;
  if (const auto* m = compiled_value(g.model_mode.given, compiled, "model_mode", Kind::kString)) mode = m->get<std::string>();
  if (mode != "lookahead") return std::nullopt;
  auto value = [&](const pipeline::Setting<int64_t>& s, const char* name) {
    const auto* c = compiled_value(s.given, compiled, name, Kind::kInteger);
    return c ? c->get<int64_t>() : s.value;
  };
  return LookaheadOptions{.ngram = value(g.ngram, "ngram"), .window = value(g.window, "window"), .gcap = value(g.gcap, "gcap")};
}

graph::DecoderGraphOptions decoder_graph_options(const pipeline::GraphShapeSettings& s) {
  graph::DecoderGraphOptions g;
  g.mode = graph_mode(s);
  g.max_context_len = s.effective_max_context_len();
  g.prefill_ar_len = s.prefill_ar_len;
  g.decode_ar_len = decode_ar_len(s);
  return g;
}

graph::DecoderGraphOptions decoder_graph_options(const options::OptionValues& values) {
  return decoder_graph_options(graph_shape_settings(values));
}

quant::CalibrationOptions calibration_options(const pipeline::CalibrationSettings& s) {
  quant::CalibrationOptions c;
  c.context_len = std::min<int64_t>(s.calib_len, s.max_context_len);
  c.max_windows = s.max_windows;
  c.range_method = quant::range_method_from_name(s.range_method, "--calib_range");
  for (const auto& f : s.sample_files) c.sample_files.emplace_back(f);
  c.seed = static_cast<uint64_t>(s.seed.value_or(0));
  return c;
}

quant::CalibrationOptions calibration_options(const options::OptionValues& values) {
  return calibration_options(calibration_settings(values));
}

}  // namespace genai::orchestrator
