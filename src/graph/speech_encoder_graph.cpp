#include "graph/speech_encoder_graph.h"

#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "core/error.h"
#include "graph/decoder_graphs.h"
#include "graph/passes.h"

namespace genai::graph {
namespace {

std::shared_ptr<const Tensor> filled(Shape shape, float value) {
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = value;
  return std::make_shared<const Tensor>(std::move(t));
}

// BatchNorm (inference) folded into the depthwise convolution before it: the per-channel scale
// gamma / sqrt(var + eps) times each tap, the shift beta - mean * scale as a bias after the sum.
struct FoldedConv {
  std::vector<std::shared_ptr<const Tensor>> taps;  // per tap k: [channels]
  std::shared_ptr<const Tensor> shift;              // [channels]
};

FoldedConv fold_batch_norm(const Weights& w, const std::string& p, int64_t channels, int64_t kernel) {
  const Tensor& conv = w.get(p + "depth_conv.conv.weight");
  const Tensor &gamma = w.get(p + "batch_norm.weight"), &beta = w.get(p + "batch_norm.bias");
  const Tensor &mean = w.get(p + "batch_norm.running_mean"), &var = w.get(p + "batch_norm.running_var");
  FoldedConv f;
  std::vector<float> scale(static_cast<size_t>(channels));
  Tensor shift = Tensor::zeros(DType::kF32, {channels});
  for (int64_t c = 0; c < channels; ++c) {
    scale[static_cast<size_t>(c)] = gamma.data<float>()[c] / std::sqrt(var.data<float>()[c] + 1e-5f);
    shift.mutable_data<float>()[c] = beta.data<float>()[c] - mean.data<float>()[c] * scale[static_cast<size_t>(c)];
  }
  for (int64_t k = 0; k < kernel; ++k) {
    Tensor tap = Tensor::zeros(DType::kF32, {channels});
    for (int64_t c = 0; c < channels; ++c)
      tap.mutable_data<float>()[c] = conv.data<float>()[c * kernel + k] * scale[static_cast<size_t>(c)];
    f.taps.push_back(std::make_shared<const Tensor>(std::move(tap)));
  }
  f.shift = std::make_shared<const Tensor>(std::move(shift));
  return f;
}

}  // namespace

std::shared_ptr<Graph> build_speech_encoder_graph(std::shared_ptr<const SpeechTower> tower, int64_t R, std::string name) {
  const SpeechTowerConfig& c = tower->config;
  c.validate("audio encoder");
  if (R <= 0 || R % c.context != 0 || R % c.window != 0)
    throw_input_error("audio encoder: {} feature rows is not a positive multiple of the attention context {} and the "
                      "projector window {}",
                      R, c.context, c.window);
  std::shared_ptr<const Weights> weights(tower, &tower->weights);
  auto g = std::make_shared<Graph>(std::move(name), weights);
  const int64_t D = c.dim, H = c.n_heads, hd = c.head_dim, A = c.inner_dim(), I = c.conv_dim(), C = c.context;
  const int64_t blocks = R / C, K = c.conv_kernel;
  auto op = [&](OpKind k, std::vector<ValueId> in, const std::string& n, Attrs a = {}) { return g->add_op(k, std::move(in), n, std::move(a)); };
  auto weight = [&](const std::string& n) { return g->add_weight(n); };
  auto constant = [&](const std::string& n, std::shared_ptr<const Tensor> t) { return g->add_constant(n, std::move(t)); };
  auto linear = [&](ValueId x, const std::string& w, const std::string& out, bool bias = true) {
    std::vector<ValueId> in{x, weight(w + ".weight")};
    if (bias) in.push_back(weight(w + ".bias"));
    return op(OpKind::kLinear, in, out);
  };
  auto layer_norm = [&](ValueId x, const std::string& w, const std::string& out, float eps) {
    return op(OpKind::kLayerNorm, {x, weight(w + ".weight"), weight(w + ".bias")}, out, {{"eps", static_cast<double>(eps)}});
  };

  const ValueId features = g->add_input(std::string(kInputFeatures), DType::kF32, {1, R, c.input_dim});
  const ValueId frame_mask = g->add_input(std::string(kFrameMask), DType::kF32, {1, R, 1});
  const ValueId mask = g->add_input("atten_mask", DType::kF32, {blocks, 1, C, C});
  const ValueId half = constant("half", filled({1}, 0.5f));
  const ValueId scale = constant("attn.scale", filled({1}, static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)))));
  // Relative distances c - r clamped to the context, offset into the table: [C, C].
  Tensor dist = Tensor::zeros(DType::kI32, {C, C});
  for (int64_t q = 0; q < C; ++q)
    for (int64_t r = 0; r < C; ++r)
      dist.mutable_data<int32_t>()[q * C + r] = static_cast<int32_t>(std::clamp(q - r, -C, C) + c.max_pos_emb);
  const ValueId dists = constant("attn.rel_dists", std::make_shared<const Tensor>(std::move(dist)));

  ValueId h = linear(features, "encoder.input_linear", "encoder.input.out");
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const std::string p = fmt::format("encoder.layers.{}.", l), n = fmt::format("audio.layers.{}.", l);
    auto feed_forward = [&](const std::string& ff) {
      const ValueId x = layer_norm(h, p + ff + ".pre_norm", n + ff + ".norm.out", 1e-5f);
      const ValueId up = op(OpKind::kSilu, {linear(x, p + ff + ".up_proj", n + ff + ".up.out")}, n + ff + ".act");
      const ValueId down = linear(up, p + ff + ".down_proj", n + ff + ".down.out");
      return op(OpKind::kAdd, {h, op(OpKind::kMul, {down, half}, n + ff + ".half")}, n + ff + ".residual");
    };
    h = feed_forward("ff1");
    {  // block-local attention with relative positions
      const ValueId x = layer_norm(h, p + "attn.pre_norm", n + "attn.norm.out", 1e-5f);
      const ValueId q = linear(x, p + "attn.to_q", n + "attn.q.out", false);
      const ValueId kv = linear(x, p + "attn.to_kv", n + "attn.kv.out", false);
      const ValueId k = op(OpKind::kSlice, {kv}, n + "attn.k.out", {{"axis", int64_t{2}}, {"start", int64_t{0}}, {"end", A}});
      const ValueId v = op(OpKind::kSlice, {kv}, n + "attn.v.out", {{"axis", int64_t{2}}, {"start", A}, {"end", 2 * A}});
      auto heads = [&](ValueId t, const char* which, std::initializer_list<int64_t> perm) {
        const ValueId s = op(OpKind::kReshape, {t}, n + "attn." + which + ".split", {{"shape", ints({blocks, C, H, hd})}});
        return op(OpKind::kTranspose, {s}, n + "attn." + which + ".heads", {{"perm", ints(perm)}});
      };
      const ValueId qh = heads(q, "q", {0, 2, 1, 3}), kh = heads(k, "k", {0, 2, 3, 1}), vh = heads(v, "v", {0, 2, 1, 3});
      const ValueId content = op(OpKind::kMatMul, {qh, kh}, n + "attn.content");
      // Positions: q[b, h, c, :] . E[dist(c, r), :] for every r, as one matmul per query row c.
      const ValueId table = op(OpKind::kGather, {weight(p + "attn.rel_pos_emb.weight"), dists}, n + "attn.rel");  // [C, C, hd]
      const ValueId rel_t = op(OpKind::kTranspose, {table}, n + "attn.rel.t", {{"perm", ints({0, 2, 1})}});     // [C, hd, C]
      const ValueId q_rows = op(OpKind::kTranspose, {qh}, n + "attn.q.rows", {{"perm", ints({2, 0, 1, 3})}});  // [C, b, H, hd]
      const ValueId q_flat = op(OpKind::kReshape, {q_rows}, n + "attn.q.rows.flat", {{"shape", ints({C, blocks * H, hd})}});
      const ValueId pos = op(OpKind::kMatMul, {q_flat, rel_t}, n + "attn.pos");                              // [C, b*H, C]
      const ValueId pos4 = op(OpKind::kReshape, {pos}, n + "attn.pos.split", {{"shape", ints({C, blocks, H, C})}});
      const ValueId pos_b = op(OpKind::kTranspose, {pos4}, n + "attn.pos.blocks", {{"perm", ints({1, 2, 0, 3})}});
      const ValueId sum = op(OpKind::kAdd, {content, pos_b}, n + "attn.raw_scores");
      const ValueId scores = op(OpKind::kMul, {sum, scale}, n + "attn.scores");
      const ValueId masked = op(OpKind::kAdd, {scores, mask}, n + "attn.masked_scores");
      const ValueId probs = op(OpKind::kSoftmax, {masked}, n + "attn.probs");
      const ValueId ctx = op(OpKind::kMatMul, {probs, vh}, n + "attn.context");
      const ValueId ctx_t = op(OpKind::kTranspose, {ctx}, n + "attn.context.rows", {{"perm", ints({0, 2, 1, 3})}});
      const ValueId flat = op(OpKind::kReshape, {ctx_t}, n + "attn.context.flat", {{"shape", ints({1, R, A})}});
      h = op(OpKind::kAdd, {h, linear(flat, p + "attn.to_out", n + "attn.out")}, n + "attn.residual");
    }
    {  // convolution module: pointwise, GLU, depthwise (BatchNorm folded), SiLU, pointwise
      const ValueId x = layer_norm(h, p + "conv.norm", n + "conv.norm.out", 1e-5f);
      const ValueId up = linear(x, p + "conv.up_conv", n + "conv.up.out");
      const ValueId a = op(OpKind::kSlice, {up}, n + "conv.glu.a", {{"axis", int64_t{2}}, {"start", int64_t{0}}, {"end", I}});
      const ValueId b = op(OpKind::kSlice, {up}, n + "conv.glu.b", {{"axis", int64_t{2}}, {"start", I}, {"end", 2 * I}});
      // sigmoid(b) = 1/2 + tanh(b / 2) / 2
      const ValueId t = op(OpKind::kTanh, {op(OpKind::kMul, {b, half}, n + "conv.glu.b.half")}, n + "conv.glu.tanh");
      const ValueId sig = op(OpKind::kAdd, {op(OpKind::kMul, {t, half}, n + "conv.glu.tanh.half"), half}, n + "conv.glu.gate");
      const ValueId glu = op(OpKind::kMul, {a, sig}, n + "conv.glu.out");
      const ValueId clip = op(OpKind::kMul, {glu, frame_mask}, n + "conv.glu.clip");  // zeros past the clip
      // Tap k reads row t + k - K/2: the rows rotated by that offset. With at least K/2 zero rows
      // after the clip (speech_encoder_capacity), what wraps around is zeros: HF's zero padding.
      const FoldedConv f = fold_batch_norm(tower->weights, p + "conv.", I, K);
      ValueId acc = -1;
      for (int64_t k = 0; k < K; ++k) {
        const int64_t shift = ((k - K / 2) % R + R) % R;  // row t takes row (t + shift) mod R
        ValueId shifted = clip;
        if (shift != 0) {
          const ValueId head = op(OpKind::kSlice, {clip}, fmt::format("{}conv.tap{}.head", n, k),
                                  {{"axis", int64_t{1}}, {"start", shift}, {"end", R}});
          const ValueId tail = op(OpKind::kSlice, {clip}, fmt::format("{}conv.tap{}.tail", n, k),
                                  {{"axis", int64_t{1}}, {"start", int64_t{0}}, {"end", shift}});
          shifted = op(OpKind::kConcat, {head, tail}, fmt::format("{}conv.tap{}.in", n, k), {{"axis", int64_t{1}}});
        }
        const ValueId term = op(OpKind::kMul, {shifted, constant(fmt::format("{}conv.tap{}", n, k), f.taps[static_cast<size_t>(k)])},
                                fmt::format("{}conv.tap{}.out", n, k));
        acc = acc < 0 ? term : op(OpKind::kAdd, {acc, term}, fmt::format("{}conv.sum{}", n, k));
      }
      const ValueId normed = op(OpKind::kAdd, {acc, constant(n + "conv.shift", f.shift)}, n + "conv.depth.out");
      const ValueId act = op(OpKind::kSilu, {normed}, n + "conv.act");
      h = op(OpKind::kAdd, {h, linear(act, p + "conv.down_conv", n + "conv.down.out")}, n + "conv.residual");
    }
    h = feed_forward("ff2");
    h = layer_norm(h, p + "post_norm", n + "post_norm.out", 1e-5f);
    if (l + 1 == c.n_layers / 2) {  // the self-conditioned CTC head after the middle block
      const ValueId mid = op(OpKind::kSoftmax, {linear(h, "encoder.out", n + "ctc.out")}, n + "ctc.probs");
      h = op(OpKind::kAdd, {h, linear(mid, "encoder.out_mid", n + "ctc.back")}, n + "ctc.residual");
    }
  }

  // The projector: windows of encoder rows (zeros past the clip) read by the learned queries.
  const int64_t Q = c.q_dim, nq = c.queries(), W = R / c.window, qh = Q / c.q_heads;
  const ValueId frames = op(OpKind::kMul, {h, frame_mask}, "projector.frames");
  const ValueId windows = op(OpKind::kReshape, {frames}, "projector.windows", {{"shape", ints({W, c.window, D})}});
  // The queries gathered from their table, as the vision encoder's learned positions.
  const ValueId query = op(OpKind::kGather, {weight("projector.query"), constant("projector.query_ids", std::make_shared<const Tensor>(index_range(nq)))},
                           "projector.query.rows");
  ValueId x = layer_norm(query, "projector.qformer.layernorm", "qformer.query.norm", c.q_norm_eps);
  const ValueId q_scale = constant("qformer.scale", filled({1}, static_cast<float>(1.0 / std::sqrt(static_cast<double>(qh)))));
  auto attention = [&](const std::string& p, const std::string& n, ValueId queries, ValueId keys, int64_t batch, int64_t nk) {
    auto heads = [&](ValueId t, const char* which, int64_t rows, int64_t b, std::initializer_list<int64_t> perm) {
      const ValueId s = op(OpKind::kReshape, {t}, n + which + ".split", {{"shape", ints({b, rows, c.q_heads, qh})}});
      return op(OpKind::kTranspose, {s}, n + which + ".heads", {{"perm", ints(perm)}});
    };
    // The queries' batch is 1 until the first cross-attention gives each window its own; the
    // keys' is theirs (self-attention) or the windows' (matmul broadcasts the other).
    const int64_t qb = batch, kb = keys == queries ? qb : W;
    const ValueId q = heads(linear(queries, p + "attention.query", n + "q.out"), "q", nq, qb, {0, 2, 1, 3});
    const ValueId k = heads(linear(keys, p + "attention.key", n + "k.out"), "k", nk, kb, {0, 2, 3, 1});
    const ValueId v = heads(linear(keys, p + "attention.value", n + "v.out"), "v", nk, kb, {0, 2, 1, 3});
    const ValueId scores = op(OpKind::kMul, {op(OpKind::kMatMul, {q, k}, n + "qk"), q_scale}, n + "scores");
    const ValueId ctx = op(OpKind::kMatMul, {op(OpKind::kSoftmax, {scores}, n + "probs"), v}, n + "context");
    const int64_t out_b = std::max(qb, kb);
    const ValueId rows = op(OpKind::kTranspose, {ctx}, n + "context.rows", {{"perm", ints({0, 2, 1, 3})}});
    const ValueId flat = op(OpKind::kReshape, {rows}, n + "context.flat", {{"shape", ints({out_b, nq, Q})}});
    const ValueId dense = linear(flat, p + "output.dense", n + "dense.out");
    return layer_norm(op(OpKind::kAdd, {dense, queries}, n + "residual"), p + "output.LayerNorm", n + "norm.out", c.q_norm_eps);
  };
  int64_t batch = 1;
  for (int64_t l = 0; l < c.q_layers; ++l) {
    const std::string p = fmt::format("projector.qformer.encoder.layer.{}.", l), n = fmt::format("qformer.layers.{}.", l);
    x = attention(p + "attention.", n + "self.", x, x, batch, nq);
    x = attention(p + "crossattention.", n + "cross.", x, windows, batch, c.window);
    batch = W;
    const ValueId up = op(OpKind::kGelu, {linear(x, p + "intermediate_query.dense", n + "ffn.up.out")}, n + "ffn.act");
    const ValueId down = linear(up, p + "output_query.dense", n + "ffn.down.out");
    x = layer_norm(op(OpKind::kAdd, {down, x}, n + "ffn.residual"), p + "output_query.LayerNorm", n + "ffn.norm.out", c.q_norm_eps);
  }
  const ValueId tokens = op(OpKind::kReshape, {x}, "projector.tokens", {{"shape", ints({1, W * nq, Q})}});
  g->add_output(std::string(kAudioFeatures), linear(tokens, "projector.linear", "projector.out"));
  default_pipeline().run(*g);
  return g;
}

int64_t speech_encoder_rows(const SpeechTowerConfig& c, double seconds) {
  const int64_t unit = std::lcm(c.context, c.window), rows = static_cast<int64_t>(std::ceil(seconds * 50.0));
  return std::max<int64_t>(1, (rows + unit - 1) / unit) * unit;
}

int64_t speech_encoder_capacity(const SpeechTowerConfig& c, int64_t rows) { return rows - c.conv_kernel / 2; }

}  // namespace genai::graph
