#include "orchestrator/option_readers.h"

#include <algorithm>

#include "core/error.h"
#include "options/validate.h"
#include "quant/encoding_set.h"

namespace genai::orchestrator {

graph::ModelMode graph_mode(const options::OptionValues& v) {
  const std::string& mode = v.get_string("model_mode");
  // Lookahead decoding runs hybrid's two graphs; only kv_forward's AR length differs.
  return mode == "lookahead" ? graph::ModelMode::kHybrid : graph::model_mode_from_name(mode);
}

int64_t decode_ar_len(const options::OptionValues& v) {
  if (v.get_string("model_mode") != "lookahead") return 1;
  return options::lookahead_ar_len(v.get_int("window"), v.get_int("gcap"), v.get_int("ngram"));
}

namespace {

enum class Kind { kString, kInteger };

// The compiled value of option `name` when the run did not set it and the manifest has one of
// that kind.
const nlohmann::json* compiled_value(const options::OptionValues& v, const nlohmann::json& compiled, const char* name,
                                     Kind kind) {
  if (v.was_set(name) || !compiled.is_object() || !compiled.contains(name)) return nullptr;
  const nlohmann::json& c = compiled[name];
  return (kind == Kind::kString ? c.is_string() : c.is_number_integer()) ? &c : nullptr;
}

}  // namespace

std::optional<AttentionSinkOptions> attention_sink_setting(const options::OptionValues& v, const nlohmann::json& compiled) {
  std::optional<std::pair<int64_t, int64_t>> values = options::attention_sink_values(v);
  if (const auto* c = compiled_value(v, compiled, "use_attention_sink", Kind::kString); c && !values) {
    // Read back through the option table, so a hand-edited manifest meets the same checks.
    options::OptionValues from_manifest(options::kRunScope);
    from_manifest.set_from_text("use_attention_sink", {c->get<std::string>()}, options::OptionSource::kConfigFile);
    values = options::attention_sink_values(from_manifest);
  }
  if (!values) return std::nullopt;
  return AttentionSinkOptions{values->first, values->second};
}

std::optional<LookaheadOptions> lookahead_setting(const options::OptionValues& v, const nlohmann::json& compiled) {
  std::string mode = v.get_string("model_mode");
  if (const auto* m = compiled_value(v, compiled, "model_mode", Kind::kString)) mode = m->get<std::string>();
  if (mode != "lookahead") return std::nullopt;
  auto value = [&](const char* name) {
    const auto* c = compiled_value(v, compiled, name, Kind::kInteger);
    return c ? c->get<int64_t>() : v.get_int(name);
  };
  return LookaheadOptions{.ngram = value("ngram"), .window = value("window"), .gcap = value("gcap")};
}

graph::DecoderGraphOptions decoder_graph_options(const options::OptionValues& v) {
  graph::DecoderGraphOptions g;
  g.mode = graph_mode(v);
  g.max_context_len = options::effective_max_context_len(v);
  g.prefill_ar_len = v.get_int("prefill_ar_len");
  g.decode_ar_len = decode_ar_len(v);
  return g;
}

quant::CalibrationOptions calibration_options(const options::OptionValues& v) {
  quant::CalibrationOptions c;
  c.context_len = std::min<int64_t>(v.get_int("calib_len"), options::effective_max_context_len(v));
  c.max_windows = v.get_int("calib_max_windows");
  c.range_method = quant::range_method_from_name(v.get_string("calib_range"), "--calib_range");
  if (v.has_value("calib_samples")) {
    for (const auto& f : v.get_list("calib_samples")) c.sample_files.emplace_back(f);
  }
  c.seed = static_cast<uint64_t>(v.get_optional_int("seed").value_or(0));
  return c;
}

}  // namespace genai::orchestrator
