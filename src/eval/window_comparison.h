// Teacher-forced comparison of logit sources over the same windows of tokens: each source's
// perplexity, and against the first source (the reference, normally the float model) its logits
// SQNR and top-1 agreement. The one perplexity loop: `genai eval` (float vs the quantized side)
// and the inference stage's --eval_methods tasks_eval / sqnr_eval (float, QDQ reference, compiled
// program) both run it, so their figures mean the same thing.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace genai {

// Logits [tokens.size(), vocab] of one window, teacher-forced from position 0.
using WindowLogits = std::function<std::vector<float>(std::span<const int32_t> tokens)>;

struct LogitsSource {
  std::string name;  // for logs: "float", "qdq", "program", ...
  WindowLogits logits;
};

struct SourceFigures {
  std::string name;
  double perplexity = 0.0;  // exp(mean NLL of each next token); NaN without predicted tokens
  double sqnr_db = 0.0;     // logits against the first source, all positions (+inf when identical)
  int64_t top1_agreed = 0;  // predictions whose argmax equals the first source's
  double seconds = 0.0;     // spent computing this source's logits
};

struct WindowComparison {
  int64_t windows = 0;
  int64_t logits_rows = 0;       // positions compared (SQNR)
  int64_t predicted_tokens = 0;  // positions with a next token in the window (perplexity, top-1)
  std::vector<SourceFigures> sources;  // in the order given
};

// Every window through every source; position i of a window predicts its token i + 1. The
// sources must agree on the number of logits (Failure otherwise); `vocab` is the row length.
// A progress bar named `what` counts the windows.
WindowComparison compare_windows(std::span<const std::span<const int32_t>> windows, int64_t vocab,
                                 std::span<const LogitsSource> sources, const std::string& what = "evaluating");

}  // namespace genai
