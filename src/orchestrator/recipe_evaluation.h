// `genai eval`: how much accuracy a quantization recipe costs. The pipeline's model_preparation
// and quantization stages (compilation and inference skipped) with eval's own settings
// (quantization_settings.h): quantizes the checkpoint (or reads a decode_qdq.json written by the
// quantization stage) and compares the QDQ decode graph with the float decode graph over a text
// (eval/quant_evaluation.h): logits SQNR, per-tensor SQNR (worst first), perplexity, and greedy
// agreement. Its options are the option table's eval scope (options/option_table.h); the CLI
// command only prints the result.
#pragma once

#include <string>

#include "eval/quant_evaluation.h"
#include "options/option_values.h"

namespace genai::orchestrator {

struct RecipeEvaluation {
  EvalReport report;
  double quantize_seconds = 0.0;  // 0 when the encodings were read (--qdq)
  std::string eval_text;          // the text file evaluated
  bool sqnr_eval = true, prompt_eval = true;  // --eval_methods
  bool per_layer = false;                     // --per_layer: report.sensitivity is filled
  std::string lora;                           // --lora: the adapter measured (empty: the base)
};

// Runs the stages on `values` (read with kEvalScope defaults) and writes --report when given.
// InputError for bad input: contradicting recipe options, an unknown --eval_methods entry, a
// missing text or checkpoint.
RecipeEvaluation evaluate_recipe(const options::OptionValues& values);

}  // namespace genai::orchestrator
