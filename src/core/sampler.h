// Next-token sampling: greedy at temperature 0, otherwise softmax(logits / T) restricted to the
// top-p nucleus, drawn with our own seeded PRNG so a --seed reproduces a run on any platform
// (std::*_distribution results differ between standard libraries; ours do not).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/random.h"

namespace genai {

struct SamplerConfig {
  float temperature = 0.8f;  // 0 = greedy
  float top_p = 0.9f;        // (0, 1]; 1 keeps the whole distribution
  uint64_t seed = 0;
  // InputError naming --temperature / --top_p when out of range.
  void validate() const;
};


// Index of the largest logit; the lowest index wins ties.
int32_t argmax(std::span<const float> logits);

// The top-p nucleus of softmax(logits / temperature): (id, probability) sorted by descending
// probability (ties: lower id first), the smallest prefix whose mass reaches top_p, renormalised
// to sum to 1. temperature must be > 0.
std::vector<std::pair<int32_t, float>> nucleus(std::span<const float> logits, float temperature, float top_p);

class Sampler {
 public:
  explicit Sampler(const SamplerConfig& config);
  int32_t sample(std::span<const float> logits);

 private:
  SamplerConfig config_;
  Xoshiro256 rng_;
};

}  // namespace genai
