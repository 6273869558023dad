#include "graph/decoder_graphs.h"

#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "graph/passes.h"
#include "model/reference_decoder.h"

namespace genai::graph {
namespace {

void check_options(const ModelConfig& c, const DecoderGraphOptions& o) {
  if (o.max_context_len < 2) throw_input_error("--max_context_len must be at least 2, got {}", o.max_context_len);
  if (o.mode == ModelMode::kHybrid) {
    if (o.prefill_ar_len < 1) throw_input_error("--prefill_ar_len must be positive, got {}", o.prefill_ar_len);
    if (o.prefill_ar_len > o.max_context_len)
      throw_input_error("--prefill_ar_len ({}) must not exceed --max_context_len ({}) in hybrid mode", o.prefill_ar_len,
                        o.max_context_len);
  }
  if (o.decode_ar_len < 1 || o.decode_ar_len >= o.max_context_len)
    throw_input_error("the decode AR length {} (--model_mode lookahead: next_pow2((--window + --gcap) * (--ngram - 1))) "
                      "must be in [1, --max_context_len {})",
                      o.decode_ar_len, o.max_context_len);
  c.validate("model config");
  // Past the window, the sliding layers' mask (build_decoder_graph) takes the new tokens' own
  // columns as visible: true while a chunk is no longer than the window, or has no cache before it.
  const bool prefill_has_cache = o.mode == ModelMode::kHybrid && o.prefill_ar_len < o.max_context_len;
  if (windowed_layers(c, o.max_context_len) && prefill_has_cache && o.prefill_ar_len > c.sliding_window)
    throw_input_error("--prefill_ar_len {} exceeds the model's sliding window of {} tokens with --max_context_len {} "
                      "(valid: at most {}, or equal to --max_context_len)",
                      o.prefill_ar_len, c.sliding_window, o.max_context_len, c.sliding_window);
  if (windowed_layers(c, o.max_context_len) && o.decode_ar_len > c.sliding_window)
    throw_input_error("the lookahead decode AR length {} exceeds the model's sliding window of {} tokens (--window, "
                      "--gcap, --ngram make it smaller)",
                      o.decode_ar_len, c.sliding_window);
}

}  // namespace

bool windowed_layers(const ModelConfig& c, int64_t max_context_len) {
  for (int64_t l = 0; l < c.n_layers; ++l)
    if (c.layer_slides(l) && max_context_len > c.sliding_window) return true;
  return false;
}

std::string_view model_mode_name(ModelMode m) { return m == ModelMode::kKv ? "kv" : "hybrid"; }

ModelMode model_mode_from_name(std::string_view name, std::string_view option) {
  if (name == "kv") return ModelMode::kKv;
  if (name == "hybrid") return ModelMode::kHybrid;
  throw_input_error("{}: unknown model mode '{}' (valid: kv, hybrid)", option, name);
}

std::pair<Tensor, Tensor> rope_tables(const ModelConfig& config, int64_t max_context_len, bool local) {
  // A static graph picks longrope's factors once, for the context it is built for (as llama.cpp
  // does by its context size; HF switches per sequence length).
  const std::vector<float> inv_freq = rope_inv_freq(config, max_context_len, local);
  const int64_t half = static_cast<int64_t>(inv_freq.size()), hd = 2 * half;  // the rotary width of this kind
  const float factor = config.long_rope.enabled() ? config.long_rope.attention_factor : 1.0f;
  Tensor cos = Tensor::zeros(DType::kF32, {max_context_len, hd});
  Tensor sin = Tensor::zeros(DType::kF32, {max_context_len, hd});
  for (int64_t p = 0; p < max_context_len; ++p)
    for (int64_t i = 0; i < half; ++i) {
      // As HF: the angle is a float32 product, cos/sin of it rounded to float32.
      const float angle = static_cast<float>(p) * inv_freq[i];
      const float c = static_cast<float>(std::cos(static_cast<double>(angle))) * factor;
      const float s = static_cast<float>(std::sin(static_cast<double>(angle))) * factor;
      cos.mutable_data<float>()[p * hd + i] = cos.mutable_data<float>()[p * hd + i + half] = c;
      sin.mutable_data<float>()[p * hd + i] = sin.mutable_data<float>()[p * hd + i + half] = s;
    }
  return {std::move(cos), std::move(sin)};
}

std::shared_ptr<Graph> build_tok_embedding_graph(std::shared_ptr<const Weights> weights, std::string name, int64_t ar) {
  if (ar < 1) throw_input_error("graph {}: AR length {} must be positive", name, ar);
  auto g = std::make_shared<Graph>(std::move(name), std::move(weights));
  const ValueId tokens = g->add_input("tokens", DType::kI32, {1, ar});
  g->add_output(std::string(kInputsEmbeds),
                g->add_op(OpKind::kGather, {g->add_weight(weight_names::embed_tokens()), tokens}, "embed.out"));
  default_pipeline().run(*g);
  return g;
}

std::shared_ptr<Graph> build_decoder_graph(const ModelConfig& c, std::shared_ptr<const Weights> weights, std::string name,
                                           int64_t ar, int64_t CL, bool embeds_input) {
  if (ar < 1 || ar > CL) throw_input_error("graph {}: AR length {} outside [1, {}]", name, ar, CL);
  if (embeds_input && c.ple_dim > 0)
    throw_input_error("graph {}: per-layer embeddings (gemma4) read the tokens themselves; separate embedding graphs "
                      "are not supported for this model", name);
  const std::shared_ptr<const Weights> weight_values = weights;
  auto g = std::make_shared<Graph>(std::move(name), std::move(weights));
  const int64_t L = c.n_layers, H = c.n_heads, KVL = c.kv_layers();
  const int64_t cache_len = CL - ar;
  namespace wn = weight_names;

  const ValueId tokens = embeds_input ? g->add_input(std::string(kInputsEmbeds), DType::kF32, {1, ar, c.dim})
                                      : g->add_input("tokens", DType::kI32, {1, ar});
  const ValueId mask = g->add_input("atten_mask", DType::kF32, {1, 1, ar, CL});
  const ValueId pos = g->add_input("input_pos", DType::kI32, {1, ar});
  // Cache inputs and new-entry outputs for the layers with their own keys and values (all but
  // gemma4's shared layers), each in its layer's KV heads and head size.
  std::vector<ValueId> k_cache(L, -1), v_cache(L, -1);
  if (cache_len > 0) {
    for (int64_t l = 0; l < KVL; ++l)
      k_cache[l] = g->add_input(fmt::format("k_cache_{}", l), DType::kF32, {1, c.layer_kv_heads(l), c.layer_head_dim(l), cache_len});
    for (int64_t l = 0; l < KVL; ++l)
      v_cache[l] = g->add_input(fmt::format("v_cache_{}", l), DType::kF32, {1, c.layer_kv_heads(l), cache_len, c.layer_head_dim(l)});
  }

  auto [cos_t, sin_t] = rope_tables(c, CL);
  const ValueId cos_table = g->add_constant("rope.cos_table", std::make_shared<const Tensor>(std::move(cos_t)));
  const ValueId sin_table = g->add_constant("rope.sin_table", std::make_shared<const Tensor>(std::move(sin_t)));
  auto scalar = [&](const char* name, float value) {
    Tensor t = Tensor::zeros(DType::kF32, {1});
    t.mutable_data<float>()[0] = value;
    return g->add_constant(name, std::make_shared<const Tensor>(std::move(t)));
  };
  const ValueId scale = scalar("attn.scale", c.attention_scale());
  const ValueId residual_scale = c.residual_multiplier != 1.0f ? scalar("residual.scale", c.residual_multiplier) : -1;

  const ValueId cos = g->add_op(OpKind::kGather, {cos_table, pos}, "rope.cos");
  const ValueId sin = g->add_op(OpKind::kGather, {sin_table, pos}, "rope.sin");
  // Gemma 3's sliding layers rotate with their own base: a second pair of tables.
  ValueId local_cos = -1, local_sin = -1;
  for (int64_t l = 0; l < c.n_layers && local_cos < 0; ++l) {
    if (!c.layer_uses_local_rope(l)) continue;
    auto [lc, ls] = rope_tables(c, CL, /*local=*/true);
    local_cos = g->add_op(OpKind::kGather, {g->add_constant("rope.local_cos_table", std::make_shared<const Tensor>(std::move(lc))), pos},
                          "rope.local_cos");
    local_sin = g->add_op(OpKind::kGather, {g->add_constant("rope.local_sin_table", std::make_shared<const Tensor>(std::move(ls))), pos},
                          "rope.local_sin");
  }
  const ValueId mask5 = g->add_op(OpKind::kReshape, {mask}, "atten_mask.groups", {{"shape", ints({1, 1, 1, ar, CL})}});
  // Sliding layers once the context passes their window: the smart-mask cache holds position c in
  // column c, so a query at position p must not see the columns c <= p - W. A constant table
  // [position, column] of 0 / -255 gathered by input_pos adds those to the mask (a sum of -510
  // saturates at the mask encoding's -255). The new tokens' own columns (the last ar) stay
  // visible, as they are for chunks no longer than the window (check_options); without a cache
  // (calibration, ar == CL) positions start at 0, so column c is position c there too.
  ValueId window_mask5 = -1;
  if (windowed_layers(c, CL)) {
    Tensor table = Tensor::zeros(DType::kF32, {CL, CL});
    for (int64_t p = 0; p < CL; ++p)
      for (int64_t col = 0; col < CL && col <= p - c.sliding_window; ++col)
        if (cache_len == 0 || col < cache_len) table.mutable_data<float>()[p * CL + col] = kMaskedValue;
    const ValueId part = g->add_op(
        OpKind::kGather, {g->add_constant("atten_mask.window_table", std::make_shared<const Tensor>(std::move(table))), pos},
        "atten_mask.window_part");
    const ValueId part4 = g->add_op(OpKind::kReshape, {part}, "atten_mask.window_part.rows", {{"shape", ints({1, 1, ar, CL})}});
    const ValueId windowed = g->add_op(OpKind::kAdd, {mask, part4}, "atten_mask.window");
    window_mask5 = g->add_op(OpKind::kReshape, {windowed}, "atten_mask.window.groups", {{"shape", ints({1, 1, 1, ar, CL})}});
  }
  ValueId h = embeds_input ? tokens : g->add_op(OpKind::kGather, {g->add_weight(wn::embed_tokens()), tokens}, "embed.out");
  if (c.embedding_multiplier != 1.0f)
    h = g->add_op(OpKind::kMul, {h, scalar("embed.scale", c.embedding_multiplier)}, "embed.scaled");
  // Gemma 4's per-layer inputs [1, ar, L, P]: (RMSNorm(h W^T / sqrt(dim)) + table[tokens] *
  // sqrt(P)) / sqrt(2), each layer reading its slice.
  const Attrs norm_attrs{{"eps", static_cast<double>(c.norm_eps)}};
  ValueId ple = -1;
  if (c.ple_dim > 0) {
    const int64_t P = c.ple_dim;
    const ValueId proj = g->add_op(OpKind::kLinear, {h, g->add_weight(wn::per_layer_model_projection())}, "ple.proj");
    const ValueId scaled = g->add_op(
        OpKind::kMul, {proj, scalar("ple.proj.scale", static_cast<float>(std::pow(static_cast<double>(c.dim), -0.5)))},
        "ple.proj.scaled");
    const ValueId split = g->add_op(OpKind::kReshape, {scaled}, "ple.proj.layers", {{"shape", ints({1, ar, L, P})}});
    const ValueId normed =
        g->add_op(OpKind::kRmsNorm, {split, g->add_weight(wn::per_layer_projection_norm())}, "ple.proj.norm", norm_attrs);
    const ValueId rows = g->add_op(OpKind::kGather, {g->add_weight(wn::embed_tokens_per_layer()), tokens}, "ple.embed");
    const ValueId rows_scaled = g->add_op(
        OpKind::kMul, {rows, scalar("ple.embed.scale", static_cast<float>(std::sqrt(static_cast<double>(P))))},
        "ple.embed.scaled");
    const ValueId rows4 = g->add_op(OpKind::kReshape, {rows_scaled}, "ple.embed.layers", {{"shape", ints({1, ar, L, P})}});
    const ValueId sum = g->add_op(OpKind::kAdd, {normed, rows4}, "ple.sum");
    ple = g->add_op(OpKind::kMul, {sum, scalar("ple.scale", static_cast<float>(std::pow(2.0, -0.5)))}, "ple.inputs");
  }
  // x -> cap * tanh(x / cap) (Gemma 2's soft-capping).
  auto softcap = [&](ValueId x, float cap, const std::string& name) {
    const ValueId in = g->add_op(OpKind::kMul, {x, scalar((name + ".inv_cap").c_str(), 1.0f / cap)}, name + ".scaled");
    const ValueId t = g->add_op(OpKind::kTanh, {in}, name + ".tanh");
    return g->add_op(OpKind::kMul, {t, scalar((name + ".cap").c_str(), cap)}, name);
  };
  // residual + out (times residual_multiplier first where the family has one).
  auto residual = [&](ValueId base, ValueId out, const std::string& name) {
    if (residual_scale >= 0) out = g->add_op(OpKind::kMul, {out, residual_scale}, name + ".scaled");
    return g->add_op(OpKind::kAdd, {base, out}, name);
  };
  // The family's norm over the last axis: RMSNorm, or LayerNorm with the weight's bias beside it.
  auto norm = [&](ValueId x, const std::string& weight, const std::string& name) {
    if (!c.layer_norm) return g->add_op(OpKind::kRmsNorm, {x, g->add_weight(weight)}, name, norm_attrs);
    return g->add_op(OpKind::kLayerNorm, {x, g->add_weight(weight), g->add_weight(wn::bias_of(weight))}, name, norm_attrs);
  };

  std::vector<ValueId> k_out(L, -1), v_out(L, -1), k_all_of(L, -1), v_all_of(L, -1);
  for (int64_t l = 0; l < L; ++l) {
    const std::string p = fmt::format("layers.{}.", l);
    const int64_t hd = c.layer_head_dim(l), KV = c.layer_kv_heads(l), G = H / KV;
    const bool own_kv = c.layer_has_kv(l);
    auto w = [&](const char* suffix) { return g->add_weight(wn::layer(l, suffix)); };
    auto proj = [&](const char* which, ValueId x) {
      std::vector<ValueId> operands{x, w(fmt::format("self_attn.{}_proj.weight", which).c_str())};
      if (c.qkv_bias) operands.push_back(w(fmt::format("self_attn.{}_proj.bias", which).c_str()));
      return g->add_op(OpKind::kLinear, operands, fmt::format("{}attn.{}_proj.out", p, which));
    };
    const ValueId x = norm(h, wn::layer(l, "input_layernorm.weight"), p + "input_norm.out");
    const ValueId q = proj("q", x);

    // [1, ar, n * hd] -> [1, n, ar, hd]; normalised per head first where the family does (q and k
    // by their weights; gemma4's values by a weightless norm, a constant of ones).
    auto heads = [&](ValueId t, const char* which, int64_t n, ValueId norm_weight = -1) {
      ValueId split =
          g->add_op(OpKind::kReshape, {t}, fmt::format("{}attn.{}.split", p, which), {{"shape", ints({1, ar, n, hd})}});
      if (norm_weight >= 0)
        split = g->add_op(OpKind::kRmsNorm, {split, norm_weight}, fmt::format("{}attn.{}.norm", p, which), norm_attrs);
      return g->add_op(OpKind::kTranspose, {split}, fmt::format("{}attn.{}.heads", p, which), {{"perm", ints({0, 2, 1, 3})}});
    };
    auto qk_norm = [&](const char* which) {
      return c.qk_norm ? w(fmt::format("self_attn.{}_norm.weight", which).c_str()) : ValueId{-1};
    };
    // Rope on the leading rotary dims of each head; the rest passes through (partial rotary).
    const bool local = c.layer_uses_local_rope(l);
    const int64_t rd = local ? c.rotary_dims() : c.global_rotary_dims();
    const ValueId lcos = local ? local_cos : cos, lsin = local ? local_sin : sin;
    auto rope = [&](ValueId x, const char* which) {
      const std::string n = fmt::format("{}attn.{}", p, which);
      if (rd == hd) return g->add_op(OpKind::kRope, {x, lcos, lsin}, n + ".rope");
      const ValueId rot = g->add_op(OpKind::kSlice, {x}, n + ".rot",
                                    {{"axis", int64_t{3}}, {"start", int64_t{0}}, {"end", rd}});
      const ValueId pass = g->add_op(OpKind::kSlice, {x}, n + ".pass",
                                     {{"axis", int64_t{3}}, {"start", rd}, {"end", hd}});
      const ValueId rotated = g->add_op(OpKind::kRope, {rot, lcos, lsin}, n + ".rope");
      return g->add_op(OpKind::kConcat, {rotated, pass}, n + ".rope_all", {{"axis", int64_t{3}}});
    };
    ValueId q_rope = heads(q, "q", H, qk_norm("q"));
    if (c.layer_uses_rope(l)) q_rope = rope(q_rope, "q");
    if (own_kv) {
      const ValueId k = proj("k", x);
      // Values: their own projection, or the raw keys (gemma4's attention_k_eq_v).
      const ValueId v = c.layer_values_from_keys(l) ? k : proj("v", x);
      ValueId k_rope = heads(k, "k", KV, qk_norm("k"));
      if (c.layer_uses_rope(l)) k_rope = rope(k_rope, "k");
      ValueId v_norm = -1;
      if (c.v_norm) {
        Tensor ones = Tensor::zeros(DType::kF32, {hd});
        for (int64_t i = 0; i < hd; ++i) ones.mutable_data<float>()[i] = 1.0f;
        v_norm = g->add_constant(p + "attn.v.norm_weight", std::make_shared<const Tensor>(std::move(ones)));
      }
      // New K is emitted transposed [1, KV, hd, ar], as the cache stores it (q·kᵀ needs no transpose).
      k_out[l] = g->add_op(OpKind::kTranspose, {k_rope}, p + "attn.k.new", {{"perm", ints({0, 1, 3, 2})}});
      v_out[l] = heads(v, "v", KV, v_norm);  // [1, KV, ar, hd]
      k_all_of[l] = k_out[l];
      v_all_of[l] = v_out[l];
      if (cache_len > 0) {
        k_all_of[l] = g->add_op(OpKind::kConcat, {k_cache[l], k_out[l]}, p + "attn.k.all", {{"axis", int64_t{3}}});
        v_all_of[l] = g->add_op(OpKind::kConcat, {v_cache[l], v_out[l]}, p + "attn.v.all", {{"axis", int64_t{2}}});
      }
    }
    // A shared layer attends over the keys and values of the layer it shares (gemma4).
    const ValueId k_all = k_all_of[c.kv_source(l)], v_all = v_all_of[c.kv_source(l)];
    // Grouped-query attention: query head h = kv * G + g reads kv head kv (broadcast over G).
    const ValueId q5 = g->add_op(OpKind::kReshape, {q_rope}, p + "attn.q.groups", {{"shape", ints({1, KV, G, ar, hd})}});
    const ValueId k5 = g->add_op(OpKind::kReshape, {k_all}, p + "attn.k.groups", {{"shape", ints({1, KV, 1, hd, CL})}});
    const ValueId v5 = g->add_op(OpKind::kReshape, {v_all}, p + "attn.v.groups", {{"shape", ints({1, KV, 1, CL, hd})}});
    const ValueId qk = g->add_op(OpKind::kMatMul, {q5, k5}, p + "attn.qk");
    ValueId scores = g->add_op(OpKind::kMul, {qk, scale}, p + "attn.scores");
    if (c.attn_logit_softcap > 0.0f) scores = softcap(scores, c.attn_logit_softcap, p + "attn.capped_scores");
    const ValueId layer_mask = c.layer_slides(l) && window_mask5 >= 0 ? window_mask5 : mask5;
    const ValueId masked = g->add_op(OpKind::kAdd, {scores, layer_mask}, p + "attn.masked_scores");
    const ValueId probs = g->add_op(OpKind::kSoftmax, {masked}, p + "attn.probs");
    const ValueId ctx = g->add_op(OpKind::kMatMul, {probs, v5}, p + "attn.context");
    const ValueId ctx4 = g->add_op(OpKind::kReshape, {ctx}, p + "attn.context.heads", {{"shape", ints({1, H, ar, hd})}});
    const ValueId ctxt = g->add_op(OpKind::kTranspose, {ctx4}, p + "attn.context.tokens", {{"perm", ints({0, 2, 1, 3})}});
    const ValueId flat = g->add_op(OpKind::kReshape, {ctxt}, p + "attn.context.flat", {{"shape", ints({1, ar, H * hd})}});
    ValueId o = g->add_op(OpKind::kLinear, {flat, w("self_attn.o_proj.weight")}, p + "attn.o_proj.out");
    if (c.sandwich_norms)
      o = g->add_op(OpKind::kRmsNorm, {o, w("post_attention_layernorm.weight")}, p + "attn.post_norm.out", norm_attrs);
    // Parallel blocks (CodeGen): the MLP reads the attention's input norm, and attention and MLP
    // outputs add onto the residual together.
    const ValueId h1 = c.parallel_blocks ? h : residual(h, o, p + "attn.residual");
    const ValueId x2 =
        c.parallel_blocks ? x
        : c.sandwich_norms
            ? g->add_op(OpKind::kRmsNorm, {h1, w("pre_feedforward_layernorm.weight")}, p + "pre_ffn_norm.out", norm_attrs)
            : norm(h1, wn::layer(l, "post_attention_layernorm.weight"), p + "post_attention_norm.out");
    auto mlp_proj = [&](const char* which, ValueId in) {
      std::vector<ValueId> operands{in, w(fmt::format("mlp.{}_proj.weight", which).c_str())};
      if (c.mlp_bias && std::string_view(which) != "gate") operands.push_back(w(fmt::format("mlp.{}_proj.bias", which).c_str()));
      return g->add_op(OpKind::kLinear, operands, fmt::format("{}mlp.{}_proj.out", p, which));
    };
    const OpKind act_kind = c.ffn_activation == FfnActivation::kGeluTanh ? OpKind::kGeluTanh : OpKind::kSilu;
    ValueId hidden = -1;
    if (c.gated_ffn) {
      const ValueId act = g->add_op(act_kind, {mlp_proj("gate", x2)}, p + "mlp.act");
      hidden = g->add_op(OpKind::kMul, {act, mlp_proj("up", x2)}, p + "mlp.gated");
    } else {  // down(act(up(x)))
      hidden = g->add_op(act_kind, {mlp_proj("up", x2)}, p + "mlp.act");
    }
    ValueId down = mlp_proj("down", hidden);
    if (c.sandwich_norms)
      down = g->add_op(OpKind::kRmsNorm, {down, w("post_feedforward_layernorm.weight")}, p + "mlp.post_norm.out",
                       norm_attrs);
    if (c.parallel_blocks) down = g->add_op(OpKind::kAdd, {o, down}, p + "attn_mlp.sum");
    h = residual(h1, down, p + "mlp.residual");
    if (ple >= 0) {  // h + norm(proj(gelu(gate(h)) * this layer's per-layer input))
      const ValueId slice = g->add_op(OpKind::kSlice, {ple}, p + "ple.slice",
                                      {{"axis", int64_t{2}}, {"start", l}, {"end", l + 1}});
      const ValueId input = g->add_op(OpKind::kReshape, {slice}, p + "ple.input", {{"shape", ints({1, ar, c.ple_dim})}});
      const ValueId gate = g->add_op(act_kind, {g->add_op(OpKind::kLinear, {h, w("per_layer_input_gate.weight")}, p + "ple.gate")},
                                     p + "ple.act");
      const ValueId gated = g->add_op(OpKind::kMul, {gate, input}, p + "ple.gated");
      const ValueId out = g->add_op(OpKind::kLinear, {gated, w("per_layer_projection.weight")}, p + "ple.proj");
      const ValueId normed = g->add_op(OpKind::kRmsNorm, {out, w("post_per_layer_input_norm.weight")}, p + "ple.norm", norm_attrs);
      h = g->add_op(OpKind::kAdd, {h, normed}, p + "ple.residual");
    }
    if (c.layer_scalars) {  // a constant of the checkpoint's scalar (the programs fold it in)
      const Tensor s = weight_values->get(wn::layer(l, "layer_scalar")).to_f32();
      if (s.numel() != 1) throw_input_error("graph: {} holds {} values, expected 1", wn::layer(l, "layer_scalar"), s.numel());
      h = g->add_op(OpKind::kMul, {h, scalar((p + "scalar").c_str(), s.data<float>()[0])}, p + "scaled");
    }
  }
  const ValueId normed = norm(h, wn::final_norm(), "norm.out");
  std::vector<ValueId> head{normed, g->add_weight(c.tied_embeddings ? wn::embed_tokens() : wn::lm_head())};
  if (c.lm_head_bias) head.push_back(g->add_weight(wn::lm_head_bias()));
  ValueId logits = g->add_op(OpKind::kLinear, head, "lm_head.out");
  if (c.logits_scaling != 1.0f)
    logits = g->add_op(OpKind::kMul, {logits, scalar("logits.scale", 1.0f / c.logits_scaling)}, "logits.scaled");
  if (c.final_logit_softcap > 0.0f) logits = softcap(logits, c.final_logit_softcap, "logits.capped");
  g->add_output("logits", logits);
  for (int64_t l = 0; l < KVL; ++l) g->add_output(fmt::format("k_out_{}", l), k_out[l]);
  for (int64_t l = 0; l < KVL; ++l) g->add_output(fmt::format("v_out_{}", l), v_out[l]);

  default_pipeline().run(*g);
  return g;
}

GraphMap build_decoder_graphs(std::shared_ptr<const Model> model, const DecoderGraphOptions& options) {
  check_options(model->config, options);
  // Aliasing pointer: every graph keeps the model alive and shares its one copy of the weights.
  std::shared_ptr<const Weights> weights(model, &model->weights);
  const ModelConfig& c = model->config;
  const int64_t CL = options.max_context_len;
  std::vector<std::pair<std::string, int64_t>> wanted{{std::string(kKvForward), options.decode_ar_len}};
  if (options.mode == ModelMode::kHybrid) wanted.emplace_back(std::string(kPrefillForward), options.prefill_ar_len);
  if (options.decode_ar_len > 1) wanted.emplace_back(std::string(kKvForwardAr1), 1);
  if (options.calibration) wanted.emplace_back(std::string(kCalibration), CL);
  GraphMap graphs;
  for (const auto& [name, ar] : wanted) {
    graphs[name] = build_decoder_graph(c, weights, name, ar, CL, options.separate_embedding);
    if (options.separate_embedding) {
      const std::string emb = std::string(kTokEmbeddingPrefix) + name;
      graphs[emb] = build_tok_embedding_graph(weights, emb, ar);
    }
  }
  return graphs;
}

GraphMap build_decoder_graphs(const Model& model, const DecoderGraphOptions& options) {
  // Copying a Model copies tensor handles, not tensor data (storage is reference-counted).
  return build_decoder_graphs(std::make_shared<const Model>(model), options);
}

}  // namespace genai::graph
