// The quantization decisions and measurements every path shares (the quantization stage and
// `genai eval`), so they cannot drift: the model's default recipe, and what a set of encodings
// costs against the float model. The only place the orchestrator reaches the evaluation code.
#pragma once

#include <memory>
#include <string_view>

#include "llm/quant_evaluation.h"
#include "quant/recipe.h"

namespace genai {
struct Model;
}

namespace genai::orchestrator {

// The recipe of `model` when none is asked for: its --decoder_model entry (`decoder_model`, empty
// when not given), else the entry its shape and tokenizer identify, else its own name.
quant::Recipe default_recipe_for(const Model& model, std::string_view decoder_model);

// The QDQ decode graph under `encodings` against the float decode graph: logits SQNR, per-tensor
// SQNR, perplexity, greedy agreement (llm/quant_evaluation.h).
EvalReport evaluate_encodings(const std::shared_ptr<const Model>& model,
                                     const std::shared_ptr<const quant::EncodingSet>& encodings,
                                     const EvalOptions& options);

}  // namespace genai::orchestrator
