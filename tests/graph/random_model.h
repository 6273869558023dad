// Small in-memory random decoders for the graph tests: seconds-fast, no checkpoint files.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>

#include "model/model.h"

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
  c.qkv_bias = s.arch == Architecture::kQwen2;
  if (s.llama3_rope) {
    c.rope_theta = 500000.0f;
    c.rope_scaling.factor = 8.0f;
    c.rope_scaling.low_freq_factor = 1.0f;
    c.rope_scaling.high_freq_factor = 4.0f;
    c.rope_scaling.original_max_positions = 16;  // small, so the scaled band covers test frequencies
  }
  c.name = "graph-test-model";
  c.validate("random model");

  std::mt19937 rng(s.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Weights& w = m->weights;
  w.set_source("random graph-test weights");
  auto add = [&](const std::string& name, Shape shape, float scale, float offset = 0.0f) {
    Tensor t = Tensor::zeros(DType::kF32, shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = offset + scale * normal(rng);
    w.add(name, std::move(t));
  };
  namespace wn = weight_names;
  const int64_t q_dim = c.n_heads * c.head_dim, kv_dim = c.n_kv_heads * c.head_dim;
  const float in_scale = 1.5f / std::sqrt(static_cast<float>(c.dim));
  add(wn::embed_tokens(), {c.vocab_size, c.dim}, 1.0f);
  for (int64_t i = 0; i < c.n_layers; ++i) {
    add(wn::layer(i, "input_layernorm.weight"), {c.dim}, 0.2f, 1.0f);
    add(wn::layer(i, "post_attention_layernorm.weight"), {c.dim}, 0.2f, 1.0f);
    add(wn::layer(i, "self_attn.q_proj.weight"), {q_dim, c.dim}, in_scale);
    add(wn::layer(i, "self_attn.k_proj.weight"), {kv_dim, c.dim}, in_scale);
    add(wn::layer(i, "self_attn.v_proj.weight"), {kv_dim, c.dim}, in_scale);
    add(wn::layer(i, "self_attn.o_proj.weight"), {c.dim, q_dim}, 1.5f / std::sqrt(static_cast<float>(q_dim)));
    if (c.qkv_bias) {
      add(wn::layer(i, "self_attn.q_proj.bias"), {q_dim}, 0.3f);
      add(wn::layer(i, "self_attn.k_proj.bias"), {kv_dim}, 0.3f);
      add(wn::layer(i, "self_attn.v_proj.bias"), {kv_dim}, 0.3f);
    }
    add(wn::layer(i, "mlp.gate_proj.weight"), {c.ffn_dim, c.dim}, in_scale);
    add(wn::layer(i, "mlp.up_proj.weight"), {c.ffn_dim, c.dim}, in_scale);
    add(wn::layer(i, "mlp.down_proj.weight"), {c.dim, c.ffn_dim}, 1.5f / std::sqrt(static_cast<float>(c.ffn_dim)));
  }
  add(wn::final_norm(), {c.dim}, 0.2f, 1.0f);
  if (!c.tied_embeddings) add(wn::lm_head(), {c.vocab_size, c.dim}, 1.0f / std::sqrt(static_cast<float>(c.dim)));
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
