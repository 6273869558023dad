// What `genai eval` asks of the built-in model_preparation and quantization strategies beyond the
// option table: its own quantization settings (recipe with overrides, calibration windows and
// range method, graph context), the evaluation it reports, encodings read from a decode_qdq.json
// instead of quantizing, and whether the QDQ file is written.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eval/quant_evaluation.h"
#include "quant/encoding_set.h"
#include "quant/quantize.h"

namespace genai::orchestrator {

struct EvalQuantizationSettings {
  // Replaces what the options say (preparation takes its calibration windows from it). A recipe
  // without a name stands for the model's default recipe.
  std::optional<quant::QuantizeOptions> quantize;
  // The options refining it (--quant_override, --quant_recipe_file, --seq_mse_candidates, --gptq,
  // -E) come from the stage's settings (pipeline::QuantizationSettings), as on every path.
  bool per_layer = false;          // run the layer sensitivity analysis (`genai eval --per_layer`)
  // Evaluate these encodings (of kv_forward) and quantize nothing.
  std::shared_ptr<const quant::EncodingSet> encodings;
  // The evaluation to run; nullopt: the stage's short logits SQNR / perplexity check.
  std::optional<EvalOptions> eval;
  // The quantized side of the evaluation runs as a compiled program (eval/
  // compiled_evaluation.h) instead of the QDQ reference; `quantize` must then have the graph
  // shape eval_program_shape(window). Float recipes and given encodings use the QDQ reference.
  bool compiled_eval = false;
  bool write_qdq = true;  // decode_qdq.json/.bin into the artifact dir
  // Measure this LoRA adapter (one of the model's, `genai eval --lora`), not the base: the float
  // model with its factors against its decode graph's encodings (or its compiled methods).
  std::string lora;
  // Receives the evaluation and the seconds quantization took (0 with `encodings`).
  std::function<void(const EvalReport&, double quantize_seconds)> on_report;
};

}  // namespace genai::orchestrator
