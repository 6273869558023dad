// The orchestrator: model_preparation -> quantization -> compilation -> inference, each stage a
// strategy chosen by (stage, engine) from a registry, any stage skippable. A skipped stage hands
// on an empty output; compilation then falls back to the prepared float model (fp16 / GPU flows
// skip quantization), inference to the programs of --pre_gen_pte DIR. A failing stage raises a
// pipeline::StageError naming it; what earlier stages wrote stays on disk.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/stage.h"
#include "orchestrator/stage_plan.h"
#include "orchestrator/strategy_registry.h"
#include "pipeline/engine_proxy.h"

namespace genai::orchestrator {

struct PipelineResult {
  std::vector<StageRecord> stages;  // the four stages in order, skipped ones with ran == false
  pipeline::ModelPreparationOutputConfig preparation;
  pipeline::QuantizationOutputConfig quantization;
  pipeline::CompilationOutputConfig compilation;
  pipeline::InferenceOutputConfig inference;
  // The programs of this run: compilation's, or the --pre_gen_pte dir's when inference ran on those.
  pipeline::ArtifactMap artifacts;

  // Failure for a name that is not a stage.
  const StageRecord& stage(std::string_view name) const;
};

class GenAIPipeline {
 public:
  // Null stages are skipped.
  GenAIPipeline(std::unique_ptr<ModelPreparationStage> preparation, std::unique_ptr<QuantizationStage> quantization,
                std::unique_ptr<CompilationStage> compilation, std::unique_ptr<InferenceStage> inference,
                pipeline::EngineProxy proxy, SkipPlan skip_reasons = {});

  // A stage for every stage name not in `skip`, its strategy made by `registry` for the engine
  // the proxy assigns to it. InputError for a skip entry that is not a stage name (listing the
  // valid ones); EngineNotAvailableError when the registry has no strategy for a stage's engine.
  static GenAIPipeline from_proxy(const pipeline::EngineProxy& proxy, const StrategyRegistry& registry,
                                  const SkipPlan& skip = {});

  bool runs(std::string_view stage) const;

  // Runs the stages in order. InputError before any stage for an unknown SoC; StageError from
  // the first failing stage.
  PipelineResult invoke(const pipeline::PipelineContext& context) const;
  // The same, filling `result` as stages finish, so a caller keeps what ran before a failure.
  void invoke(const pipeline::PipelineContext& context, PipelineResult& result) const;

 private:
  std::unique_ptr<ModelPreparationStage> preparation_;
  std::unique_ptr<QuantizationStage> quantization_;
  std::unique_ptr<CompilationStage> compilation_;
  std::unique_ptr<InferenceStage> inference_;
  pipeline::EngineProxy proxy_;
  SkipPlan skip_reasons_;
};

}  // namespace genai::orchestrator
