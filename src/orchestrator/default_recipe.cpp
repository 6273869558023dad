#include "orchestrator/default_recipe.h"

#include "model/model.h"
#include "orchestrator/model_lookup.h"

namespace genai::orchestrator {

quant::Recipe default_recipe_for(const Model& model, std::string_view decoder_model) {
  const ResolvedModel rm = resolve_model(decoder_model, model.config, model.checkpoint_path.string(), model.chat_format,
                                         model.tokenizer ? model.tokenizer->kind() : "");
  return quant::default_recipe(rm.recipe_name, model.config.n_layers, model.config.dim);
}

}  // namespace genai::orchestrator
