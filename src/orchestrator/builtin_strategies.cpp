#include "orchestrator/builtin_strategies.h"

#include "backends/register_builtin.h"
#include "orchestrator/inference_evaluation.h"

namespace genai::orchestrator {

void register_builtin_strategies(StrategyRegistry& registry, const BuiltinStrategyOptions& options) {
  backends::register_builtin_backends();
  const std::string engine(kDefaultEngine);
  const auto settings = options.quantization;
  registry.add<ModelPreparationStrategy>(engine, [settings] { return make_model_preparation_strategy(settings); });
  registry.add<QuantizationStrategy>(engine, [settings] { return make_quantization_strategy(settings); });
  registry.add<CompilationStrategy>(engine, [] { return make_compilation_strategy(); });
  TextSink on_text = options.on_text;
  GenerationObserver on_generation = options.on_generation;
  PromptSource next_prompt = options.next_prompt;
  // --eval_methods tasks_eval / sqnr_eval run in the inference stage, after the generation.
  registry.add<InferenceStrategy>(engine, [on_text, on_generation, next_prompt] {
    return with_evaluation(make_inference_strategy(on_text, on_generation, next_prompt));
  });
}

}  // namespace genai::orchestrator
