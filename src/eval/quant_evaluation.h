// How much accuracy a quantization costs, over a text cut into windows of the context length:
// each window runs teacher-forced through the float model and the quantized one (the QDQ
// reference, or a compiled program that equals it), giving logits SQNR, perplexity float vs
// quantized and top-1 agreement over every position; per-tensor SQNR (worst first) on the first
// window; and free-running greedy generation through the decode graphs.
// It lives in eval, above llm, because the greedy comparison runs through the decoder scheduler.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "eval/window_comparison.h"
#include "model/model.h"
#include "quant/encoding_set.h"
#include "quant/recipe.h"

namespace genai {

// An English paragraph of a few hundred tokens: the pipeline's short check after quantizing.
const std::string& default_eval_text();

// `genai eval`'s default text: Newton's Opticks (1730, public domain; Project Gutenberg's
// transcription), about 150,000 tokens of English prose that Debian ships as Go's test data, and
// the package that holds it.
const std::string& default_eval_text_file();
const std::string& default_eval_text_package();

struct EvalOptions {
  std::string text;              // empty: default_eval_text()
  int64_t max_context_len = 256;  // window length (a shorter text is one shorter window)
  int64_t max_tokens = 0;        // tokens of the text used, whole windows (0: all)
  bool sqnr_eval = true;         // teacher-forced SQNR / perplexity / per-tensor table
  int64_t tensor_tokens = 64;    // the per-tensor table's window: the first tokens of the text (0: no table)
  // The quantized side of each window; empty: the QDQ reference (exact, slow) on the
  // full-autoregressive graph. A compiled program of the same encodings gives the same logits.
  WindowLogits quantized_window;
  bool prompt_eval = true;       // free-running greedy generation, float vs quantized
  int64_t prompt_tokens = 16;    // prompt for the greedy generation: the text's first tokens
  int64_t gen_tokens = 32;
};

struct TensorSqnr {
  std::string name;
  double sqnr_db = 0.0;
};

// Weight sensitivity, as upstream's mix-precision analyzer: the float model with only one layer's
// weights quantized (each linear of "layers.N." at the scheme the recipe gives its result, the
// output head as "lm_head"), its logits SQNR against the float model over `tokens`, worst first.
std::vector<TensorSqnr> layer_sensitivity(const Model& model, const quant::Recipe& recipe,
                                          std::span<const int32_t> tokens);
// Overrides raising the layers that cost the most to `higher` (e.g. 16a8w): those more than
// `margin_db` below the median, at most a quarter of them, as REGEX=RECIPE specs.
std::vector<std::string> propose_overrides(const std::vector<TensorSqnr>& sensitivity, const std::string& higher,
                                           double margin_db = 3.0);

struct EvalReport {
  std::string recipe;
  int64_t eval_tokens = 0;        // teacher-forced positions (predicted tokens)
  int64_t eval_windows = 0;
  double sqnr_db = 0.0;           // logits, over all positions
  std::vector<TensorSqnr> per_layer;  // every quantized op result, worst first
  std::vector<TensorSqnr> per_tensor;  // the same in graph order
  double perplexity_float = 0.0, perplexity_quantized = 0.0;
  int64_t top1_agreed = 0;        // teacher-forced argmax agreement over eval_tokens
  int64_t greedy_tokens = 0, greedy_agreed = 0, greedy_common_prefix = 0;
  double seconds = 0.0;
  // Filled by the quantization stage for `genai eval --per_layer` / --report.
  std::vector<TensorSqnr> sensitivity;         // layer_sensitivity, worst first
  std::vector<std::string> proposed_overrides;  // propose_overrides of it
  struct ActivationRange {
    std::string name;
    double lo = 0, hi = 0;
    std::string encoding;
  };
  std::vector<ActivationRange> ranges;  // calibration ranges of the decode graph's op results, in graph order
  std::vector<std::pair<std::string, std::string>> overrides;  // the recipe's (regex, scheme), first match wins
};

// 10 log10(sum f^2 / sum (f - q)^2); +inf when identical.
double sqnr_db(double signal, double noise);

// `encodings` must cover the kv_forward graph built for (model, max_context_len). InputError
// when the model has no tokenizer or the text is shorter than two tokens.
EvalReport evaluate_quantization(std::shared_ptr<const Model> model, std::shared_ptr<const quant::EncodingSet> encodings,
                                 const EvalOptions& options);

}  // namespace genai
