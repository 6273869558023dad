// The float32 reference forward of every decoder family we build (model_config.h) with a KV
// cache: the ground truth every quantized or compiled path is measured against (SQNR, parity). It
// follows Hugging Face's <Family>ForCausalLM step by step, in float, and favours being obviously
// correct over being fast; matmuls are still threaded and batched over prompt tokens so that
// prefill reads each weight once per batch.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/model.h"
#include "model/model_config.h"
#include "model/weights.h"

namespace genai {

class ReferenceDecoder {
 public:
  // Keeps references to nothing: the float weights are copied or shared (Tensor storage is
  // reference-counted), so `weights` may go away afterwards. Throws InputError when a tensor is
  // missing or has the wrong shape for `config`.
  ReferenceDecoder(const ModelConfig& config, const Weights& weights);
  explicit ReferenceDecoder(const Model& model) : ReferenceDecoder(model.config, model.weights) {}

  // Forgets the KV cache; the next forward starts at position 0.
  void reset();

  // Runs `tokens` at positions position()..position()+n-1, appending their keys/values to the
  // cache. Returns the logits of every token, row-major [n, vocab]. Throws InputError for an id
  // outside the vocabulary or when the positions would pass max_context().
  std::vector<float> forward(std::span<const int32_t> tokens);
  // Same, but only the last token's logits [vocab] (skips the head for the other rows).
  std::vector<float> forward_last(std::span<const int32_t> tokens);

  int64_t position() const { return position_; }
  int64_t max_context() const { return config_.max_positions; }
  const ModelConfig& config() const { return config_; }
  // Rotary inverse frequencies [rotary dims / 2] after scaling, as HF computes them.
  const std::vector<float>& inv_freq() const { return inv_freq_; }

 private:
  struct Layer {
    Tensor input_norm, post_norm;
    Tensor input_norm_bias, post_norm_bias;  // LayerNorm families (post: unless parallel_blocks)
    Tensor pre_ffn_norm, post_ffn_norm;  // undefined unless sandwich_norms (post_norm then follows attention)
    Tensor wq, wk, wv, wo, bq, bk, bv;  // biases undefined unless qkv_bias
    Tensor q_norm, k_norm;              // undefined unless qk_norm
    Tensor w_gate, w_up, w_down;        // w_gate undefined unless gated_ffn
    Tensor b_up, b_down;                // undefined unless mlp_bias
    Tensor ple_gate, ple_proj, ple_norm;  // undefined unless per-layer embeddings
    float scalar = 1.0f;                  // layer_scalar (gemma4)
    int64_t head_dim = 0, kv_heads = 0, ffn_dim = 0;
    std::vector<float> k_cache, v_cache;  // [position, kv_heads * head_dim]; empty when shared
  };

  // Hidden states after the final norm for `tokens`, row-major [n, dim].
  std::vector<float> run_layers(std::span<const int32_t> tokens);
  // `kv`: the layer whose cache holds the keys and values (itself, or the one it shares).
  void attention(const Layer& layer, const Layer& kv, bool slides, const std::vector<float>& q, int64_t n,
                 std::vector<float>& out) const;
  void apply_rope(float* vec, int64_t n_heads, int64_t head_dim, int64_t pos, int64_t seq_len, bool local) const;
  // Gemma 4's per-layer inputs [n, n_layers * ple_dim] of the tokens and their scaled embeddings.
  std::vector<float> per_layer_inputs(std::span<const int32_t> tokens, const std::vector<float>& embeds) const;
  void scale_logits(std::vector<float>& logits) const;
  // The family's norm of n rows: RMSNorm, or LayerNorm with `bias`; out may alias in.
  void norm(const float* in, int64_t n, int64_t width, const Tensor& weight, const Tensor& bias, float* out) const;
  void head(const float* h, int64_t n, float* logits) const;

  ModelConfig config_;
  Tensor embed_, final_norm_, final_norm_bias_, head_, head_bias_;
  Tensor ple_table_, ple_projection_, ple_projection_norm_;  // undefined unless per-layer embeddings
  std::vector<Layer> layers_;
  std::vector<float> inv_freq_, long_inv_freq_;  // long: longrope past the original context
  std::vector<float> local_inv_freq_;            // gemma3's / gemma4's sliding layers
  int64_t position_ = 0;
};

// Rotary inverse frequencies theta^(-2i/d), i < d/2 over the rotary dims d, with Llama 3 scaling
// or longrope's factors (the long ones when `context` passes the original context) — the same
// numbers as transformers' _compute_default/_llama3/_longrope_parameters.
// `local`: the sliding layers' own base (gemma3's rope_local_base_freq).
std::vector<float> rope_inv_freq(const ModelConfig& config, int64_t context = 0, bool local = false);
// Those `layer`'s keys are rotated with (its local or global kind) in graphs of `context`
// positions; empty for a layer without RoPE.
std::vector<float> layer_rope_inv_freq(const ModelConfig& config, int64_t layer, int64_t context);

}  // namespace genai
