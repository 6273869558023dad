// DecoderSession over the float reference forward (model/reference_decoder.h).
#pragma once

#include <vector>

#include "llm/decoder_session.h"
#include "model/reference_decoder.h"

namespace genai {

class ReferenceSession : public DecoderSession {
 public:
  explicit ReferenceSession(const Model& model) : decoder_(model) {}
  ReferenceSession(const ModelConfig& config, const Weights& weights) : decoder_(config, weights) {}

  std::span<const float> forward(std::span<const int32_t> tokens) override;
  int64_t position() const override { return decoder_.position(); }
  int64_t max_context() const override { return decoder_.max_context(); }
  int32_t vocab_size() const override { return static_cast<int32_t>(decoder_.config().vocab_size); }
  void reset() override { decoder_.reset(); }

 private:
  ReferenceDecoder decoder_;
  std::vector<float> logits_;
};

}  // namespace genai
