// The hyper-parameters of a llama-family decoder, whatever file they came from.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace genai {

enum class Architecture { kLlama, kQwen2 };
std::string_view architecture_name(Architecture a);  // "llama", "qwen2"

// Llama 3 "rope_type: llama3" frequency scaling. factor == 0 means no scaling.
struct RopeScaling {
  float factor = 0.0f;
  float low_freq_factor = 1.0f;
  float high_freq_factor = 4.0f;
  int64_t original_max_positions = 8192;
  bool enabled() const { return factor > 0.0f; }
};

struct ModelConfig {
  Architecture arch = Architecture::kLlama;
  int64_t dim = 0;          // hidden size
  int64_t n_layers = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;     // usually dim / n_heads
  int64_t ffn_dim = 0;      // intermediate size
  int64_t vocab_size = 0;
  float rope_theta = 10000.0f;
  RopeScaling rope_scaling;
  float norm_eps = 1e-5f;
  bool tied_embeddings = false;  // output head reuses the token embedding
  bool qkv_bias = false;         // qwen2: q/k/v projections carry a bias
  int64_t max_positions = 2048;
  int32_t bos_id = 1;
  int32_t eos_id = 2;
  std::string name;  // free-form, e.g. the GGUF general.name or the HF _name_or_path

  // Throws InputError naming `source` and the offending key when fields are inconsistent
  // (non-positive sizes, heads not dividing, kv heads not dividing heads, ...).
  void validate(std::string_view source) const;
};

}  // namespace genai
