// Small in-memory random decoders for the graph tests: seconds-fast, no checkpoint files.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>

#include "model/model.h"
#include "support/random_model.h"

namespace genai::graph_testing {

struct RandomModelSpec {
  Architecture arch = Architecture::kLlama;
  int64_t n_heads = 4;
  int64_t n_kv_heads = 2;  // grouped-query attention by default
  bool tied = false;
  bool llama3_rope = false;
  int64_t max_positions = 128;
  uint32_t seed = 7;
};

inline std::shared_ptr<const Model> random_model(const RandomModelSpec& s = {}) {
  auto m = std::make_shared<Model>();
  ModelConfig& c = m->config;
  c.arch = s.arch;
  c.head_dim = 8;
  c.n_heads = s.n_heads;
  c.n_kv_heads = s.n_kv_heads;
  c.dim = 40;
  c.n_layers = 2;
  c.ffn_dim = 72;
  c.vocab_size = 83;
  c.max_positions = s.max_positions;
  c.rope_theta = 10000.0f;
  c.norm_eps = 1e-5f;
  c.tied_embeddings = s.tied;
  testing::set_family_features(c);
  if (s.llama3_rope) {
    c.rope_theta = 500000.0f;
    c.rope_scaling.factor = 8.0f;
    c.rope_scaling.low_freq_factor = 1.0f;
    c.rope_scaling.high_freq_factor = 4.0f;
    c.rope_scaling.original_max_positions = 16;  // small, so the scaled band covers test frequencies
  }
  c.name = "graph-test-model";
  c.validate("random model");

  m->weights = testing::random_weights(c, s.seed);
  m->weights.set_source("random graph-test weights");
  return m;
}

// Deterministic token ids in [0, vocab).
inline std::vector<int32_t> random_tokens(int64_t n, int64_t vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (auto& id : t) id = static_cast<int32_t>(rng() % static_cast<uint32_t>(vocab));
  return t;
}

}  // namespace genai::graph_testing
