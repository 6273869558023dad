// build_decoder_graph (decoder_graphs.h): one static decoder graph, built as the family's blocks
// (inputs and tables, embedding, per layer an attention and a feed-forward block, the head).
// The blocks add their values and ops in a fixed order, so identical models give identical
// graphs, encodings and programs.
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "graph/decoder_graphs.h"
#include "graph/passes.h"

namespace genai::graph {
namespace {

namespace wn = weight_names;

class DecoderGraphBuilder {
 public:
  DecoderGraphBuilder(const ModelConfig& c, std::shared_ptr<const Weights> weights, std::string name, int64_t ar,
                      int64_t CL, bool embeds_input)
      : c_(c), weights_(weights), g_(std::make_shared<Graph>(std::move(name), std::move(weights))), ar_(ar), CL_(CL),
        embeds_input_(embeds_input), norm_attrs_{{"eps", static_cast<double>(c.norm_eps)}} {}

  std::shared_ptr<Graph> build() {
    add_inputs();
    add_rope_and_scales();
    add_masks();
    embed();
    if (c_.ple_dim > 0) add_per_layer_inputs();
    k_out_.assign(c_.n_layers, -1);
    v_out_.assign(c_.n_layers, -1);
    k_all_.assign(c_.n_layers, -1);
    v_all_.assign(c_.n_layers, -1);
    for (int64_t l = 0; l < c_.n_layers; ++l) add_layer(l);
    add_head();
    default_pipeline().run(*g_);
    return g_;
  }

 private:
  int64_t cache_len() const { return CL_ - ar_; }
  std::string prefix(int64_t l) const { return fmt::format("layers.{}.", l); }
  ValueId layer_weight(int64_t l, const std::string& suffix) { return g_->add_weight(wn::layer(l, suffix.c_str())); }

  ValueId scalar(const std::string& name, float value) {
    Tensor t = Tensor::zeros(DType::kF32, {1});
    t.mutable_data<float>()[0] = value;
    return g_->add_constant(name, std::make_shared<const Tensor>(std::move(t)));
  }
  // x -> cap * tanh(x / cap) (Gemma 2's soft-capping).
  ValueId softcap(ValueId x, float cap, const std::string& name) {
    const ValueId in = g_->add_op(OpKind::kMul, {x, scalar(name + ".inv_cap", 1.0f / cap)}, name + ".scaled");
    const ValueId t = g_->add_op(OpKind::kTanh, {in}, name + ".tanh");
    return g_->add_op(OpKind::kMul, {t, scalar(name + ".cap", cap)}, name);
  }
  // residual + out (times residual_multiplier first where the family has one).
  ValueId residual(ValueId base, ValueId out, const std::string& name) {
    if (residual_scale_ >= 0) out = g_->add_op(OpKind::kMul, {out, residual_scale_}, name + ".scaled");
    return g_->add_op(OpKind::kAdd, {base, out}, name);
  }
  // The family's norm over the last axis: RMSNorm, or LayerNorm with the weight's bias beside it.
  ValueId norm(ValueId x, const std::string& weight, const std::string& name) {
    if (!c_.layer_norm) return g_->add_op(OpKind::kRmsNorm, {x, g_->add_weight(weight)}, name, norm_attrs_);
    return g_->add_op(OpKind::kLayerNorm, {x, g_->add_weight(weight), g_->add_weight(wn::bias_of(weight))}, name,
                      norm_attrs_);
  }

  // Tokens (or embeddings), mask, positions; cache inputs for the layers with their own keys and
  // values (all but gemma4's shared layers), each in its layer's KV heads and head size.
  void add_inputs() {
    tokens_ = embeds_input_ ? g_->add_input(std::string(kInputsEmbeds), DType::kF32, {1, ar_, c_.dim})
                            : g_->add_input("tokens", DType::kI32, {1, ar_});
    mask_ = g_->add_input("atten_mask", DType::kF32, {1, 1, ar_, CL_});
    pos_ = g_->add_input("input_pos", DType::kI32, {1, ar_});
    k_cache_.assign(c_.n_layers, -1);
    v_cache_.assign(c_.n_layers, -1);
    if (cache_len() <= 0) return;
    for (int64_t l = 0; l < c_.kv_layers(); ++l)
      k_cache_[l] = g_->add_input(fmt::format("k_cache_{}", l), DType::kF32,
                                  {1, c_.layer_kv_heads(l), c_.layer_head_dim(l), cache_len()});
    for (int64_t l = 0; l < c_.kv_layers(); ++l)
      v_cache_[l] = g_->add_input(fmt::format("v_cache_{}", l), DType::kF32,
                                  {1, c_.layer_kv_heads(l), cache_len(), c_.layer_head_dim(l)});
  }

  // The rope tables gathered at the positions (a second pair for Gemma 3's sliding layers, which
  // rotate with their own base), and the attention and residual scales.
  void add_rope_and_scales() {
    auto [cos_t, sin_t] = rope_tables(c_, CL_);
    const ValueId cos_table = g_->add_constant("rope.cos_table", std::make_shared<const Tensor>(std::move(cos_t)));
    const ValueId sin_table = g_->add_constant("rope.sin_table", std::make_shared<const Tensor>(std::move(sin_t)));
    attn_scale_ = scalar("attn.scale", c_.attention_scale());
    residual_scale_ = c_.residual_multiplier != 1.0f ? scalar("residual.scale", c_.residual_multiplier) : -1;
    cos_ = g_->add_op(OpKind::kGather, {cos_table, pos_}, "rope.cos");
    sin_ = g_->add_op(OpKind::kGather, {sin_table, pos_}, "rope.sin");
    for (int64_t l = 0; l < c_.n_layers && local_cos_ < 0; ++l) {
      if (!c_.layer_uses_local_rope(l)) continue;
      auto [lc, ls] = rope_tables(c_, CL_, /*local=*/true);
      local_cos_ = g_->add_op(
          OpKind::kGather, {g_->add_constant("rope.local_cos_table", std::make_shared<const Tensor>(std::move(lc))), pos_},
          "rope.local_cos");
      local_sin_ = g_->add_op(
          OpKind::kGather, {g_->add_constant("rope.local_sin_table", std::make_shared<const Tensor>(std::move(ls))), pos_},
          "rope.local_sin");
    }
  }

  // The mask in query groups; for sliding layers once the context passes their window, the
  // windowed mask. The smart-mask cache holds position c in column c, so a query at position p
  // must not see the columns c <= p - W. A constant table [position, column] of 0 / -255 gathered
  // by input_pos adds those to the mask (a sum of -510 saturates at the mask encoding's -255).
  // The new tokens' own columns (the last ar) stay visible, as they are for chunks no longer than
  // the window (check_options); without a cache (calibration, ar == CL) positions start at 0, so
  // column c is position c there too.
  void add_masks() {
    mask5_ = g_->add_op(OpKind::kReshape, {mask_}, "atten_mask.groups", {{"shape", ints({1, 1, 1, ar_, CL_})}});
    if (!windowed_layers(c_, CL_)) return;
    Tensor table = Tensor::zeros(DType::kF32, {CL_, CL_});
    for (int64_t p = 0; p < CL_; ++p)
      for (int64_t col = 0; col < CL_ && col <= p - c_.sliding_window; ++col)
        if (cache_len() == 0 || col < cache_len()) table.mutable_data<float>()[p * CL_ + col] = kMaskedValue;
    const ValueId part = g_->add_op(
        OpKind::kGather, {g_->add_constant("atten_mask.window_table", std::make_shared<const Tensor>(std::move(table))), pos_},
        "atten_mask.window_part");
    const ValueId part4 =
        g_->add_op(OpKind::kReshape, {part}, "atten_mask.window_part.rows", {{"shape", ints({1, 1, ar_, CL_})}});
    const ValueId windowed = g_->add_op(OpKind::kAdd, {mask_, part4}, "atten_mask.window");
    window_mask5_ =
        g_->add_op(OpKind::kReshape, {windowed}, "atten_mask.window.groups", {{"shape", ints({1, 1, 1, ar_, CL_})}});
  }

  void embed() {
    h_ = embeds_input_ ? tokens_ : g_->add_op(OpKind::kGather, {g_->add_weight(wn::embed_tokens()), tokens_}, "embed.out");
    if (c_.embedding_multiplier != 1.0f)
      h_ = g_->add_op(OpKind::kMul, {h_, scalar("embed.scale", c_.embedding_multiplier)}, "embed.scaled");
  }

  // Gemma 4's per-layer inputs [1, ar, L, P]: (RMSNorm(h W^T / sqrt(dim)) + table[tokens] *
  // sqrt(P)) / sqrt(2), each layer reading its slice.
  void add_per_layer_inputs() {
    const int64_t P = c_.ple_dim, L = c_.n_layers;
    const ValueId proj = g_->add_op(OpKind::kLinear, {h_, g_->add_weight(wn::per_layer_model_projection())}, "ple.proj");
    const ValueId scaled = g_->add_op(
        OpKind::kMul, {proj, scalar("ple.proj.scale", static_cast<float>(std::pow(static_cast<double>(c_.dim), -0.5)))},
        "ple.proj.scaled");
    const ValueId split = g_->add_op(OpKind::kReshape, {scaled}, "ple.proj.layers", {{"shape", ints({1, ar_, L, P})}});
    const ValueId normed =
        g_->add_op(OpKind::kRmsNorm, {split, g_->add_weight(wn::per_layer_projection_norm())}, "ple.proj.norm", norm_attrs_);
    const ValueId rows = g_->add_op(OpKind::kGather, {g_->add_weight(wn::embed_tokens_per_layer()), tokens_}, "ple.embed");
    const ValueId rows_scaled = g_->add_op(
        OpKind::kMul, {rows, scalar("ple.embed.scale", static_cast<float>(std::sqrt(static_cast<double>(P))))},
        "ple.embed.scaled");
    const ValueId rows4 = g_->add_op(OpKind::kReshape, {rows_scaled}, "ple.embed.layers", {{"shape", ints({1, ar_, L, P})}});
    const ValueId sum = g_->add_op(OpKind::kAdd, {normed, rows4}, "ple.sum");
    ple_ = g_->add_op(OpKind::kMul, {sum, scalar("ple.scale", static_cast<float>(std::pow(2.0, -0.5)))}, "ple.inputs");
  }

  void add_layer(int64_t l) {
    const std::string p = prefix(l);
    const ValueId x = norm(h_, wn::layer(l, "input_layernorm.weight"), p + "input_norm.out");
    const ValueId o = attention(l, x);
    // Parallel blocks (CodeGen): the MLP reads the attention's input norm, and attention and MLP
    // outputs add onto the residual together.
    const ValueId h1 = c_.parallel_blocks ? h_ : residual(h_, o, p + "attn.residual");
    const ValueId x2 =
        c_.parallel_blocks ? x
        : c_.sandwich_norms
            ? g_->add_op(OpKind::kRmsNorm, {h1, layer_weight(l, "pre_feedforward_layernorm.weight")}, p + "pre_ffn_norm.out",
                         norm_attrs_)
            : norm(h1, wn::layer(l, "post_attention_layernorm.weight"), p + "post_attention_norm.out");
    ValueId down = feed_forward(l, x2);
    if (c_.parallel_blocks) down = g_->add_op(OpKind::kAdd, {o, down}, p + "attn_mlp.sum");
    h_ = residual(h1, down, p + "mlp.residual");
    if (ple_ >= 0) h_ = per_layer_input_residual(l, h_);
    if (c_.layer_scalars) {  // a constant of the checkpoint's scalar (the programs fold it in)
      const Tensor s = weights_->get(wn::layer(l, "layer_scalar")).to_f32();
      if (s.numel() != 1) throw_input_error("graph: {} holds {} values, expected 1", wn::layer(l, "layer_scalar"), s.numel());
      h_ = g_->add_op(OpKind::kMul, {h_, scalar(p + "scalar", s.data<float>()[0])}, p + "scaled");
    }
  }

  // A decoder linear layer (bias optional). With a LoRA adapter's factors among the weights
  // (weights_with_adapter), its low-rank path is added beside it: out + (x A^T) (scale B)^T.
  ValueId adapted_linear(ValueId x, const std::string& weight, bool bias, const std::string& out) {
    std::vector<ValueId> operands{x, g_->add_weight(weight)};
    if (bias) operands.push_back(g_->add_weight(wn::bias_of(weight)));
    const ValueId base = g_->add_op(OpKind::kLinear, operands, out);
    const std::string a = wn::lora_a_of(weight);
    if (!weights_ || !weights_->contains(a)) return base;
    const ValueId down = g_->add_op(OpKind::kLinear, {x, g_->add_weight(a)}, out + ".lora_a");
    const ValueId up = g_->add_op(OpKind::kLinear, {down, g_->add_weight(wn::lora_b_of(weight))}, out + ".lora_b");
    return g_->add_op(OpKind::kAdd, {base, up}, out + ".lora");
  }

  ValueId attn_proj(int64_t l, const char* which, ValueId x) {
    return adapted_linear(x, wn::layer(l, fmt::format("self_attn.{}_proj.weight", which).c_str()), c_.qkv_bias,
                          fmt::format("{}attn.{}_proj.out", prefix(l), which));
  }

  // [1, ar, n * hd] -> [1, n, ar, hd]; normalised per head first where the family does (q and k
  // by their weights; gemma4's values by a weightless norm, a constant of ones).
  ValueId heads(int64_t l, ValueId t, const char* which, int64_t n, ValueId norm_weight = -1) {
    const std::string p = prefix(l);
    const int64_t hd = c_.layer_head_dim(l);
    ValueId split =
        g_->add_op(OpKind::kReshape, {t}, fmt::format("{}attn.{}.split", p, which), {{"shape", ints({1, ar_, n, hd})}});
    if (norm_weight >= 0)
      split = g_->add_op(OpKind::kRmsNorm, {split, norm_weight}, fmt::format("{}attn.{}.norm", p, which), norm_attrs_);
    return g_->add_op(OpKind::kTranspose, {split}, fmt::format("{}attn.{}.heads", p, which), {{"perm", ints({0, 2, 1, 3})}});
  }

  ValueId qk_norm(int64_t l, const char* which) {
    return c_.qk_norm ? layer_weight(l, fmt::format("self_attn.{}_norm.weight", which)) : ValueId{-1};
  }

  // Rope on the leading rotary dims of each head; the rest passes through (partial rotary).
  ValueId rope(int64_t l, ValueId x, const char* which) {
    const bool local = c_.layer_uses_local_rope(l);
    const int64_t hd = c_.layer_head_dim(l), rd = local ? c_.rotary_dims() : c_.global_rotary_dims();
    const ValueId cos = local ? local_cos_ : cos_, sin = local ? local_sin_ : sin_;
    const std::string n = fmt::format("{}attn.{}", prefix(l), which);
    if (rd == hd) return g_->add_op(OpKind::kRope, {x, cos, sin}, n + ".rope");
    const ValueId rot = g_->add_op(OpKind::kSlice, {x}, n + ".rot", {{"axis", int64_t{3}}, {"start", int64_t{0}}, {"end", rd}});
    const ValueId pass = g_->add_op(OpKind::kSlice, {x}, n + ".pass", {{"axis", int64_t{3}}, {"start", rd}, {"end", hd}});
    const ValueId rotated = g_->add_op(OpKind::kRope, {rot, cos, sin}, n + ".rope");
    return g_->add_op(OpKind::kConcat, {rotated, pass}, n + ".rope_all", {{"axis", int64_t{3}}});
  }

  // A layer's own keys and values: emitted as the new cache entries (K transposed [1, KV, hd,
  // ar], as the cache stores it, so q·kᵀ needs no transpose; V [1, KV, ar, hd]) and, with a
  // cache, concatenated after it.
  void own_keys_and_values(int64_t l, ValueId x) {
    const std::string p = prefix(l);
    const int64_t hd = c_.layer_head_dim(l), KV = c_.layer_kv_heads(l);
    const ValueId k = attn_proj(l, "k", x);
    // Values: their own projection, or the raw keys (gemma4's attention_k_eq_v).
    const ValueId v = c_.layer_values_from_keys(l) ? k : attn_proj(l, "v", x);
    ValueId k_rope = heads(l, k, "k", KV, qk_norm(l, "k"));
    if (c_.layer_uses_rope(l)) k_rope = rope(l, k_rope, "k");
    ValueId v_norm = -1;
    if (c_.v_norm) {
      Tensor ones = Tensor::zeros(DType::kF32, {hd});
      for (int64_t i = 0; i < hd; ++i) ones.mutable_data<float>()[i] = 1.0f;
      v_norm = g_->add_constant(p + "attn.v.norm_weight", std::make_shared<const Tensor>(std::move(ones)));
    }
    k_out_[l] = g_->add_op(OpKind::kTranspose, {k_rope}, p + "attn.k.new", {{"perm", ints({0, 1, 3, 2})}});
    v_out_[l] = heads(l, v, "v", KV, v_norm);
    k_all_[l] = k_out_[l];
    v_all_[l] = v_out_[l];
    if (cache_len() > 0) {
      k_all_[l] = g_->add_op(OpKind::kConcat, {k_cache_[l], k_out_[l]}, p + "attn.k.all", {{"axis", int64_t{3}}});
      v_all_[l] = g_->add_op(OpKind::kConcat, {v_cache_[l], v_out_[l]}, p + "attn.v.all", {{"axis", int64_t{2}}});
    }
  }

  // Self-attention of layer l over its input norm x: the projected output (after the family's
  // post-attention norm).
  ValueId attention(int64_t l, ValueId x) {
    const std::string p = prefix(l);
    const int64_t H = c_.n_heads, hd = c_.layer_head_dim(l), KV = c_.layer_kv_heads(l), G = H / KV;
    const ValueId q = attn_proj(l, "q", x);
    ValueId q_rope = heads(l, q, "q", H, qk_norm(l, "q"));
    if (c_.layer_uses_rope(l)) q_rope = rope(l, q_rope, "q");
    if (c_.layer_has_kv(l)) own_keys_and_values(l, x);
    // A shared layer attends over the keys and values of the layer it shares (gemma4).
    const ValueId k_all = k_all_[c_.kv_source(l)], v_all = v_all_[c_.kv_source(l)];
    // Grouped-query attention: query head h = kv * G + g reads kv head kv (broadcast over G).
    const ValueId q5 = g_->add_op(OpKind::kReshape, {q_rope}, p + "attn.q.groups", {{"shape", ints({1, KV, G, ar_, hd})}});
    const ValueId k5 = g_->add_op(OpKind::kReshape, {k_all}, p + "attn.k.groups", {{"shape", ints({1, KV, 1, hd, CL_})}});
    const ValueId v5 = g_->add_op(OpKind::kReshape, {v_all}, p + "attn.v.groups", {{"shape", ints({1, KV, 1, CL_, hd})}});
    const ValueId qk = g_->add_op(OpKind::kMatMul, {q5, k5}, p + "attn.qk");
    ValueId scores = g_->add_op(OpKind::kMul, {qk, attn_scale_}, p + "attn.scores");
    if (c_.attn_logit_softcap > 0.0f) scores = softcap(scores, c_.attn_logit_softcap, p + "attn.capped_scores");
    const ValueId layer_mask = c_.layer_slides(l) && window_mask5_ >= 0 ? window_mask5_ : mask5_;
    const ValueId masked = g_->add_op(OpKind::kAdd, {scores, layer_mask}, p + "attn.masked_scores");
    const ValueId probs = g_->add_op(OpKind::kSoftmax, {masked}, p + "attn.probs");
    const ValueId ctx = g_->add_op(OpKind::kMatMul, {probs, v5}, p + "attn.context");
    const ValueId ctx4 = g_->add_op(OpKind::kReshape, {ctx}, p + "attn.context.heads", {{"shape", ints({1, H, ar_, hd})}});
    const ValueId ctxt = g_->add_op(OpKind::kTranspose, {ctx4}, p + "attn.context.tokens", {{"perm", ints({0, 2, 1, 3})}});
    const ValueId flat = g_->add_op(OpKind::kReshape, {ctxt}, p + "attn.context.flat", {{"shape", ints({1, ar_, H * hd})}});
    ValueId o = adapted_linear(flat, wn::layer(l, "self_attn.o_proj.weight"), false, p + "attn.o_proj.out");
    if (c_.sandwich_norms)
      o = g_->add_op(OpKind::kRmsNorm, {o, layer_weight(l, "post_attention_layernorm.weight")}, p + "attn.post_norm.out",
                     norm_attrs_);
    return o;
  }

  OpKind activation() const {
    return c_.ffn_activation == FfnActivation::kGeluTanh ? OpKind::kGeluTanh : OpKind::kSilu;
  }

  ValueId mlp_proj(int64_t l, const char* which, ValueId in) {
    return adapted_linear(in, wn::layer(l, fmt::format("mlp.{}_proj.weight", which).c_str()),
                          c_.mlp_bias && std::string_view(which) != "gate", fmt::format("{}mlp.{}_proj.out", prefix(l), which));
  }

  // The MLP of layer l over its norm x2: down(act(gate(x)) * up(x)), or down(act(up(x))) ungated
  // (after the family's post-feed-forward norm).
  ValueId feed_forward(int64_t l, ValueId x2) {
    const std::string p = prefix(l);
    ValueId hidden = -1;
    if (c_.gated_ffn) {
      const ValueId act = g_->add_op(activation(), {mlp_proj(l, "gate", x2)}, p + "mlp.act");
      hidden = g_->add_op(OpKind::kMul, {act, mlp_proj(l, "up", x2)}, p + "mlp.gated");
    } else {
      hidden = g_->add_op(activation(), {mlp_proj(l, "up", x2)}, p + "mlp.act");
    }
    ValueId down = mlp_proj(l, "down", hidden);
    if (c_.sandwich_norms)
      down = g_->add_op(OpKind::kRmsNorm, {down, layer_weight(l, "post_feedforward_layernorm.weight")},
                        p + "mlp.post_norm.out", norm_attrs_);
    return down;
  }

  // h + norm(proj(gelu(gate(h)) * this layer's per-layer input)) (gemma4).
  ValueId per_layer_input_residual(int64_t l, ValueId h) {
    const std::string p = prefix(l);
    const ValueId slice = g_->add_op(OpKind::kSlice, {ple_}, p + "ple.slice", {{"axis", int64_t{2}}, {"start", l}, {"end", l + 1}});
    const ValueId input = g_->add_op(OpKind::kReshape, {slice}, p + "ple.input", {{"shape", ints({1, ar_, c_.ple_dim})}});
    const ValueId gate = g_->add_op(
        activation(), {g_->add_op(OpKind::kLinear, {h, layer_weight(l, "per_layer_input_gate.weight")}, p + "ple.gate")},
        p + "ple.act");
    const ValueId gated = g_->add_op(OpKind::kMul, {gate, input}, p + "ple.gated");
    const ValueId out = g_->add_op(OpKind::kLinear, {gated, layer_weight(l, "per_layer_projection.weight")}, p + "ple.proj");
    const ValueId normed =
        g_->add_op(OpKind::kRmsNorm, {out, layer_weight(l, "post_per_layer_input_norm.weight")}, p + "ple.norm", norm_attrs_);
    return g_->add_op(OpKind::kAdd, {h, normed}, p + "ple.residual");
  }

  // Final norm, the LM head (scaled and soft-capped where the family does), and the outputs:
  // logits, then each own-KV layer's new keys, then its new values.
  void add_head() {
    const ValueId normed = norm(h_, wn::final_norm(), "norm.out");
    std::vector<ValueId> head{normed, g_->add_weight(c_.tied_embeddings ? wn::embed_tokens() : wn::lm_head())};
    if (c_.lm_head_bias) head.push_back(g_->add_weight(wn::lm_head_bias()));
    ValueId logits = g_->add_op(OpKind::kLinear, head, "lm_head.out");
    if (c_.logits_scaling != 1.0f)
      logits = g_->add_op(OpKind::kMul, {logits, scalar("logits.scale", 1.0f / c_.logits_scaling)}, "logits.scaled");
    if (c_.final_logit_softcap > 0.0f) logits = softcap(logits, c_.final_logit_softcap, "logits.capped");
    g_->add_output("logits", logits);
    for (int64_t l = 0; l < c_.kv_layers(); ++l) g_->add_output(fmt::format("k_out_{}", l), k_out_[l]);
    for (int64_t l = 0; l < c_.kv_layers(); ++l) g_->add_output(fmt::format("v_out_{}", l), v_out_[l]);
  }

  const ModelConfig& c_;
  const std::shared_ptr<const Weights> weights_;
  const std::shared_ptr<Graph> g_;
  const int64_t ar_, CL_;
  const bool embeds_input_;
  const Attrs norm_attrs_;
  // Values the blocks share: inputs, rope gathers, scales, masks, the residual stream h and
  // gemma4's per-layer inputs; per layer, the new and the full keys and values.
  ValueId tokens_ = -1, mask_ = -1, pos_ = -1;
  std::vector<ValueId> k_cache_, v_cache_;
  ValueId cos_ = -1, sin_ = -1, local_cos_ = -1, local_sin_ = -1;
  ValueId attn_scale_ = -1, residual_scale_ = -1;
  ValueId mask5_ = -1, window_mask5_ = -1;
  ValueId h_ = -1, ple_ = -1;
  std::vector<ValueId> k_out_, v_out_, k_all_, v_all_;
};

}  // namespace

std::shared_ptr<Graph> build_decoder_graph(const ModelConfig& c, std::shared_ptr<const Weights> weights, std::string name,
                                           int64_t ar, int64_t CL, bool embeds_input) {
  if (ar < 1 || ar > CL) throw_input_error("graph {}: AR length {} outside [1, {}]", name, ar, CL);
  if (embeds_input && c.ple_dim > 0)
    throw_input_error("graph {}: per-layer embeddings (gemma4) read the tokens themselves; separate embedding graphs "
                      "are not supported for this model", name);
  return DecoderGraphBuilder(c, std::move(weights), std::move(name), ar, CL, embeds_input).build();
}

}  // namespace genai::graph
