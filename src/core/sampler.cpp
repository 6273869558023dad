#include "core/sampler.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace genai {

void SamplerConfig::validate() const {
  if (!(temperature >= 0.0f) || !std::isfinite(temperature))
    throw_input_error("--temperature must be a finite number >= 0 (0 = greedy), got {}", temperature);
  if (!(top_p > 0.0f && top_p <= 1.0f)) throw_input_error("--top_p must be in (0, 1], got {}", top_p);
}


int32_t argmax(std::span<const float> logits) {
  if (logits.empty()) throw_failure("internal: argmax of empty logits");
  size_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best]) best = i;
  return static_cast<int32_t>(best);
}

std::vector<std::pair<int32_t, float>> nucleus(std::span<const float> logits, float temperature, float top_p) {
  if (logits.empty()) throw_failure("internal: sampling from empty logits");
  const size_t n = logits.size();
  const float max_logit = logits[argmax(logits)];
  std::vector<double> p(n);
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) {
    p[i] = std::exp((static_cast<double>(logits[i]) - max_logit) / temperature);
    sum += p[i];
  }
  // Only a token with probability >= (1 - top_p) / (n - 1) can be in the nucleus (otherwise all
  // smaller ones together could not make up the missing mass), so sorting just those is enough.
  const double cutoff = n > 1 && top_p < 1.0f ? (1.0 - top_p) / static_cast<double>(n - 1) : 0.0;
  std::vector<std::pair<int32_t, double>> cand;
  for (size_t i = 0; i < n; ++i) {
    const double q = p[i] / sum;
    if (q >= cutoff) cand.emplace_back(static_cast<int32_t>(i), q);
  }
  std::sort(cand.begin(), cand.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  size_t keep = cand.size();
  double mass = 0.0;
  for (size_t i = 0; i < cand.size(); ++i) {
    mass += cand[i].second;
    if (mass >= top_p) {
      keep = i + 1;
      break;
    }
  }
  double kept = 0.0;
  for (size_t i = 0; i < keep; ++i) kept += cand[i].second;
  std::vector<std::pair<int32_t, float>> out(keep);
  for (size_t i = 0; i < keep; ++i) out[i] = {cand[i].first, static_cast<float>(cand[i].second / kept)};
  return out;
}

Sampler::Sampler(const SamplerConfig& config) : config_(config), rng_(config.seed) { config_.validate(); }

int32_t Sampler::sample(std::span<const float> logits) {
  if (config_.temperature == 0.0f) return argmax(logits);
  const auto dist = nucleus(logits, config_.temperature, config_.top_p);
  const double u = rng_.uniform();
  double acc = 0.0;
  for (const auto& [id, prob] : dist) {
    acc += prob;
    if (u < acc) return id;
  }
  return dist.back().first;  // u within rounding of 1
}

}  // namespace genai
