#include "llm/image_encoder.h"

#include <cstring>

#include "core/error.h"
#include "graph/executor.h"
#include "graph/vision_encoder_graph.h"
#include "llm/graph_method_runner.h"

namespace genai {
namespace {

const std::string kVisionMethod(graph::kVisionEncoder);

}  // namespace

ImageEncoder::ImageEncoder(std::unique_ptr<MethodRunner> runner) : runner_(std::move(runner)) {
  const std::string origin = runner_->origin();
  if (!runner_->has_method(kVisionMethod)) throw_input_error("{}: no {} method", origin, kVisionMethod);
  const auto& ins = runner_->inputs(kVisionMethod);
  const auto& outs = runner_->outputs(kVisionMethod);
  if (ins.size() != 1 || ins[0].name != graph::kPixelValues || outs.size() != 1 || outs[0].name != graph::kImageFeatures)
    throw_input_error("{}: method {} must map {} to {} alone", origin, kVisionMethod, graph::kPixelValues, graph::kImageFeatures);
  const auto& p = ins[0].shape;
  const auto& f = outs[0].shape;
  if (p.size() != 4 || p[0] != 1 || p[2] != p[3] || p[1] < 1 || p[2] < 1 || f.size() != 3 || f[0] != 1 || f[1] < 1 || f[2] < 1)
    throw_input_error("{}: method {}: {} [1, C, M, M] and {} [1, tokens, dim] expected", origin, kVisionMethod,
                      graph::kPixelValues, graph::kImageFeatures);
  channels_ = p[1], tile_ = p[2], tokens_ = f[1], dim_ = f[2];
  in_ = std::make_unique<EncoderIo>(*runner_, ins[0], kVisionMethod);
  out_ = std::make_unique<EncoderIo>(*runner_, outs[0], kVisionMethod);
}

ImageEncoder::~ImageEncoder() = default;

std::vector<float> ImageEncoder::encode(std::span<const float> pixels) {
  const size_t per_tile = static_cast<size_t>(channels_ * tile_ * tile_);
  if (pixels.empty() || pixels.size() % per_tile != 0)
    throw_input_error("{}: {} pixel values are not whole tiles of {} x {} x {}", runner_->origin(), pixels.size(), channels_,
                      tile_, tile_);
  const size_t tiles = pixels.size() / per_tile, rows = static_cast<size_t>(tokens_ * dim_);
  std::vector<float> features(tiles * rows);
  const runtime::BufferRef in = in_->buffer(), out = out_->buffer();
  for (size_t t = 0; t < tiles; ++t) {
    in_->write(pixels.data() + t * per_tile);
    runner_->run(kVisionMethod, std::span(&in, 1), std::span(&out, 1));
    out_->read(features.data() + t * rows);
  }
  return features;
}

std::unique_ptr<ImageEncoder> make_graph_image_encoder(std::shared_ptr<const VisionTower> tower) {
  graph::GraphMap graphs{{kVisionMethod, graph::build_vision_encoder_graph(std::move(tower))}};
  return std::make_unique<ImageEncoder>(std::make_unique<GraphMethodRunner>(
      std::make_unique<graph::InterpreterExecutor>(std::move(graphs)), "the vision encoder graph", "the image size"));
}

}  // namespace genai
