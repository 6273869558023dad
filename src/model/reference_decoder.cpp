#include "model/reference_decoder.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/float_arith.h"
#include "kernels/packed_linear.h"
#include "kernels/scalar_kernels.h"

namespace genai {
namespace {

// out[t, r] = sum_k in[t, k] * w[r, k] (+ bias[r]) for t < n, r < rows: y = x W^T as nn.Linear,
// with the float reference's one arithmetic (kernels::linear_f32, the graphs' interpreter too).
void linear(const float* in, int64_t n, int64_t k, const Tensor& w, const Tensor* bias, float* out) {
  kernels::linear_f32(in, n, w.data<float>(), w.dim(0), k, bias != nullptr ? bias->data<float>() : nullptr, out);
}

// x * rsqrt(mean(x^2) + eps) * w per row, as LlamaRMSNorm (in float32).
void rms_norm(const float* in, int64_t n, int64_t dim, const Tensor& w, float eps, float* out) {
  const float* wd = w.data<float>();
  for (int64_t t = 0; t < n; ++t) {
    const float* x = in + t * dim;
    float* y = out + t * dim;
    float ss = 0.0f;
    for (int64_t i = 0; i < dim; ++i) ss += x[i] * x[i];
    const float scale = 1.0f / std::sqrt(ss / static_cast<float>(dim) + eps);
    for (int64_t i = 0; i < dim; ++i) y[i] = wd[i] * (x[i] * scale);
  }
}

// The tensor `name` as float32 with exactly `shape`, or InputError naming the source and tensor.
Tensor checked(const Weights& weights, const std::string& name, const Shape& shape) {
  Tensor t = weights.f32(name);
  if (t.shape() != shape)
    throw_input_error("{}: tensor {} has shape {}, expected {}", weights.source().empty() ? "weights" : weights.source(),
                      name, shape_to_string(t.shape()), shape_to_string(shape));
  return t;
}

}  // namespace

std::vector<float> layer_rope_inv_freq(const ModelConfig& config, int64_t layer, int64_t context) {
  if (!config.layer_uses_rope(layer)) return {};
  return rope_inv_freq(config, context, config.layer_uses_local_rope(layer));
}

std::vector<float> rope_inv_freq(const ModelConfig& c, int64_t context, bool local) {
  const int64_t rd = local ? c.rotary_dims() : c.global_rotary_dims(), half = rd / 2;
  if (!local && c.global_rope_fraction > 0.0f) {
    // Gemma 4's proportional rope: int(fraction * d // 2) pairs rotate at theta^(-2i / d) over the
    // whole head d, the rest keep angle 0 (transformers' _compute_proportional_rope_parameters).
    // (The slack keeps a fraction read back as 2 * angles / d from rounding below its count.)
    const auto angles = static_cast<int64_t>(
        std::floor(static_cast<double>(c.global_rope_fraction) * static_cast<double>(rd) / 2.0 + 1e-4));
    std::vector<float> inv(static_cast<size_t>(half), 0.0f);
    for (int64_t i = 0; i < std::min(angles, half); ++i)
      inv[static_cast<size_t>(i)] = 1.0f / std::pow(c.rope_theta, static_cast<float>(2 * i) / static_cast<float>(rd));
    return inv;
  }
  const LongRope& lr = c.long_rope;
  const std::vector<float>* ext =
      !lr.enabled() ? nullptr : context > lr.original_max_positions ? &lr.long_factor : &lr.short_factor;
  std::vector<float> inv(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    // HF: 1 / base ** (arange(0, d, 2).float() / d) over the rotary dims d, all in float32;
    // longrope: 1 / (factor * base ** ...).
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(rd);
    const float power = std::pow(local && c.rope_local_theta > 0.0f ? c.rope_local_theta : c.rope_theta, exponent);
    inv[i] = 1.0f / (ext ? (*ext)[static_cast<size_t>(i)] * power : power);
  }
  if (!c.rope_scaling.enabled()) return inv;
  const RopeScaling& s = c.rope_scaling;
  const double old_len = static_cast<double>(s.original_max_positions);
  const double low_freq_wavelen = old_len / s.low_freq_factor;
  const double high_freq_wavelen = old_len / s.high_freq_factor;
  for (float& f : inv) {
    const double wavelen = 2.0 * std::numbers::pi / f;
    if (wavelen < high_freq_wavelen) continue;  // high frequencies stay as they are
    if (wavelen > low_freq_wavelen) {           // low frequencies are divided by the factor
      f = static_cast<float>(f / s.factor);
      continue;
    }
    // In between: interpolate smoothly between the scaled and the unscaled frequency.
    const double smooth = (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
    f = static_cast<float>((1.0 - smooth) * f / s.factor + smooth * f);
  }
  return inv;
}

ReferenceDecoder::ReferenceDecoder(const ModelConfig& config, const Weights& weights) : config_(config) {
  config_.validate(weights.source().empty() ? "model config" : weights.source());
  const ModelConfig& c = config_;
  namespace wn = weight_names;
  embed_ = checked(weights, wn::embed_tokens(), {c.vocab_size, c.dim});
  final_norm_ = checked(weights, wn::final_norm(), {c.dim});
  if (c.layer_norm) final_norm_bias_ = checked(weights, wn::final_norm_bias(), {c.dim});
  if (c.lm_head_bias) head_bias_ = checked(weights, wn::lm_head_bias(), {c.vocab_size});
  if (weights.contains(wn::lm_head()))
    head_ = checked(weights, wn::lm_head(), {c.vocab_size, c.dim});
  else if (c.tied_embeddings)
    head_ = embed_;
  else
    weights.get(wn::lm_head());  // throws "missing tensor lm_head.weight"
  if (c.ple_dim > 0) {
    ple_table_ = checked(weights, wn::embed_tokens_per_layer(), {c.ple_vocab, c.n_layers * c.ple_dim});
    ple_projection_ = checked(weights, wn::per_layer_model_projection(), {c.n_layers * c.ple_dim, c.dim});
    ple_projection_norm_ = checked(weights, wn::per_layer_projection_norm(), {c.ple_dim});
  }
  layers_.resize(static_cast<size_t>(c.n_layers));
  for (int64_t i = 0; i < c.n_layers; ++i) {
    Layer& l = layers_[i];
    l.head_dim = c.layer_head_dim(i);
    l.kv_heads = c.layer_kv_heads(i);
    l.ffn_dim = c.layer_ffn_dim(i);
    const int64_t q_dim = c.n_heads * l.head_dim, kv_dim = l.kv_heads * l.head_dim;
    auto get = [&](const char* suffix, const Shape& shape) { return checked(weights, wn::layer(i, suffix), shape); };
    l.input_norm = get("input_layernorm.weight", {c.dim});
    if (c.layer_norm) l.input_norm_bias = get("input_layernorm.bias", {c.dim});
    if (!c.parallel_blocks) {
      l.post_norm = get("post_attention_layernorm.weight", {c.dim});
      if (c.layer_norm) l.post_norm_bias = get("post_attention_layernorm.bias", {c.dim});
    }
    if (c.sandwich_norms) {
      l.pre_ffn_norm = get("pre_feedforward_layernorm.weight", {c.dim});
      l.post_ffn_norm = get("post_feedforward_layernorm.weight", {c.dim});
    }
    l.wq = get("self_attn.q_proj.weight", {q_dim, c.dim});
    if (c.layer_has_kv(i)) {
      l.wk = get("self_attn.k_proj.weight", {kv_dim, c.dim});
      if (!c.layer_values_from_keys(i)) l.wv = get("self_attn.v_proj.weight", {kv_dim, c.dim});
    }
    l.wo = get("self_attn.o_proj.weight", {c.dim, q_dim});
    if (c.qkv_bias) {
      l.bq = get("self_attn.q_proj.bias", {q_dim});
      l.bk = get("self_attn.k_proj.bias", {kv_dim});
      l.bv = get("self_attn.v_proj.bias", {kv_dim});
    }
    if (c.qk_norm) {
      l.q_norm = get("self_attn.q_norm.weight", {l.head_dim});
      if (c.layer_has_kv(i)) l.k_norm = get("self_attn.k_norm.weight", {l.head_dim});
    }
    if (c.gated_ffn) l.w_gate = get("mlp.gate_proj.weight", {l.ffn_dim, c.dim});
    l.w_up = get("mlp.up_proj.weight", {l.ffn_dim, c.dim});
    l.w_down = get("mlp.down_proj.weight", {c.dim, l.ffn_dim});
    if (c.mlp_bias) {
      l.b_up = get("mlp.up_proj.bias", {l.ffn_dim});
      l.b_down = get("mlp.down_proj.bias", {c.dim});
    }
    if (c.ple_dim > 0) {
      l.ple_gate = get("per_layer_input_gate.weight", {c.ple_dim, c.dim});
      l.ple_proj = get("per_layer_projection.weight", {c.dim, c.ple_dim});
      l.ple_norm = get("post_per_layer_input_norm.weight", {c.dim});
    }
    if (c.layer_scalars) l.scalar = get("layer_scalar", {1}).data<float>()[0];
  }
  inv_freq_ = rope_inv_freq(c);
  if (c.long_rope.enabled()) long_inv_freq_ = rope_inv_freq(c, c.long_rope.original_max_positions + 1);
  for (int64_t i = 0; i < c.n_layers; ++i)
    if (c.layer_uses_local_rope(i)) local_inv_freq_ = rope_inv_freq(c, 0, /*local=*/true);
}

void ReferenceDecoder::reset() {
  position_ = 0;
  for (Layer& l : layers_) {
    l.k_cache.clear();
    l.v_cache.clear();
  }
}

// HF rotate-half RoPE on `n_heads` consecutive head vectors at position `pos`: over the rotary
// dims r (all of the head unless partial), the pair (x[i], x[i + r/2]) rotates by angle
// pos * inv_freq[i]; longrope scales cos and sin by its attention factor, and switches to the long
// factors once the sequence passes the original context, as HF does for the tokens it then adds.
void ReferenceDecoder::apply_rope(float* vec, int64_t n_heads, int64_t d, int64_t pos, int64_t seq_len, bool local) const {
  const LongRope& lr = config_.long_rope;
  const std::vector<float>& inv = local                                                 ? local_inv_freq_
                                  : lr.enabled() && seq_len > lr.original_max_positions ? long_inv_freq_
                                                                                        : inv_freq_;
  const int64_t half = static_cast<int64_t>(inv.size());  // rotary dims / 2 (of this layer's kind)
  const float factor = lr.enabled() ? lr.attention_factor : 1.0f;
  for (int64_t i = 0; i < half; ++i) {
    const double angle = static_cast<double>(pos) * static_cast<double>(inv[i]);
    float cs = static_cast<float>(std::cos(angle)), sn = static_cast<float>(std::sin(angle));
    if (factor != 1.0f) {
      cs *= factor;
      sn *= factor;
    }
    for (int64_t h = 0; h < n_heads; ++h) {
      float* x = vec + h * d;
      const float a = x[i], b = x[i + half];
      x[i] = a * cs - b * sn;
      x[i + half] = b * cs + a * sn;
    }
  }
}

// Causal attention of the n new queries (already rotated) against the cache, which holds the
// keys/values of positions [0, position_ + n). Query head h reads kv head h / (n_heads / n_kv).
// Scores are soft-capped where the family caps them; a sliding layer's query at position p sees
// the keys (p - sliding_window, p].
void ReferenceDecoder::attention(const Layer& layer, const Layer& kv, bool slides, const std::vector<float>& q, int64_t n,
                                 std::vector<float>& out) const {
  const ModelConfig& c = config_;
  const int64_t d = layer.head_dim, kv_dim = layer.kv_heads * d, q_dim = c.n_heads * d;
  const int64_t group = c.n_heads / layer.kv_heads;
  const float scale = c.attention_scale();
  ThreadPool::global().parallel_for(n * c.n_heads, [&](int64_t begin, int64_t end) {
    std::vector<float> scores;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t t = item / c.n_heads, h = item % c.n_heads, kvh = h / group;
      const int64_t visible = position_ + t + 1;  // causal: keys 0 .. own position
      const int64_t first = slides ? std::max<int64_t>(0, visible - c.sliding_window) : 0;
      const float* qv = q.data() + t * q_dim + h * d;
      scores.resize(static_cast<size_t>(visible));
      float max_score = -INFINITY;
      const float cap = c.attn_logit_softcap;
      for (int64_t j = first; j < visible; ++j) {
        scores[j] = kernels::dot8_f32(qv, kv.k_cache.data() + j * kv_dim + kvh * d, d) * scale;
        if (cap > 0.0f) scores[j] = std::tanh(scores[j] / cap) * cap;
        max_score = std::max(max_score, scores[j]);
      }
      float sum = 0.0f;
      for (int64_t j = first; j < visible; ++j) {
        scores[j] = std::exp(scores[j] - max_score);
        sum += scores[j];
      }
      float* o = out.data() + t * q_dim + h * d;
      std::fill(o, o + d, 0.0f);
      for (int64_t j = first; j < visible; ++j) {
        const float p = scores[j] / sum;
        const float* vv = kv.v_cache.data() + j * kv_dim + kvh * d;
        for (int64_t e = 0; e < d; ++e) o[e] += p * vv[e];
      }
    }
  });
}

// (RMSNorm(embeds W^T / sqrt(dim)) per layer's slice + table[token] * sqrt(ple_dim)) / sqrt(2), as
// Gemma4TextModel's get_per_layer_inputs and project_per_layer_inputs.
std::vector<float> ReferenceDecoder::per_layer_inputs(std::span<const int32_t> tokens,
                                                      const std::vector<float>& embeds) const {
  const ModelConfig& c = config_;
  const int64_t n = static_cast<int64_t>(tokens.size()), width = c.n_layers * c.ple_dim;
  std::vector<float> proj(static_cast<size_t>(n * width));
  linear(embeds.data(), n, c.dim, ple_projection_, nullptr, proj.data());
  const auto projection_scale = static_cast<float>(std::pow(static_cast<double>(c.dim), -0.5));
  for (float& v : proj) v *= projection_scale;
  rms_norm(proj.data(), n * c.n_layers, c.ple_dim, ple_projection_norm_, c.norm_eps, proj.data());
  const float table_scale = static_cast<float>(std::sqrt(static_cast<double>(c.ple_dim)));
  const auto combine_scale = static_cast<float>(std::pow(2.0, -0.5));
  for (int64_t t = 0; t < n; ++t) {
    if (tokens[t] >= c.ple_vocab)
      throw_input_error("reference decoder: token id {} outside the per-layer vocabulary of {}", tokens[t], c.ple_vocab);
    const float* row = ple_table_.data<float>() + static_cast<int64_t>(tokens[t]) * width;
    for (int64_t e = 0; e < width; ++e) {
      float& v = proj[static_cast<size_t>(t * width + e)];
      v = (v + row[e] * table_scale) * combine_scale;
    }
  }
  return proj;
}

std::vector<float> ReferenceDecoder::run_layers(std::span<const int32_t> tokens) {
  const ModelConfig& c = config_;
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) throw_input_error("reference decoder: forward of an empty token list");
  if (position_ + n > max_context())
    throw_input_error("reference decoder: positions {}..{} exceed the context of {} tokens", position_,
                      position_ + n - 1, max_context());
  for (int32_t id : tokens)
    if (id < 0 || id >= c.vocab_size)
      throw_input_error("reference decoder: token id {} outside the vocabulary of {}", id, c.vocab_size);

  const int64_t dim = c.dim;
  int64_t q_max = 0, kv_max = 0, ffn_max = 0;  // the widest layer's sizes: buffers serve every layer
  for (const Layer& l : layers_) {
    q_max = std::max(q_max, c.n_heads * l.head_dim);
    kv_max = std::max(kv_max, l.kv_heads * l.head_dim);
    ffn_max = std::max(ffn_max, l.ffn_dim);
  }
  std::vector<float> x(n * dim), xn(n * dim), q(n * q_max), k(n * kv_max), v(n * kv_max);
  std::vector<float> attn(n * q_max), proj(n * dim), gate(n * ffn_max), up(n * ffn_max);
  for (int64_t t = 0; t < n; ++t)
    std::copy_n(embed_.data<float>() + static_cast<int64_t>(tokens[t]) * dim, dim, x.data() + t * dim);
  if (c.embedding_multiplier != 1.0f)
    for (float& e : x) e *= c.embedding_multiplier;
  const std::vector<float> ple = c.ple_dim > 0 ? per_layer_inputs(tokens, x) : std::vector<float>{};
  // residual + block output * residual_multiplier (granite; 1 elsewhere, where it is skipped).
  auto add_residual = [&](const std::vector<float>& out) {
    if (c.residual_multiplier == 1.0f) {
      for (int64_t i = 0; i < n * dim; ++i) x[i] += out[i];
    } else {
      for (int64_t i = 0; i < n * dim; ++i) x[i] += out[i] * c.residual_multiplier;
    }
  };

  for (Layer& l : layers_) {
    const int64_t li = &l - layers_.data();
    const int64_t d = l.head_dim, q_dim = c.n_heads * d, kv_dim = l.kv_heads * d, ffn = l.ffn_dim;
    norm(x.data(), n, dim, l.input_norm, l.input_norm_bias, xn.data());
    linear(xn.data(), n, dim, l.wq, c.qkv_bias ? &l.bq : nullptr, q.data());
    if (c.qk_norm)  // each head vector on its own (in place: rms_norm reads a row before writing it)
      rms_norm(q.data(), n * c.n_heads, d, l.q_norm, c.norm_eps, q.data());
    const bool rope = c.layer_uses_rope(li), local = c.layer_uses_local_rope(li);
    if (rope)
      for (int64_t t = 0; t < n; ++t) apply_rope(q.data() + t * q_dim, c.n_heads, d, position_ + t, position_ + n, local);
    if (c.layer_has_kv(li)) {
      linear(xn.data(), n, dim, l.wk, c.qkv_bias ? &l.bk : nullptr, k.data());
      // Values: their own projection, or the raw keys (gemma4's attention_k_eq_v), taken before
      // the keys' norm and rope.
      if (c.layer_values_from_keys(li)) std::copy_n(k.data(), n * kv_dim, v.data());
      else linear(xn.data(), n, dim, l.wv, c.qkv_bias ? &l.bv : nullptr, v.data());
      if (c.qk_norm) rms_norm(k.data(), n * l.kv_heads, d, l.k_norm, c.norm_eps, k.data());
      if (c.v_norm)  // weightless RMS norm over each value head
        for (int64_t r = 0; r < n * l.kv_heads; ++r) {
          float* row = v.data() + r * d;
          float ss = 0.0f;
          for (int64_t e = 0; e < d; ++e) ss += row[e] * row[e];
          const float scale = 1.0f / std::sqrt(ss / static_cast<float>(d) + c.norm_eps);
          for (int64_t e = 0; e < d; ++e) row[e] *= scale;
        }
      if (rope)
        for (int64_t t = 0; t < n; ++t) apply_rope(k.data() + t * kv_dim, l.kv_heads, d, position_ + t, position_ + n, local);
      l.k_cache.insert(l.k_cache.end(), k.begin(), k.begin() + n * kv_dim);
      l.v_cache.insert(l.v_cache.end(), v.begin(), v.begin() + n * kv_dim);
    }
    attention(l, layers_[static_cast<size_t>(c.kv_source(li))], c.layer_slides(li), q, n, attn);
    linear(attn.data(), n, q_dim, l.wo, nullptr, proj.data());
    if (c.sandwich_norms) rms_norm(proj.data(), n, dim, l.post_norm, c.norm_eps, proj.data());
    // Parallel blocks (CodeGen): the MLP reads the same normed input, both outputs add at the end.
    std::vector<float> attn_out;
    if (c.parallel_blocks) attn_out = proj;
    else add_residual(proj);

    if (!c.parallel_blocks)
      norm(x.data(), n, dim, c.sandwich_norms ? l.pre_ffn_norm : l.post_norm, l.post_norm_bias, xn.data());
    linear(xn.data(), n, dim, l.w_up, c.mlp_bias ? &l.b_up : nullptr, up.data());
    auto activate = [&](float* p, int64_t count) {
      if (c.ffn_activation == FfnActivation::kGeluTanh) kernels::scalar::gelu_tanh(p, count);
      else kernels::scalar::silu(p, count);
    };
    float* hidden = up.data();
    if (c.gated_ffn) {  // SwiGLU: silu(gate) * up; GeGLU: gelu_tanh(gate) * up.
      linear(xn.data(), n, dim, l.w_gate, nullptr, gate.data());
      activate(gate.data(), n * ffn);
      kernels::scalar::mul(gate.data(), up.data(), n * ffn, gate.data());
      hidden = gate.data();
    } else {  // down(act(up(x)))
      activate(up.data(), n * ffn);
    }
    linear(hidden, n, ffn, l.w_down, c.mlp_bias ? &l.b_down : nullptr, proj.data());
    if (c.sandwich_norms) rms_norm(proj.data(), n, dim, l.post_ffn_norm, c.norm_eps, proj.data());
    if (c.parallel_blocks)  // attn + mlp + residual, in transformers' order
      for (int64_t i = 0; i < n * dim; ++i) x[i] = (attn_out[i] + proj[i]) + x[i];
    else
      add_residual(proj);
    if (c.ple_dim > 0) {  // x + norm(proj(gelu(gate(x)) * per-layer input))
      const int64_t P = c.ple_dim;
      std::vector<float> g(static_cast<size_t>(n * P));
      linear(x.data(), n, dim, l.ple_gate, nullptr, g.data());
      activate(g.data(), n * P);
      for (int64_t t = 0; t < n; ++t)
        for (int64_t e = 0; e < P; ++e) g[static_cast<size_t>(t * P + e)] *= ple[static_cast<size_t>((t * c.n_layers + li) * P + e)];
      linear(g.data(), n, P, l.ple_proj, nullptr, proj.data());
      rms_norm(proj.data(), n, dim, l.ple_norm, c.norm_eps, proj.data());
      for (int64_t i = 0; i < n * dim; ++i) x[i] += proj[i];
    }
    if (c.layer_scalars)
      for (float& e : x) e *= l.scalar;
  }
  position_ += n;
  norm(x.data(), n, dim, final_norm_, final_norm_bias_, xn.data());
  return xn;
}

void ReferenceDecoder::norm(const float* in, int64_t n, int64_t width, const Tensor& weight, const Tensor& bias,
                            float* out) const {
  if (config_.layer_norm)
    kernels::scalar::layer_norm(in, n, width, weight.data<float>(), bias.data<float>(), config_.norm_eps, out);
  else
    rms_norm(in, n, width, weight, config_.norm_eps, out);
}

void ReferenceDecoder::head(const float* h, int64_t n, float* logits) const {
  linear(h, n, config_.dim, head_, config_.lm_head_bias ? &head_bias_ : nullptr, logits);
}

// Granite divides the logits by logits_scaling (a division, as transformers does it).
// Gemma 2 soft-caps them: cap * tanh(logits / cap).
void ReferenceDecoder::scale_logits(std::vector<float>& logits) const {
  if (config_.logits_scaling != 1.0f)
    for (float& v : logits) v /= config_.logits_scaling;
  if (const float cap = config_.final_logit_softcap; cap > 0.0f)
    for (float& v : logits) v = std::tanh(v / cap) * cap;
}

std::vector<float> ReferenceDecoder::forward(std::span<const int32_t> tokens) {
  const std::vector<float> h = run_layers(tokens);
  const int64_t n = static_cast<int64_t>(tokens.size());
  std::vector<float> logits(n * config_.vocab_size);
  head(h.data(), n, logits.data());
  scale_logits(logits);
  return logits;
}

std::vector<float> ReferenceDecoder::forward_last(std::span<const int32_t> tokens) {
  const std::vector<float> h = run_layers(tokens);
  std::vector<float> logits(config_.vocab_size);
  head(h.data() + (static_cast<int64_t>(tokens.size()) - 1) * config_.dim, 1, logits.data());
  scale_logits(logits);
  return logits;
}

}  // namespace genai
