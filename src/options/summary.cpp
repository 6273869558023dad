#include "options/summary.h"

#include <fmt/format.h>

#include "options/quant_recipe_option.h"
#include "options/spec_from_options.h"
#include "options/validate.h"
#include "target/compile_spec.h"

namespace genai::options {

nlohmann::json resolved_summary(const OptionValues& values) {
  validate(values);
  nlohmann::json j;
  if (values.has_value("soc_model")) {
    const auto specs = spec_builder_from_options(values).build();
    const auto qnn = target::qnn_options_json_from_specs(specs);
    j["target"] = {{"soc_model", (*qnn)["soc_model"]},
                   {"htp_arch", (*qnn)["htp_arch"]},
                   {"vtcm_mb", (*qnn)["vtcm_mb"]},
                   {"backend_type", (*qnn)["backend_type"]},
                   {"x86_emulation", values.get_flag("enable_x86_64")},
                   {"lowering", effective_lowering(values)}};
    j["qnn_options"] = *qnn;
  } else {
    j["target"] = nullptr;
    j["qnn_options"] = nullptr;
  }
  nlohmann::json derived;
  derived["max_context_len"] = effective_max_context_len(values);
  derived["num_sharding"] = effective_num_sharding(values);
  if (auto recipe = resolve_quant_recipe(values)) {
    derived["quant_recipe"] = {{"scheme", quant_scheme_name(recipe->scheme)},
                               {"block_size", recipe->block_size ? nlohmann::json(*recipe->block_size) : nlohmann::json(nullptr)}};
  } else {
    derived["quant_recipe"] = nullptr;
  }
  j["derived"] = derived;
  j["ignored_options"] = values.ignored_options_set();
  j["options"] = values.to_json();
  return j;
}

std::string summary_text(const nlohmann::json& s) {
  std::string out;
  if (s["target"].is_null()) {
    out += "target: (no --soc_model)\n";
  } else {
    const auto& t = s["target"];
    const auto& q = s["qnn_options"];
    out += fmt::format("target: {} (HTP {}, VTCM {} MB), backend {}, lowering {}{}\n", t["soc_model"].get<std::string>(),
                       t["htp_arch"].get<std::string>(), t["vtcm_mb"].get<int>(), t["backend_type"].get<std::string>(),
                       t["lowering"].get<std::string>(), t["x86_emulation"].get<bool>() ? ", x86 emulation" : "");
    out += fmt::format("qnn: log {}, profile {}, weight sharing {}, shared buffer {}, online prepare {}, mha2sha {}\n",
                       q["log_level"].get<std::string>(), q["profile_level"].get<std::string>(),
                       q["use_weight_sharing"].dump(), q["shared_buffer"].dump(), q["online_prepare"].dump(),
                       q["use_mha2sha"].dump());
  }
  const auto& o = s["options"];
  out += fmt::format("model: checkpoint {}, decoder_model {}, model_mode {}, max_seq_len {}, max_context_len {}, prefill_ar_len {}\n",
                     o["checkpoint"].is_null() ? "-" : o["checkpoint"].get<std::string>(),
                     o["decoder_model"].is_null() ? "-" : o["decoder_model"].get<std::string>(),
                     o["model_mode"].get<std::string>(), o["max_seq_len"].dump(), s["derived"]["max_context_len"].dump(),
                     o["prefill_ar_len"].dump());
  const auto& r = s["derived"]["quant_recipe"];
  out += fmt::format("quantization: {}\n", o["use_fp16"].get<bool>() ? "none (fp16)"
                                           : r.is_null()              ? "model default recipe"
                                                                      : r["scheme"].get<std::string>() +
                                                                            (r["block_size"].is_null() ? "" : ":" + r["block_size"].dump()));
  out += fmt::format("artifacts: {}\n", o["artifact"].get<std::string>());
  return out;
}

}  // namespace genai::options
