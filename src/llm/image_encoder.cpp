#include "llm/image_encoder.h"

#include <cstring>

#include <fmt/format.h>

#include "core/error.h"
#include "graph/executor.h"
#include "graph/vision_encoder_graph.h"
#include "llm/graph_method_runner.h"

namespace genai {
namespace {

const std::string kMethod(graph::kVisionEncoder);

kernels::ActType act_type(DType d) { return d == DType::kU8 ? kernels::ActType::kU8 : kernels::ActType::kU16; }

}  // namespace

ImageEncoder::ImageEncoder(std::unique_ptr<MethodRunner> runner) : runner_(std::move(runner)) {
  const std::string origin = runner_->origin();
  if (!runner_->has_method(kMethod)) throw_input_error("{}: no {} method", origin, kMethod);
  const auto& ins = runner_->inputs(kMethod);
  const auto& outs = runner_->outputs(kMethod);
  if (ins.size() != 1 || ins[0].name != graph::kPixelValues || outs.size() != 1 || outs[0].name != graph::kImageFeatures)
    throw_input_error("{}: method {} must map {} to {} alone", origin, kMethod, graph::kPixelValues, graph::kImageFeatures);
  const auto& p = ins[0].shape;
  const auto& f = outs[0].shape;
  if (p.size() != 4 || p[0] != 1 || p[2] != p[3] || p[1] < 1 || p[2] < 1 || f.size() != 3 || f[0] != 1 || f[1] < 1 || f[2] < 1)
    throw_input_error("{}: method {}: {} [1, C, M, M] and {} [1, tokens, dim] expected", origin, kMethod,
                      graph::kPixelValues, graph::kImageFeatures);
  channels_ = p[1], tile_ = p[2], tokens_ = f[1], dim_ = f[2];
  auto side = [&](const runtime::IoDesc& d, const char* what, Side& s) {
    if (d.dtype != DType::kF32 && d.dtype != DType::kU8 && d.dtype != DType::kU16)
      throw_input_error("{}: method {}: {} is {}, expected float32, uint8 or uint16", origin, kMethod, d.name, dtype_name(d.dtype));
    s.dtype = d.dtype;
    s.bytes.assign(static_cast<size_t>(shape_numel(d.shape)) * dtype_size(d.dtype), 0);
    if (d.dtype == DType::kF32) return;
    const auto scale = runner_->constant_double(fmt::format("get_{}_scale", what));
    const auto zp = runner_->constant_int(fmt::format("get_{}_zero_point", what));
    if (!scale || !zp || !(*scale > 0.0))
      throw_input_error("{}: quantized {} need the constant methods get_{}_scale (positive) and get_{}_zero_point", origin,
                        d.name, what, what);
    s.q.scale = static_cast<float>(*scale);
    s.q.zero_point = static_cast<int32_t>(*zp);
    s.q.qmin = 0;
    s.q.qmax = d.dtype == DType::kU8 ? 255 : 65535;
  };
  side(ins[0], "pixel_values", in_);
  side(outs[0], "image_features", out_);
}

ImageEncoder::~ImageEncoder() = default;

std::vector<float> ImageEncoder::encode(std::span<const float> pixels) {
  const size_t per_tile = static_cast<size_t>(channels_ * tile_ * tile_);
  if (pixels.empty() || pixels.size() % per_tile != 0)
    throw_input_error("{}: {} pixel values are not whole tiles of {} x {} x {}", runner_->origin(), pixels.size(), channels_,
                      tile_, tile_);
  const size_t tiles = pixels.size() / per_tile, rows = static_cast<size_t>(tokens_ * dim_);
  std::vector<float> features(tiles * rows);
  const runtime::BufferRef in{in_.bytes.data(), in_.bytes.size()}, out{out_.bytes.data(), out_.bytes.size()};
  for (size_t t = 0; t < tiles; ++t) {
    const float* x = pixels.data() + t * per_tile;
    if (in_.dtype == DType::kF32)
      std::memcpy(in_.bytes.data(), x, per_tile * sizeof(float));
    else
      kernels::quantize(x, static_cast<int64_t>(per_tile), in_.q, act_type(in_.dtype), in_.bytes.data());
    runner_->run(kMethod, std::span(&in, 1), std::span(&out, 1));
    float* y = features.data() + t * rows;
    if (out_.dtype == DType::kF32)
      std::memcpy(y, out_.bytes.data(), rows * sizeof(float));
    else
      kernels::dequantize(out_.bytes.data(), act_type(out_.dtype), static_cast<int64_t>(rows), out_.q, y);
  }
  return features;
}

std::unique_ptr<ImageEncoder> make_graph_image_encoder(std::shared_ptr<const VisionTower> tower) {
  graph::GraphMap graphs{{kMethod, graph::build_vision_encoder_graph(std::move(tower))}};
  return std::make_unique<ImageEncoder>(std::make_unique<GraphMethodRunner>(
      std::make_unique<graph::InterpreterExecutor>(std::move(graphs)), "the vision encoder graph", "the image size"));
}

}  // namespace genai
