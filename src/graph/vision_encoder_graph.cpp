#include "graph/vision_encoder_graph.h"

#include <cmath>

#include <fmt/format.h>

#include "graph/passes.h"

namespace genai::graph {
namespace {

// InternVL's layer scales folded into the projections before them (s * (W x + b) = (s W) x + s b):
// the graph then has no scale ops, only its weights differ. Other tensors are shared, not copied.
std::shared_ptr<const Weights> folded_weights(const VisionTower& tower) {
  auto w = std::make_shared<Weights>(tower.weights);
  namespace vn = vision_names;
  for (int64_t l = 0; l < tower.config.n_layers; ++l)
    for (const auto& [scale, proj] : {std::pair{"layer_scale1", "self_attn.out_proj"}, std::pair{"layer_scale2", "mlp.fc2"}}) {
      const Tensor& s = tower.weights.get(vn::layer(l, scale));
      for (const char* part : {".weight", ".bias"}) {
        const std::string name = vn::layer(l, (std::string(proj) + part).c_str());
        Tensor t = tower.weights.get(name).to_f32();
        Tensor scaled = Tensor::zeros(DType::kF32, t.shape());
        const int64_t rows = t.dim(0), cols = t.numel() / rows;
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c)
            scaled.mutable_data<float>()[r * cols + c] = t.data<float>()[r * cols + c] * s.data<float>()[r];
        w->add(name, std::move(scaled));
      }
    }
  return w;
}

}  // namespace

std::shared_ptr<Graph> build_vision_encoder_graph(std::shared_ptr<const VisionTower> tower, std::string name) {
  const VisionTowerConfig& c = tower->config;
  c.validate("vision encoder");
  // Aliasing pointer: the graph keeps the tower alive and reads its one copy of the weights.
  std::shared_ptr<const Weights> weights = c.layer_scale ? folded_weights(*tower) : std::shared_ptr<const Weights>(tower, &tower->weights);
  auto g = std::make_shared<Graph>(std::move(name), std::move(weights));
  namespace vn = vision_names;
  const int64_t C = c.channels, M = c.image_size, p = c.patch_size, N = c.patches_per_side(), T = c.patches();
  const int64_t D = c.dim, H = c.n_heads, hd = D / H, s = c.scale_factor;
  const Attrs norm_attrs{{"eps", static_cast<double>(c.norm_eps)}};

  const ValueId pixels = g->add_input(std::string(kPixelValues), DType::kF32, {1, C, M, M});
  // [1, C, N*p, N*p] -> [C, N, p, N, p] -> [N, N, C, p, p] -> [1, N*N, C*p*p]: patches row-major.
  const ValueId grid = g->add_op(OpKind::kReshape, {pixels}, "patches.grid", {{"shape", ints({C, N, p, N, p})}});
  const ValueId moved = g->add_op(OpKind::kTranspose, {grid}, "patches.moved", {{"perm", ints({1, 3, 0, 2, 4})}});
  const ValueId flat = g->add_op(OpKind::kReshape, {moved}, "patches.flat", {{"shape", ints({1, T, C * p * p})}});
  const ValueId embedded =
      g->add_op(OpKind::kLinear, {flat, g->add_weight(vn::patch_weight()), g->add_weight(vn::patch_bias())}, "patches.embedded");
  // InternVL: the CLS token ahead of the patches (a one-row table gathered, so it is an
  // activation like them).
  ValueId tokens_in = embedded;
  const int64_t P = c.positions();
  if (c.cls_token) {
    const ValueId cls = g->add_op(
        OpKind::kGather,
        {g->add_weight(vn::cls_token()), g->add_constant("embeddings.cls_id", std::make_shared<const Tensor>(Tensor::zeros(DType::kI32, {1, 1})))},
        "embeddings.cls");
    tokens_in = g->add_op(OpKind::kConcat, {cls, embedded}, "embeddings.tokens", {{"axis", int64_t{1}}});
  }
  // Learned positions: every row of the table (a full tile), gathered as the decoder gathers its
  // token table, so the table is a quantized weight and the rows an activation.
  const ValueId positions = g->add_op(
      OpKind::kGather,
      {g->add_weight(vn::positions()), g->add_constant("embeddings.position_ids", std::make_shared<const Tensor>(index_range(P)))},
      "embeddings.positions");
  ValueId h = g->add_op(OpKind::kAdd, {tokens_in, positions}, "embeddings.out");

  Tensor scale_t = Tensor::zeros(DType::kF32, {1});
  scale_t.mutable_data<float>()[0] = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
  const ValueId scale = g->add_constant("attn.scale", std::make_shared<const Tensor>(std::move(scale_t)));
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const std::string pre = fmt::format("vision.layers.{}.", l);
    auto w = [&](const char* suffix) { return g->add_weight(vn::layer(l, suffix)); };
    auto linear = [&](ValueId x, const char* which, const std::string& out) {
      return g->add_op(OpKind::kLinear, {x, w(fmt::format("{}.weight", which).c_str()), w(fmt::format("{}.bias", which).c_str())},
                       pre + out);
    };
    auto layer_norm = [&](ValueId x, const char* which) {
      return g->add_op(OpKind::kLayerNorm, {x, w(fmt::format("{}.weight", which).c_str()), w(fmt::format("{}.bias", which).c_str())},
                       pre + which + ".out", norm_attrs);
    };
    const ValueId x = layer_norm(h, "layer_norm1");
    // [1, T, D] -> [1, H, T, hd] (keys: [1, H, hd, T], so q·kᵀ needs no further transpose).
    auto heads = [&](const char* which, std::initializer_list<int64_t> perm) {
      const ValueId proj = linear(x, fmt::format("self_attn.{}_proj", which).c_str(), fmt::format("attn.{}_proj.out", which));
      const ValueId split = g->add_op(OpKind::kReshape, {proj}, pre + fmt::format("attn.{}.split", which), {{"shape", ints({1, P, H, hd})}});
      return g->add_op(OpKind::kTranspose, {split}, pre + fmt::format("attn.{}.heads", which), {{"perm", ints(perm)}});
    };
    const ValueId q = heads("q", {0, 2, 1, 3}), k = heads("k", {0, 2, 3, 1}), v = heads("v", {0, 2, 1, 3});
    const ValueId qk = g->add_op(OpKind::kMatMul, {q, k}, pre + "attn.qk");
    const ValueId scores = g->add_op(OpKind::kMul, {qk, scale}, pre + "attn.scores");
    const ValueId probs = g->add_op(OpKind::kSoftmax, {scores}, pre + "attn.probs");
    const ValueId ctx = g->add_op(OpKind::kMatMul, {probs, v}, pre + "attn.context");
    const ValueId ctxt = g->add_op(OpKind::kTranspose, {ctx}, pre + "attn.context.tokens", {{"perm", ints({0, 2, 1, 3})}});
    const ValueId ctxf = g->add_op(OpKind::kReshape, {ctxt}, pre + "attn.context.flat", {{"shape", ints({1, P, D})}});
    const ValueId o = linear(ctxf, "self_attn.out_proj", "attn.out_proj.out");
    const ValueId h1 = g->add_op(OpKind::kAdd, {h, o}, pre + "attn.residual");
    const ValueId x2 = layer_norm(h1, "layer_norm2");
    const ValueId act = g->add_op(c.exact_gelu ? OpKind::kGelu : OpKind::kGeluTanh, {linear(x2, "mlp.fc1", "mlp.fc1.out")},
                                  pre + "mlp.act");
    h = g->add_op(OpKind::kAdd, {h1, linear(act, "mlp.fc2", "mlp.fc2.out")}, pre + "mlp.residual");
  }
  if (c.post_norm)
    h = g->add_op(OpKind::kLayerNorm, {h, g->add_weight(vn::post_norm_weight()), g->add_weight(vn::post_norm_bias())},
                  "vision.post_norm.out", norm_attrs);
  if (c.cls_token)  // the patches only
    h = g->add_op(OpKind::kSlice, {h}, "vision.patches", {{"axis", int64_t{1}}, {"start", int64_t{1}}, {"end", P}});
  // Pixel shuffle: patch (r, c) = (R s + a, C s + b) goes to token R (N/s) + C, channels (a s + b) D + d.
  const ValueId split = g->add_op(OpKind::kReshape, {h}, "connector.grid", {{"shape", ints({N / s, s, N / s, s, D})}});
  const ValueId shuffled = g->add_op(OpKind::kTranspose, {split}, "connector.shuffled", {{"perm", ints({0, 2, 1, 3, 4})}});
  const ValueId tokens = g->add_op(OpKind::kReshape, {shuffled}, "connector.tokens",
                                   {{"shape", ints({1, c.tokens_per_image(), s * s * D})}});
  ValueId features = -1;
  if (c.mlp_projector) {
    auto w = [&](const char* suffix) { return g->add_weight(vn::projector(suffix)); };
    const ValueId normed = g->add_op(OpKind::kLayerNorm, {tokens, w("norm.weight"), w("norm.bias")}, "connector.norm.out",
                                     {{"eps", static_cast<double>(c.projector_norm_eps)}});
    const ValueId fc1 = g->add_op(OpKind::kLinear, {normed, w("fc1.weight"), w("fc1.bias")}, "connector.fc1.out");
    const ValueId act = g->add_op(OpKind::kGelu, {fc1}, "connector.act");
    features = g->add_op(OpKind::kLinear, {act, w("fc2.weight"), w("fc2.bias")}, "connector.fc2.out");
  } else {
    features = g->add_op(OpKind::kLinear, {tokens, g->add_weight(vn::projection())}, "connector.proj.out");
  }
  g->add_output(std::string(kImageFeatures), features);
  default_pipeline().run(*g);
  return g;
}

}  // namespace genai::graph
