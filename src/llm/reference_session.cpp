#include "llm/reference_session.h"

namespace genai {

std::span<const float> ReferenceSession::forward(std::span<const int32_t> tokens) {
  logits_ = decoder_.forward_last(tokens);
  return logits_;
}

}  // namespace genai
