// How much accuracy a quantization costs: the QDQ decode graph (kv_forward) against the float
// decode graph over a text, teacher-forced token by token: logits SQNR, per-tensor SQNR (worst
// first), perplexity float vs quantized, top-1 agreement, and free-running greedy generation.
// It lives in llm, above quant, because both graphs run through the decoder scheduler.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model.h"
#include "quant/encoding_set.h"

namespace genai {

// An English paragraph of a few hundred tokens, the default evaluation text.
const std::string& default_eval_text();

struct EvalOptions {
  std::string text;              // empty: default_eval_text()
  int64_t max_context_len = 256;  // the decode graph's context; the text is cut to fit
  bool sqnr_eval = true;         // teacher-forced SQNR / perplexity / per-tensor table
  bool prompt_eval = true;       // free-running greedy generation, float vs quantized
  int64_t prompt_tokens = 16;    // prompt for the greedy generation: the text's first tokens
  int64_t gen_tokens = 32;
};

struct TensorSqnr {
  std::string name;
  double sqnr_db = 0.0;
};

struct EvalReport {
  std::string recipe;
  int64_t eval_tokens = 0;        // teacher-forced positions
  double sqnr_db = 0.0;           // logits, over all positions
  std::vector<TensorSqnr> per_layer;  // every quantized op result, worst first
  double perplexity_float = 0.0, perplexity_quantized = 0.0;
  int64_t top1_agreed = 0;        // teacher-forced argmax agreement over eval_tokens
  int64_t greedy_tokens = 0, greedy_agreed = 0, greedy_common_prefix = 0;
  double seconds = 0.0;
};

// 10 log10(sum f^2 / sum (f - q)^2); +inf when identical.
double sqnr_db(double signal, double noise);

// `encodings` must cover the kv_forward graph built for (model, max_context_len). InputError
// when the model has no tokenizer or the text is shorter than two tokens.
EvalReport evaluate_quantization(std::shared_ptr<const Model> model, std::shared_ptr<const quant::EncodingSet> encodings,
                                 const EvalOptions& options);

}  // namespace genai
