// In-memory random decoders for tests that must not depend on checkpoint files: a ModelConfig of
// the requested shape and Weights under the canonical names, filled from a fixed seed.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

#include "model/model_config.h"
#include "model/weights.h"

namespace genai::testing {

inline ModelConfig small_config(Architecture arch = Architecture::kLlama, bool tied = false) {
  ModelConfig c;
  c.arch = arch;
  c.dim = 48;
  c.n_layers = 2;
  c.n_heads = 6;
  c.n_kv_heads = 2;
  c.head_dim = 8;
  c.ffn_dim = 96;
  c.vocab_size = 97;
  c.max_positions = 128;
  c.rope_theta = 10000.0f;
  c.norm_eps = 1e-5f;
  c.tied_embeddings = tied;
  c.qkv_bias = arch == Architecture::kQwen2;
  c.bos_id = 1;
  c.eos_id = 2;
  c.name = "random-test-model";
  return c;
}

inline Weights random_weights(const ModelConfig& c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Weights w;
  w.set_source("random weights");
  auto add = [&](const std::string& name, Shape shape, float scale, float offset = 0.0f) {
    Tensor t = Tensor::zeros(DType::kF32, shape);
    float* p = t.mutable_data<float>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = offset + scale * normal(rng);
    w.add(name, std::move(t));
  };
  const int64_t q_dim = c.n_heads * c.head_dim, kv_dim = c.n_kv_heads * c.head_dim;
  namespace wn = weight_names;
  add(wn::embed_tokens(), {c.vocab_size, c.dim}, 1.0f);
  for (int64_t i = 0; i < c.n_layers; ++i) {
    const float in_scale = 1.5f / std::sqrt(static_cast<float>(c.dim));
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
  return w;
}

}  // namespace genai::testing
