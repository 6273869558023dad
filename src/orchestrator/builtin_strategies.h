// The built-in strategies of the "executorch" engine: our native flow for the Qualcomm targets.
//   model_preparation  load_model + --decoder_model lookup, tokenizer, chat template, calibration text
//   quantization       quant::quantize_model (calibration, reconciliation), decode_qdq.json into the
//                      artifact dir, logits SQNR / perplexity of the QDQ decode graph against float
//   compilation        compile::compile_artifacts (float graphs when quantization was skipped)
//   inference          the compiled programs on the host runtime (make_compiled_session), or without
//                      programs the prepared float model (reference forward / --model_mode graphs),
//                      + generate; then --eval_methods tasks_eval / sqnr_eval
//                      (inference_evaluation.h)
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "llm/generation.h"
#include "orchestrator/strategy_registry.h"

namespace genai::orchestrator {

inline constexpr std::string_view kDefaultEngine = "executorch";

// Receives the whole generation once inference finishes (`genai run` prints it as it always has).
using GenerationObserver = std::function<void(const GenerationResult&)>;
// The next prompt of an interactive conversation (--chat), nullopt at the end of input.
using PromptSource = std::function<std::optional<std::string>()>;

struct EvalQuantizationSettings;  // quantization_settings.h

struct BuiltinStrategyOptions {
  // Receives the generated text as it is produced (the CLI streams it to stdout); empty: quiet.
  TextSink on_text;
  GenerationObserver on_generation;
  // Where --chat reads its turns (the CLI: stdin); empty: --chat is refused.
  PromptSource next_prompt;
  // `genai eval`'s settings for model_preparation (calibration) and quantization; null: the options'.
  std::shared_ptr<const EvalQuantizationSettings> quantization;
};

std::unique_ptr<ModelPreparationStrategy> make_model_preparation_strategy(
    std::shared_ptr<const EvalQuantizationSettings> settings = nullptr);
std::unique_ptr<QuantizationStrategy> make_quantization_strategy(
    std::shared_ptr<const EvalQuantizationSettings> settings = nullptr);
std::unique_ptr<CompilationStrategy> make_compilation_strategy();
std::unique_ptr<InferenceStrategy> make_inference_strategy(TextSink on_text = {}, GenerationObserver on_generation = {},
                                                           PromptSource next_prompt = {});

// Registers the four under kDefaultEngine and the built-in backends (compile and runtime side).
void register_builtin_strategies(StrategyRegistry& registry, const BuiltinStrategyOptions& options = {});

}  // namespace genai::orchestrator
