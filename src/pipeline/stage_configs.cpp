#include "pipeline/stage_configs.h"

#include <fmt/format.h>

#include "pipeline/exceptions.h"
#include "pipeline/stage_names.h"
#include "target/compile_spec.h"

namespace genai::pipeline {
namespace {

void fail_missing(std::string_view stage, const std::vector<std::string>& missing) {
  if (missing.empty()) return;
  std::string list;
  for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
  throw ConfigValidationError(fmt::format("[{}] missing required inputs: {}", stage, list));
}

}  // namespace

void QuantizationInputConfig::check_ready() const {
  std::vector<std::string> missing;
  if (!model) missing.push_back("model");
  if (!calibration_data || calibration_data->empty()) missing.push_back("calibration_data");
  fail_missing(kStageQuantization, missing);
}

void CompilationInputConfig::check_ready() const {
  if (graphs.empty()) fail_missing(kStageCompilation, {"graphs"});
  if (!compile_specs) return;
  const auto options = target::options_from_specs(*compile_specs);
  if (!options) {
    throw ConfigValidationError(fmt::format("[{}] compile specs carry no '{}' entry", kStageCompilation, kQnnCompileSpecKey));
  }
  if (options->soc_model != soc_model || options->backend_type != backend_type) {
    auto soc_name = [](target::Chipset c) {
      const char* n = qnn_delegate::EnumNameQcomChipset(c);
      return (n && *n) ? std::string(n) : fmt::format("chipset {}", static_cast<int>(c));
    };
    throw ConfigValidationError(fmt::format("[{}] compile specs target {} / {} but the stage targets {} / {}",
                                            kStageCompilation, soc_name(options->soc_model),
                                            target::backend_type_name(options->backend_type), soc_name(soc_model),
                                            target::backend_type_name(backend_type)));
  }
}

void InferenceInputConfig::check_ready() const {
  std::vector<std::string> missing;
  if (!artifact_paths.contains(ArtifactKey::kTextDecoder) && !model) missing.push_back("artifact_paths[text_decoder]");
  if (prompt.empty() && !settings.interactive) missing.push_back("prompt");
  fail_missing(kStageInference, missing);
}

}  // namespace genai::pipeline
