// The model's default quantization recipe, which every path shares (the quantization stage and
// `genai eval`) so they cannot drift. It needs the model lookup (model_lookup.h), so it stays in
// the orchestrator; what a set of encodings costs is measured by the eval layer
// (eval/quant_evaluation.h).
#pragma once

#include <string_view>

#include "quant/recipe.h"

namespace genai {
struct Model;
}

namespace genai::orchestrator {

// The recipe of `model` when none is asked for: its --decoder_model entry (`decoder_model`, empty
// when not given), else the entry its shape and tokenizer identify, else its own name.
quant::Recipe default_recipe_for(const Model& model, std::string_view decoder_model);

}  // namespace genai::orchestrator
