// A strategy does the work of one stage for one engine: typed input config in, typed output
// config out (src/pipeline/stage_configs.h). Stages (stage.h) wrap a strategy with timing, logs
// and error wrapping; the registry (strategy_registry.h) finds a strategy by (stage, engine).
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "pipeline/pipeline_context.h"
#include "pipeline/stage_configs.h"
#include "pipeline/stage_names.h"

namespace genai::orchestrator {

// What a stage reports besides its typed output, for the end summary (recipe, planned bytes,
// SQNR, ...): a JSON object that appears under stages.<name> in `genai pipeline --json`.
using StageNotes = nlohmann::json;

template <typename In, typename Out>
class Strategy {
 public:
  using Input = In;
  using Output = Out;
  virtual ~Strategy() = default;
  // Throws on failure; the stage turns any exception into a StageError naming itself.
  virtual Out invoke(const pipeline::PipelineContext& context, const In& input, StageNotes& notes) = 0;
};

using ModelPreparationStrategy = Strategy<pipeline::ModelPreparationInputConfig, pipeline::ModelPreparationOutputConfig>;
// Quantization's check can wait for the program the pipeline deploys
// (QuantizationInputConfig::check_on_program): the pipeline hands that program back here once
// compilation wrote it.
class QuantizationStrategy : public Strategy<pipeline::QuantizationInputConfig, pipeline::QuantizationOutputConfig> {
 public:
  // Runs the check invoke() left pending on `text_decoder` and adds its notes; does nothing when
  // none is pending.
  virtual void check_program(const std::filesystem::path& text_decoder, StageNotes& notes) {
    (void)text_decoder;
    (void)notes;
  }
};
using CompilationStrategy = Strategy<pipeline::CompilationInputConfig, pipeline::CompilationOutputConfig>;
using InferenceStrategy = Strategy<pipeline::InferenceInputConfig, pipeline::InferenceOutputConfig>;

// The stage a strategy type belongs to.
template <typename S>
struct StageOf;
template <>
struct StageOf<ModelPreparationStrategy> {
  static constexpr std::string_view name = pipeline::kStageModelPreparation;
};
template <>
struct StageOf<QuantizationStrategy> {
  static constexpr std::string_view name = pipeline::kStageQuantization;
};
template <>
struct StageOf<CompilationStrategy> {
  static constexpr std::string_view name = pipeline::kStageCompilation;
};
template <>
struct StageOf<InferenceStrategy> {
  static constexpr std::string_view name = pipeline::kStageInference;
};

}  // namespace genai::orchestrator
