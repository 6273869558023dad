#include "orchestrator/genai_pipeline.h"

#include "core/error.h"
#include "core/log.h"
#include "model/model.h"
#include "options/quant_recipe_option.h"
#include "options/validate.h"
#include "orchestrator/prebuilt_artifacts.h"
#include "orchestrator/stage_settings.h"
#include "pipeline/exceptions.h"
#include "runtime/lone_program.h"
#include "target/soc.h"

namespace genai::orchestrator {
namespace {

using namespace genai::pipeline;

template <typename S>
std::unique_ptr<Stage<S>> make_stage(const EngineProxy& proxy, const StrategyRegistry& registry, const SkipPlan& skip) {
  constexpr std::string_view name = StageOf<S>::name;
  if (skip.contains(name)) return nullptr;
  const std::string engine(engine_type_name(proxy.engine(name)));
  return std::make_unique<Stage<S>>(engine, registry.make<S>(engine));
}

StageRecord skipped_record(std::string_view stage, const SkipPlan& reasons) {
  StageRecord r;
  r.name = std::string(stage);
  const auto it = reasons.find(stage);
  r.notes["skipped"] = it == reasons.end() ? std::string("not in this pipeline") : it->second;
  log::info("[{}] skipped ({})", stage, r.notes["skipped"].get<std::string>());
  return r;
}

// Preparing a stage's input can fail (a bad recipe spelling, a bad --pre_gen_pte dir): such
// errors belong to that stage and are wrapped like the strategy's own.
template <typename F>
void as_part_of(std::string_view stage, StageRecord& r, F&& prepare) {
  try {
    prepare();
  } catch (...) {
    r.name = std::string(stage);
    r.ran = r.failed = true;
    detail::rethrow_as_stage_error(stage);
  }
}

// The compilation stage's text decoder program runs on this CPU: our lowering of a quantized HTP
// program (the emulation runs anywhere; a QNN context binary needs the HTP or its simulator).
bool decoder_program_runs_here(const CompilationSettings& c, target::BackendType backend) {
  return backend == target::BackendType::kHtpBackend && !c.spec.use_fp16 &&
         options::effective_lowering(c.lowering, c.spec.backend, c.spec.enable_x86_64, true) == "genai";
}

}  // namespace

const StageRecord& PipelineResult::stage(std::string_view name) const {
  for (const auto& s : stages) {
    if (s.name == name) return s;
  }
  throw_failure("pipeline result: no stage '{}' (stages: {})", name, valid_stage_names());
}

GenAIPipeline::GenAIPipeline(std::unique_ptr<ModelPreparationStage> preparation,
                             std::unique_ptr<QuantizationStage> quantization,
                             std::unique_ptr<CompilationStage> compilation, std::unique_ptr<InferenceStage> inference,
                             EngineProxy proxy, SkipPlan skip_reasons)
    : preparation_(std::move(preparation)),
      quantization_(std::move(quantization)),
      compilation_(std::move(compilation)),
      inference_(std::move(inference)),
      proxy_(std::move(proxy)),
      skip_reasons_(std::move(skip_reasons)) {}

GenAIPipeline GenAIPipeline::from_proxy(const EngineProxy& proxy, const StrategyRegistry& registry, const SkipPlan& skip) {
  for (const auto& [stage, why] : skip) {
    if (!is_stage_name(stage)) throw_input_error("Unknown stage '{}' to skip. Valid stages: {}", stage, valid_stage_names());
  }
  // One after the other, so a missing strategy is reported for the first stage in pipeline order.
  auto preparation = make_stage<ModelPreparationStrategy>(proxy, registry, skip);
  auto quantization = make_stage<QuantizationStrategy>(proxy, registry, skip);
  auto compilation = make_stage<CompilationStrategy>(proxy, registry, skip);
  auto inference = make_stage<InferenceStrategy>(proxy, registry, skip);
  return GenAIPipeline(std::move(preparation), std::move(quantization), std::move(compilation), std::move(inference),
                       proxy, skip);
}

bool GenAIPipeline::runs(std::string_view stage) const {
  if (stage == kStageModelPreparation) return preparation_ != nullptr;
  if (stage == kStageQuantization) return quantization_ != nullptr;
  if (stage == kStageCompilation) return compilation_ != nullptr;
  if (stage == kStageInference) return inference_ != nullptr;
  return false;
}

PipelineResult GenAIPipeline::invoke(const PipelineContext& context) const {
  PipelineResult result;
  invoke(context, result);
  return result;
}

void GenAIPipeline::invoke(const PipelineContext& context, PipelineResult& result) const {
  // A run without a target (inference on the prepared float model) has no SoC.
  const target::Chipset soc =
      context.soc_model().empty() ? target::Chipset::UNKNOWN_SM : target::resolve_soc_model(context.soc_model());
  // The options become each stage's typed settings here, once (stage_settings.h).
  const StageSettings settings = resolve_stage_settings(context.extra_options());
  if (context.soc_model().empty())
    log::info("pipeline started for model '{}' (no target: the float model)", context.model_name());
  else
    log::info("pipeline started for model '{}' on {} ({})", context.model_name(), context.soc_model(),
              target::backend_type_name(proxy_.backend_type()));
  result = PipelineResult();
  result.stages.reserve(kAllStages.size());
  auto record = [&]() -> StageRecord& { return result.stages.emplace_back(); };

  // model_preparation
  if (preparation_) {
    ModelPreparationInputConfig in;
    in.model_name = context.model_name();
    in.soc_model = context.soc_model();
    in.settings = settings.preparation;
    in.need_calibration_data = quantization_ != nullptr;
    result.preparation = preparation_->invoke(context, in, &record());
  } else {
    result.stages.push_back(skipped_record(kStageModelPreparation, skip_reasons_));
  }

  // quantization
  const size_t quantization_record = result.stages.size();
  if (quantization_) {
    QuantizationInputConfig in;
    in.soc_model = soc;
    in.backend_type = proxy_.backend_type();
    in.model = result.preparation.model;
    in.calibration_data = result.preparation.calibration_data;
    in.settings = settings.quantization;
    in.check_on_program = compilation_ && decoder_program_runs_here(settings.compilation, in.backend_type);
    StageRecord& r = record();
    as_part_of(kStageQuantization, r, [&] {
      in.quant_recipe = options::resolve_quant_recipe(in.settings.quant_recipe, in.settings.quant_block_size);
    });
    result.quantization = quantization_->invoke(context, in, &r);
  } else {
    result.stages.push_back(skipped_record(kStageQuantization, skip_reasons_));
  }

  // compilation: the quantized bundles, or the prepared float model when quantization did not run
  if (compilation_) {
    CompilationInputConfig in;
    in.soc_model = soc;
    in.backend_type = proxy_.backend_type();
    in.graphs = result.quantization.bundles;
    in.artifact_dir = context.artifact_dir();
    in.model = result.preparation.model;
    in.tokenizer_path = result.preparation.runtime_tokenizer_path;
    if (result.preparation.model) in.checkpoint_path = result.preparation.model->checkpoint_path;
    in.settings = settings.compilation;
    result.compilation = compilation_->invoke(context, in, &record());
    result.artifacts = result.compilation.artifact_paths;
    const auto decoder = result.artifacts.find(ArtifactKey::kTextDecoder);
    if (quantization_ && decoder != result.artifacts.end())
      quantization_->resume(result.stages[quantization_record],
                            [&](QuantizationStrategy& s, StageNotes& notes) { s.check_program(decoder->second, notes); });
  } else {
    result.stages.push_back(skipped_record(kStageCompilation, skip_reasons_));
  }

  // inference: this run's programs, or an earlier run's (--pre_gen_pte DIR)
  if (inference_) {
    InferenceInputConfig in;
    in.soc_model = soc;
    in.tokenizer = result.preparation.tokenizer;
    in.runtime_tokenizer_path = result.preparation.runtime_tokenizer_path;
    in.model = result.preparation.model;  // runs when there are no programs
    in.prompt = context.prompt();
    in.settings = settings.inference;
    in.chat_template = result.preparation.chat_template;
    in.quantized_graphs = result.quantization.bundles;
    StageRecord& r = record();
    in.artifact_paths = result.compilation.artifact_paths;
    if (!compilation_ && in.settings.lone_program) {
      as_part_of(kStageInference, r, [&] { in.artifact_paths = runtime::open_lone_program(*in.settings.lone_program).artifacts; });
    } else if (!compilation_ && in.settings.pre_gen_pte) {
      as_part_of(kStageInference, r, [&] { in.artifact_paths = read_prebuilt_artifacts(*in.settings.pre_gen_pte); });
    }
    result.artifacts = in.artifact_paths;
    result.inference = inference_->invoke(context, in, &r);
  } else {
    result.stages.push_back(skipped_record(kStageInference, skip_reasons_));
  }
  log::info("pipeline completed");
}

}  // namespace genai::orchestrator
