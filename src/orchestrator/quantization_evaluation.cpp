#include "orchestrator/quantization_evaluation.h"

#include "model/model.h"
#include "orchestrator/model_lookup.h"

namespace genai::orchestrator {

quant::Recipe default_recipe_for(const Model& model, std::string_view decoder_model) {
  const ResolvedModel rm = resolve_model(decoder_model, model.config, model.checkpoint_path.string(), model.chat_format,
                                         model.tokenizer ? model.tokenizer->kind() : "");
  return quant::default_recipe(rm.recipe_name, model.config.n_layers, model.config.dim);
}

EvalReport evaluate_encodings(const std::shared_ptr<const Model>& model,
                                     const std::shared_ptr<const quant::EncodingSet>& encodings,
                                     const EvalOptions& options) {
  return evaluate_quantization(model, encodings, options);
}

}  // namespace genai::orchestrator
