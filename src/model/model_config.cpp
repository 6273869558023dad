#include "model/model_config.h"

#include <cmath>

#include "core/error.h"

namespace genai {
namespace {

using A = Architecture;

// Where to add a family: one row here, its features in ModelConfig, and the readers' fields.
constexpr ArchitectureInfo kArchitectures[] = {
    {.arch = A::kLlama, .name = "llama", .hf_class = "LlamaForCausalLM", .gguf_name = "llama", .gguf_interleaved_qk = true},
    {.arch = A::kQwen2, .name = "qwen2", .hf_class = "Qwen2ForCausalLM", .gguf_name = "qwen2", .qkv_bias = true},
    {.arch = A::kQwen3, .name = "qwen3", .hf_class = "Qwen3ForCausalLM", .gguf_name = "qwen3", .qk_norm = true},
    {.arch = A::kGranite, .name = "granite", .hf_class = "GraniteForCausalLM", .gguf_name = "granite",
     .gguf_interleaved_qk = true},
    {.arch = A::kSmolLM3, .name = "smollm3", .hf_class = "SmolLM3ForCausalLM", .gguf_name = "smollm3",
     .gguf_interleaved_qk = true},
    {.arch = A::kPhi3, .name = "phi3", .hf_class = "Phi3ForCausalLM", .gguf_name = "phi3",
     .fused = FusedProjections::kQkvAndGateUp},
    {.arch = A::kGemma, .name = "gemma", .hf_class = "GemmaForCausalLM", .gguf_name = "gemma", .hf_norm_offset = true},
    {.arch = A::kGemma2, .name = "gemma2", .hf_class = "Gemma2ForCausalLM", .gguf_name = "gemma2", .hf_norm_offset = true},
    {.arch = A::kGemma3, .name = "gemma3_text", .hf_class = "Gemma3ForCausalLM", .gguf_name = "gemma3", .qk_norm = true,
     .hf_norm_offset = true},
    // Gemma 4's text decoder: plain norm weights (no 1 + w, in GGUF too), q/k norms.
    {.arch = A::kGemma4, .name = "gemma4_text", .hf_class = "Gemma4ForCausalLM", .gguf_name = "gemma4", .qk_norm = true},
    // llama.cpp converts GlmForCausalLM as "chatglm"; both keep GLM's interleaved rotary rows.
    {.arch = A::kGlm, .name = "glm", .hf_class = "GlmForCausalLM", .gguf_name = "chatglm", .gguf_interleaved_qk = true,
     .hf_interleaved_qk = true, .qkv_bias = true, .fused = FusedProjections::kGateUp},
    // CodeGen (codegen2): llama.cpp has no such architecture; its rope pairs interleaved rows.
    {.arch = A::kCodeGen, .name = "codegen", .hf_class = "CodeGenForCausalLM", .gguf_name = "",
     .hf_interleaved_qk = true, .fused = FusedProjections::kGroupedQvk},
};

}  // namespace

const ArchitectureInfo& architecture_info(Architecture a) {
  for (const auto& info : kArchitectures)
    if (info.arch == a) return info;
  throw_failure("internal: architecture {} has no entry", static_cast<int>(a));
}

std::string_view architecture_name(Architecture a) { return architecture_info(a).name; }

const ArchitectureInfo* find_architecture(std::string_view name) {
  for (const auto& info : kArchitectures)
    if (info.name == name) return &info;
  return nullptr;
}

const ArchitectureInfo* find_gguf_architecture(std::string_view name) {
  for (const auto& info : kArchitectures)
    if (info.has_gguf() && info.gguf_name == name) return &info;
  return nullptr;
}

std::string supported_architectures() {
  std::string out;
  for (const auto& info : kArchitectures) out += (out.empty() ? "" : ", ") + std::string(info.name);
  return out;
}

void set_codegen_features(ModelConfig& c) {
  c.layer_norm = c.parallel_blocks = c.mlp_bias = c.lm_head_bias = true;
  c.gated_ffn = false;
  c.ffn_activation = FfnActivation::kGeluTanh;
  c.n_kv_heads = c.n_heads;
}

int64_t ModelConfig::kv_source(int64_t layer) const {
  if (layer_has_kv(layer)) return layer;
  for (int64_t l = kv_layers() - 1; l >= 0; --l)
    if (layer_slides(l) == layer_slides(layer)) return l;
  throw_failure("internal: layer {} has no earlier layer of its kind to share keys and values with", layer);
}

float ModelConfig::attention_scale() const {
  if (attention_multiplier != 0.0f) return attention_multiplier;
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
}

void ModelConfig::validate(std::string_view source) const {
  auto positive = [&](int64_t v, const char* key) {
    if (v <= 0) throw_input_error("{}: {} must be positive, got {}", source, key, v);
  };
  positive(dim, "dim (hidden_size)");
  positive(n_layers, "n_layers (num_hidden_layers)");
  positive(n_heads, "n_heads (num_attention_heads)");
  positive(n_kv_heads, "n_kv_heads (num_key_value_heads)");
  positive(head_dim, "head_dim");
  positive(ffn_dim, "ffn_dim (intermediate_size)");
  positive(vocab_size, "vocab_size");
  positive(max_positions, "max_positions (max_position_embeddings)");
  if (n_heads % n_kv_heads != 0)
    throw_input_error("{}: n_heads ({}) is not a multiple of n_kv_heads ({})", source, n_heads, n_kv_heads);
  if (head_dim % 2 != 0) throw_input_error("{}: head_dim ({}) must be even for rotary embeddings", source, head_dim);
  if (!(norm_eps > 0.0f)) throw_input_error("{}: norm eps must be positive", source);
  if (!(rope_theta > 0.0f)) throw_input_error("{}: rope_theta must be positive", source);
  if (rotary_dim < 0 || rotary_dim > head_dim || rotary_dim % 2 != 0)
    throw_input_error("{}: rotary dims {} must be even and within the head dimension {}", source, rotary_dim, head_dim);
  if (long_rope.enabled()) {
    const size_t half = static_cast<size_t>(rotary_dims() / 2);
    if (long_rope.short_factor.size() != half || long_rope.long_factor.size() != half)
      throw_input_error("{}: longrope short_factor / long_factor have {} / {} entries, expected {} (rotary dims / 2)",
                        source, long_rope.short_factor.size(), long_rope.long_factor.size(), half);
    for (const auto* list : {&long_rope.short_factor, &long_rope.long_factor})
      for (float f : *list)
        if (!(std::isfinite(f) && f > 0.0f)) throw_input_error("{}: longrope factor {} must be positive", source, f);
    if (long_rope.original_max_positions <= 0 || !(long_rope.attention_factor > 0.0f))
      throw_input_error("{}: longrope original_max_position_embeddings and attention_factor must be positive", source);
    if (rope_scaling.enabled()) throw_input_error("{}: llama3 and longrope scaling at once", source);
  }
  if (!sliding_layers.empty() && static_cast<int64_t>(sliding_layers.size()) != n_layers)
    throw_input_error("{}: layer_types lists {} layers for a model of {}", source, sliding_layers.size(), n_layers);
  if (rope_local_theta < 0.0f) throw_input_error("{}: the local rope base must be positive", source);
  if (sliding_window < 0) throw_input_error("{}: sliding_window must be positive, got {}", source, sliding_window);
  for (float cap : {attn_logit_softcap, final_logit_softcap})
    if (!(std::isfinite(cap) && cap >= 0.0f)) throw_input_error("{}: a soft-capping value is {} (must be positive)", source, cap);
  if (!rope_layers.empty() && static_cast<int64_t>(rope_layers.size()) != n_layers)
    throw_input_error("{}: no_rope_layers lists {} layers for a model of {}", source, rope_layers.size(), n_layers);
  for (float m : {embedding_multiplier, residual_multiplier, logits_scaling})
    if (!(std::isfinite(m) && m != 0.0f)) throw_input_error("{}: a scaling multiplier is {} (must be finite, non-zero)", source, m);
  if (!(std::isfinite(attention_multiplier) && attention_multiplier >= 0.0f))
    throw_input_error("{}: attention_multiplier must be positive, got {}", source, attention_multiplier);
  if (parallel_blocks && sandwich_norms) throw_input_error("{}: parallel blocks with sandwich norms", source);
  if (global_head_dim < 0 || global_head_dim % 2 != 0)
    throw_input_error("{}: global_head_dim ({}) must be even", source, global_head_dim);
  if (global_kv_heads < 0 || (global_kv_heads > 0 && n_heads % global_kv_heads != 0))
    throw_input_error("{}: n_heads ({}) is not a multiple of the global layers' KV heads ({})", source, n_heads,
                      global_kv_heads);
  if (!(global_rope_fraction >= 0.0f && global_rope_fraction <= 1.0f))
    throw_input_error("{}: partial_rotary_factor of the full-attention layers ({}) must be in (0, 1]", source,
                      global_rope_fraction);
  if (kv_shared_layers < 0 || kv_shared_layers >= n_layers)
    throw_input_error("{}: num_kv_shared_layers ({}) must be below the number of layers ({})", source, kv_shared_layers,
                      n_layers);
  for (int64_t l = kv_layers(); l < n_layers; ++l) {  // each shared layer needs an earlier layer of its kind
    bool found = false;
    for (int64_t k = 0; k < kv_layers() && !found; ++k) found = layer_slides(k) == layer_slides(l);
    if (!found)
      throw_input_error("{}: layer {} shares keys and values, but no layer before the {} shared ones is {}", source, l,
                        kv_shared_layers, layer_slides(l) ? "sliding" : "full-attention");
  }
  if (ple_dim < 0 || ple_vocab < 0 || (ple_dim > 0 && ple_vocab == 0))
    throw_input_error("{}: per-layer embeddings need hidden_size_per_layer_input and vocab_size_per_layer_input > 0",
                      source);
  if (bos_id >= vocab_size || eos_id >= vocab_size)
    throw_input_error("{}: bos/eos id ({}/{}) outside the vocabulary of {}", source, bos_id, eos_id, vocab_size);
}

}  // namespace genai
