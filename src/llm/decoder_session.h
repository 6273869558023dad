// What the generation loop drives: a stateful decoder that consumes tokens at increasing
// positions and returns next-token logits. The float reference (ReferenceSession) and the
// scheduler over static methods (DecoderScheduler: graphs or compiled programs) implement it, so
// the loop, sampling and stats are written once.
#pragma once

#include <cstdint>
#include <span>

namespace genai {

class DecoderSession {
 public:
  virtual ~DecoderSession() = default;

  // Runs `tokens` (one or more) at positions position()..position()+n-1, appending them to the
  // KV cache, and returns the logits [vocab_size()] of the LAST token. The span stays valid until
  // the next call. Throws InputError when position() + n would exceed max_context().
  virtual std::span<const float> forward(std::span<const int32_t> tokens) = 0;
  // Tokens currently in the cache.
  virtual int64_t position() const = 0;
  // The most positions the cache can hold.
  virtual int64_t max_context() const = 0;
  virtual int32_t vocab_size() const = 0;
  // Empties the cache: the next forward starts at position 0.
  virtual void reset() = 0;
};

}  // namespace genai
