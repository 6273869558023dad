// The hyper-parameters of a decoder, whatever file they came from. The families share one
// pre-norm transformer skeleton; what sets them apart is a handful of features (q/k norms,
// multipliers, layers without rotary embedding) held here as plain fields, so graph builders and
// the reference read features, not family names.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace genai {

enum class Architecture { kLlama, kQwen2, kQwen3, kGranite, kSmolLM3, kPhi3, kGemma, kGemma2, kGemma3, kGemma4, kGlm, kCodeGen };

// Which projections a family's checkpoints store stacked (loaders split them, writers stack).
// kGroupedQvk: CodeGen's qkv_proj, four groups of rows, each [q; v; k] slices of one quarter of
// the heads (its model-parallel layout).
enum class FusedProjections { kNone, kGateUp, kQkvAndGateUp, kGroupedQvk };

// What a family's files look like: its names in each format and the layout of its rotary rows.
struct ArchitectureInfo {
  Architecture arch;
  std::string_view name;        // Hugging Face model_type
  std::string_view hf_class;    // config.json "architectures"
  std::string_view gguf_name;   // general.architecture (llama.cpp's name); empty: llama.cpp has none
  bool gguf_interleaved_qk = false;  // GGUF q/k rows rotate interleaved pairs (llama.cpp's converter permutes)
  bool hf_interleaved_qk = false;    // so do the HF checkpoint's (GLM's rope)
  bool qkv_bias = false;             // q/k/v projections carry a bias
  bool qk_norm = false;              // per-head RMS norms on q and k before rope
  FusedProjections fused = FusedProjections::kNone;
  bool hf_norm_offset = false;       // HF checkpoints store norm weights as w - 1 (gemma: x * (1 + w))
  bool has_gguf() const { return !gguf_name.empty(); }
};
const ArchitectureInfo& architecture_info(Architecture a);
std::string_view architecture_name(Architecture a);  // "llama", "qwen2", ...
// The architecture called `name`, or nullptr.
const ArchitectureInfo* find_architecture(std::string_view name);
// The architecture llama.cpp calls `name` (general.architecture), or nullptr.
const ArchitectureInfo* find_gguf_architecture(std::string_view name);
// "llama, qwen2, ..., gemma3_text, glm" for messages.
std::string supported_architectures();

// Llama 3 "rope_type: llama3" frequency scaling. factor == 0 means no scaling.
struct RopeScaling {
  float factor = 0.0f;
  float low_freq_factor = 1.0f;
  float high_freq_factor = 4.0f;
  int64_t original_max_positions = 8192;
  bool enabled() const { return factor > 0.0f; }
};

// Phi-3's "longrope": the rotary frequencies divided by per-frequency factors (short ones up to
// original_max_positions tokens, long ones past it), cos and sin scaled by attention_factor.
struct LongRope {
  std::vector<float> short_factor, long_factor;  // [rotary_dim / 2] each; empty: no longrope
  int64_t original_max_positions = 4096;
  float attention_factor = 1.0f;
  bool enabled() const { return !short_factor.empty(); }
};

// The gate's activation in the gated MLP: SwiGLU (silu) or Gemma's GeGLU (GELU, tanh form).
enum class FfnActivation { kSilu, kGeluTanh };

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
  LongRope long_rope;
  int64_t rotary_dim = 0;  // leading dims of each head that rotate (phi-4-mini: 3/4); 0 = head_dim
  float norm_eps = 1e-5f;
  bool tied_embeddings = false;  // output head reuses the token embedding
  bool qkv_bias = false;         // qwen2: q/k/v projections carry a bias
  bool qk_norm = false;          // qwen3: RMS norms over each q and k head before rope
  FfnActivation ffn_activation = FfnActivation::kSilu;
  // Granite's scalings (1 elsewhere; gemma: embeddings times sqrt(dim)): embeddings times embedding_multiplier, each block's
  // attention and MLP output times residual_multiplier before its residual add, attention
  // scores times attention_multiplier (0: 1 / sqrt(head_dim)), logits divided by logits_scaling.
  float embedding_multiplier = 1.0f;
  float residual_multiplier = 1.0f;
  float attention_multiplier = 0.0f;
  float logits_scaling = 1.0f;
  // SmolLM3: per layer, 1 when it applies rotary embedding, 0 when it does not (NoPE). Empty:
  // every layer does.
  std::vector<uint8_t> rope_layers;
  // Gemma 2: norms on the attention and MLP outputs too (before each residual add), with the MLP's
  // input norm its own (pre_feedforward_layernorm); attention scores and logits soft-capped,
  // x -> cap * tanh(x / cap) (0: no cap); sliding-window layers, where a query sees its own and
  // the sliding_window - 1 keys before it.
  bool sandwich_norms = false;
  float attn_logit_softcap = 0.0f;
  float final_logit_softcap = 0.0f;
  int64_t sliding_window = 0;
  std::vector<uint8_t> sliding_layers;  // per layer 1 = sliding window; empty: none
  float rope_local_theta = 0.0f;        // gemma3: the sliding layers' rope base; 0 = rope_theta
  // CodeGen: LayerNorm (mean removed, then weight and bias) where the others have RMSNorm; attention
  // and MLP both read the block's one input norm and add onto the residual together (parallel
  // blocks); a plain MLP, down(act(up(x))), whose projections carry biases; a biased output head.
  bool layer_norm = false;
  bool parallel_blocks = false;
  bool gated_ffn = true;
  bool mlp_bias = false;
  bool lm_head_bias = false;
  // Gemma 4: the full-attention (global) layers have their own head size and KV head count, and
  // rotate "proportionally": of each head's head_dim / 2 frequency pairs only the leading
  // global_rope_fraction rotate, at theta^(-2i / head_dim); the rest keep angle 0 (0: the whole
  // head, as everywhere else). The last kv_shared_layers layers compute no keys or values: each
  // reads those of the last earlier layer of its own kind (sliding or global), and with
  // wide_shared_mlp their MLP is twice as wide. kv_from_k: a global layer's values are its key
  // projection (no v_proj). v_norm: a weightless RMS norm over each value head. layer_scalars:
  // each layer's output times its scalar (layers.N.layer_scalar). ple_dim > 0: per-layer
  // embeddings: a second token table [ple_vocab, n_layers * ple_dim] plus a projection of the
  // embeddings give every layer a ple_dim input, gated into its output.
  int64_t global_head_dim = 0;  // 0: head_dim
  int64_t global_kv_heads = 0;  // 0: n_kv_heads
  float global_rope_fraction = 0.0f;
  int64_t kv_shared_layers = 0;
  bool wide_shared_mlp = false;
  bool kv_from_k = false;
  bool v_norm = false;
  bool layer_scalars = false;
  int64_t ple_dim = 0;
  int64_t ple_vocab = 0;
  // The KV cache stays 16-bit under every integer recipe (gemma4, as upstream's recipe for it:
  // attention unscaled over normalized q and k turns 8-bit keys' steps into large score errors).
  bool wide_kv_cache = false;
  int64_t max_positions = 2048;
  int32_t bos_id = 1;
  int32_t eos_id = 2;
  std::string name;  // free-form, e.g. the GGUF general.name or the HF _name_or_path

  bool layer_uses_rope(int64_t layer) const {
    return rope_layers.empty() || rope_layers[static_cast<size_t>(layer)] != 0;
  }
  bool layer_slides(int64_t layer) const {
    return sliding_window > 0 && !sliding_layers.empty() && sliding_layers[static_cast<size_t>(layer)] != 0;
  }
  float attention_scale() const;  // attention_multiplier, or 1 / sqrt(head_dim)
  int64_t rotary_dims() const { return rotary_dim > 0 ? rotary_dim : head_dim; }
  // Layers whose rope has its own tables: gemma3's sliding layers (their own base), gemma4's
  // sliding layers (their own base and head size; the global layers rotate proportionally).
  bool layer_uses_local_rope(int64_t layer) const {
    const bool own = (rope_local_theta > 0.0f && rope_local_theta != rope_theta) || global_head_dim > 0 ||
                     global_rope_fraction > 0.0f;
    return own && layer_slides(layer);
  }
  // The full-attention layers' head size, and the rope width of the layers that are not local.
  int64_t global_layer_head_dim() const { return global_head_dim > 0 ? global_head_dim : head_dim; }
  int64_t global_rotary_dims() const { return global_head_dim > 0 ? global_head_dim : rotary_dims(); }
  // Gemma's embedding scale: sqrt(dim) rounded to float32, as transformers' normalizer.
  static float gemma_embedding_scale(int64_t dim) { return static_cast<float>(std::sqrt(static_cast<double>(dim))); }
  // Per-layer sizes (Gemma 4's global layers differ; every other family is uniform).
  int64_t layer_head_dim(int64_t layer) const {
    return global_head_dim > 0 && !layer_slides(layer) ? global_head_dim : head_dim;
  }
  int64_t layer_kv_heads(int64_t layer) const {
    return global_kv_heads > 0 && !layer_slides(layer) ? global_kv_heads : n_kv_heads;
  }
  int64_t layer_ffn_dim(int64_t layer) const { return wide_shared_mlp && !layer_has_kv(layer) ? 2 * ffn_dim : ffn_dim; }
  bool layer_has_kv(int64_t layer) const { return layer < kv_layers(); }
  int64_t kv_layers() const { return n_layers - kv_shared_layers; }  // layers with their own keys and values
  // The layer whose keys and values `layer` attends over: itself, or for a shared layer the last
  // layer with its own KV of the same kind (sliding or not).
  int64_t kv_source(int64_t layer) const;
  bool layer_values_from_keys(int64_t layer) const { return kv_from_k && !layer_slides(layer); }
  // Whether the config has features only the Gemma 4 path builds (the graphs' uniform-KV forms refuse them).
  bool has_per_layer_kv() const { return global_head_dim > 0 || global_kv_heads > 0 || kv_shared_layers > 0; }
  bool has_scalings() const {
    return embedding_multiplier != 1.0f || residual_multiplier != 1.0f || attention_multiplier != 0.0f ||
           logits_scaling != 1.0f;
  }

  // Throws InputError naming `source` and the offending key when fields are inconsistent
  // (non-positive sizes, heads not dividing, kv heads not dividing heads, ...).
  void validate(std::string_view source) const;
};

// CodeGen's fixed features (every checkpoint has them): LayerNorms, parallel blocks, the plain
// biased GELU (tanh form) MLP, a biased head, no grouped kv heads.
void set_codegen_features(ModelConfig& c);

}  // namespace genai
