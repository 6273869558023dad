#include "model/model_config.h"

#include "core/error.h"

namespace genai {

std::string_view architecture_name(Architecture a) {
  switch (a) {
    case Architecture::kLlama:
      return "llama";
    case Architecture::kQwen2:
      return "qwen2";
  }
  return "unknown";
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
  if (bos_id >= vocab_size || eos_id >= vocab_size)
    throw_input_error("{}: bos/eos id ({}/{}) outside the vocabulary of {}", source, bos_id, eos_id, vocab_size);
}

}  // namespace genai
