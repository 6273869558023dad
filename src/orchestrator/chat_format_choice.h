// The chat format a run talks to its model in, decided one way for every path (`genai run` on
// programs or on a checkpoint, `genai pipeline`): what model_preparation resolved (the
// checkpoint's template, else the --decoder_model entry), else the tokenizer's own template
// (an artifact dir carries the tokenizer and its template), else the --decoder_model entry, else
// plain text.
#pragma once

#include <optional>
#include <string>

#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace genai::orchestrator {

struct ChatFormatChoice {
  ChatFormat format = ChatFormat::kNone;
  std::string from = "none";  // "model_preparation", "tokenizer template", "--decoder_model", "none"
};

// `prepared`: model_preparation's chat format name (nullopt when it did not run); `decoder_model`:
// --decoder_model (nullopt when not given). Failure for a name that is not a chat format.
ChatFormatChoice choose_chat_format(const std::optional<std::string>& prepared, const Tokenizer& tokenizer,
                                    const std::optional<std::string>& decoder_model);

}  // namespace genai::orchestrator
