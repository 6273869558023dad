// In-memory random decoders for tests that must not depend on checkpoint files: a ModelConfig of
// the requested shape and Weights under the canonical names, filled from a fixed seed.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "model/model_config.h"
#include "model/synth.h"
#include "model/weights.h"

namespace genai::testing {

// The features of `c.arch` turned on with values that make each one matter: q/k/v biases and
// q/k norms as the family has them, Granite 3.3's multipliers, and for SmolLM3 the last layer
// without rotary embedding (so even two layers exercise both kinds).
inline void set_family_features(ModelConfig& c) {
  const ArchitectureInfo& info = architecture_info(c.arch);
  c.qkv_bias = info.qkv_bias;
  c.qk_norm = info.qk_norm;
  c.embedding_multiplier = c.residual_multiplier = c.logits_scaling = 1.0f;
  c.attention_multiplier = 0.0f;
  c.rope_layers.clear();
  if (c.arch == Architecture::kGranite) {
    c.embedding_multiplier = 12.0f;
    c.residual_multiplier = 0.22f;
    c.attention_multiplier = 1.0f / static_cast<float>(c.head_dim);
    c.logits_scaling = 8.0f;
  }
  if (c.arch == Architecture::kSmolLM3) {
    c.rope_layers.assign(static_cast<size_t>(c.n_layers), 1);
    c.rope_layers.back() = 0;
  }
  c.rotary_dim = 0;
  c.long_rope = {};
  if (c.arch == Architecture::kPhi3) set_phi4_mini_rope(c);
  if (c.arch == Architecture::kGlm) c.rotary_dim = c.head_dim / 2;
  c.ffn_activation = FfnActivation::kSilu;
  c.layer_norm = c.parallel_blocks = c.mlp_bias = c.lm_head_bias = false;
  c.gated_ffn = true;
  if (c.arch == Architecture::kCodeGen) {
    set_codegen_features(c);
    c.rotary_dim = c.head_dim / 2;
  }
  c.sandwich_norms = false;
  c.attn_logit_softcap = c.final_logit_softcap = 0.0f;
  c.sliding_window = 0;
  c.sliding_layers.clear();
  c.rope_local_theta = 0.0f;
  c.global_head_dim = c.global_kv_heads = c.kv_shared_layers = c.ple_dim = c.ple_vocab = 0;
  c.global_rope_fraction = 0.0f;
  c.wide_shared_mlp = c.kv_from_k = c.v_norm = c.layer_scalars = c.wide_kv_cache = false;
  if (c.arch == Architecture::kGemma || c.arch == Architecture::kGemma2 || c.arch == Architecture::kGemma3 ||
      c.arch == Architecture::kGemma4) {
    c.ffn_activation = FfnActivation::kGeluTanh;
    c.embedding_multiplier = ModelConfig::gemma_embedding_scale(c.dim);
  }
  if (c.arch == Architecture::kGemma2) {  // caps small enough to bend the random model's scores
    c.sandwich_norms = true;
    c.attn_logit_softcap = 2.0f;
    c.final_logit_softcap = 5.0f;
    c.attention_multiplier = 1.0f / std::sqrt(20.0f);  // query_pre_attn_scalar 20
    c.sliding_window = 32;                             // >= the graph tests' contexts
    c.sliding_layers.assign(static_cast<size_t>(c.n_layers), 0);
    c.sliding_layers[0] = 1;
  }
  if (c.arch == Architecture::kGemma3) {  // layer 0 slides with its own rope base, the last is global
    c.sandwich_norms = true;
    c.attention_multiplier = 1.0f / std::sqrt(20.0f);
    c.sliding_window = 32;
    c.sliding_layers.assign(static_cast<size_t>(c.n_layers), 0);
    c.sliding_layers[0] = 1;
    c.rope_theta = 1e6f;
    c.rope_local_theta = 10000.0f;
  }
  if (c.arch == Architecture::kGemma4) {
    // Four layers (sliding, global, then the same two sharing the first two's keys and values with
    // double-wide MLPs); global heads twice as wide with their own KV heads, rotating a quarter
    // of each half; per-layer embeddings; value norms and layer scalars; capped logits.
    c.n_layers = 4;
    c.sandwich_norms = true;
    c.attention_multiplier = 1.0f;
    c.final_logit_softcap = 5.0f;
    c.sliding_window = 32;
    c.sliding_layers = {1, 0, 1, 0};
    c.rope_theta = 1e6f;
    c.rope_local_theta = 10000.0f;
    c.global_head_dim = 2 * c.head_dim;
    c.global_kv_heads = c.n_heads;
    c.global_rope_fraction = 0.25f;
    c.kv_shared_layers = 2;
    c.wide_shared_mlp = c.v_norm = c.layer_scalars = c.wide_kv_cache = true;
    c.ple_dim = 4;
    c.ple_vocab = c.vocab_size;
  }
}

// The architectures past llama and qwen2, for tests that run each family through a path.
inline std::vector<Architecture> feature_families() {
  return {Architecture::kQwen3, Architecture::kGranite, Architecture::kSmolLM3, Architecture::kPhi3,
          Architecture::kGemma, Architecture::kGemma2, Architecture::kGemma3, Architecture::kGlm,
          Architecture::kCodeGen, Architecture::kGemma4};
}

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
  set_family_features(c);
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
  namespace wn = weight_names;
  add(wn::embed_tokens(), {c.vocab_size, c.dim}, 1.0f);
  for (int64_t i = 0; i < c.n_layers; ++i) {
    // Per-layer sizes (uniform but for gemma4, whose shared layers have no k/v projections).
    const int64_t hd = c.layer_head_dim(i), q_dim = c.n_heads * hd, kv_dim = c.layer_kv_heads(i) * hd;
    const int64_t ffn = c.layer_ffn_dim(i);
    const bool own_kv = c.layer_has_kv(i), own_v = own_kv && !c.layer_values_from_keys(i);
    const float in_scale = 1.5f / std::sqrt(static_cast<float>(c.dim));
    add(wn::layer(i, "input_layernorm.weight"), {c.dim}, 0.2f, 1.0f);
    add(wn::layer(i, "post_attention_layernorm.weight"), {c.dim}, 0.2f, 1.0f);
    if (c.sandwich_norms) {
      add(wn::layer(i, "pre_feedforward_layernorm.weight"), {c.dim}, 0.2f, 1.0f);
      add(wn::layer(i, "post_feedforward_layernorm.weight"), {c.dim}, 0.2f, 1.0f);
    }
    add(wn::layer(i, "self_attn.q_proj.weight"), {q_dim, c.dim}, in_scale);
    if (own_kv) add(wn::layer(i, "self_attn.k_proj.weight"), {kv_dim, c.dim}, in_scale);
    if (own_v) add(wn::layer(i, "self_attn.v_proj.weight"), {kv_dim, c.dim}, in_scale);
    add(wn::layer(i, "self_attn.o_proj.weight"), {c.dim, q_dim}, 1.5f / std::sqrt(static_cast<float>(q_dim)));
    if (c.qkv_bias) {
      add(wn::layer(i, "self_attn.q_proj.bias"), {q_dim}, 0.3f);
      add(wn::layer(i, "self_attn.k_proj.bias"), {kv_dim}, 0.3f);
      add(wn::layer(i, "self_attn.v_proj.bias"), {kv_dim}, 0.3f);
    }
    if (c.qk_norm) {
      add(wn::layer(i, "self_attn.q_norm.weight"), {hd}, 0.2f, 1.0f);
      if (own_kv) add(wn::layer(i, "self_attn.k_norm.weight"), {hd}, 0.2f, 1.0f);
    }
    add(wn::layer(i, "mlp.gate_proj.weight"), {ffn, c.dim}, in_scale);
    add(wn::layer(i, "mlp.up_proj.weight"), {ffn, c.dim}, in_scale);
    add(wn::layer(i, "mlp.down_proj.weight"), {c.dim, ffn}, 1.5f / std::sqrt(static_cast<float>(ffn)));
  }
  add(wn::final_norm(), {c.dim}, 0.2f, 1.0f);
  if (!c.tied_embeddings) add(wn::lm_head(), {c.vocab_size, c.dim}, 1.0f / std::sqrt(static_cast<float>(c.dim)));
  // CodeGen's biases, drawn after the rest so that the other families' weights stay as they were.
  for (int64_t i = 0; i < c.n_layers && c.layer_norm; ++i) add(wn::layer(i, "input_layernorm.bias"), {c.dim}, 0.3f);
  for (int64_t i = 0; i < c.n_layers && c.mlp_bias; ++i) {
    add(wn::layer(i, "mlp.up_proj.bias"), {c.ffn_dim}, 0.3f);
    add(wn::layer(i, "mlp.down_proj.bias"), {c.dim}, 0.3f);
  }
  if (c.layer_norm) add(wn::final_norm_bias(), {c.dim}, 0.3f);
  if (c.lm_head_bias) add(wn::lm_head_bias(), {c.vocab_size}, 0.3f);
  // Gemma 4's per-layer embeddings and layer scalars, also drawn last.
  if (c.ple_dim > 0) {
    const int64_t width = c.n_layers * c.ple_dim;
    add(wn::embed_tokens_per_layer(), {c.ple_vocab, width}, 1.0f);
    add(wn::per_layer_model_projection(), {width, c.dim}, 1.5f / std::sqrt(static_cast<float>(c.dim)));
    add(wn::per_layer_projection_norm(), {c.ple_dim}, 0.2f, 1.0f);
    for (int64_t i = 0; i < c.n_layers; ++i) {
      add(wn::layer(i, "per_layer_input_gate.weight"), {c.ple_dim, c.dim}, 1.5f / std::sqrt(static_cast<float>(c.dim)));
      add(wn::layer(i, "per_layer_projection.weight"), {c.dim, c.ple_dim}, 1.5f / std::sqrt(static_cast<float>(c.ple_dim)));
      add(wn::layer(i, "post_per_layer_input_norm.weight"), {c.dim}, 0.2f, 1.0f);
    }
  }
  for (int64_t i = 0; i < c.n_layers && c.layer_scalars; ++i) add(wn::layer(i, "layer_scalar"), {1}, 0.2f, 1.0f);
  return w;
}

}  // namespace genai::testing
