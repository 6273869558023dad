#include "orchestrator/vision_encoder_quantization.h"

#include <chrono>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "graph/interpreter.h"
#include "graph/vision_encoder_graph.h"
#include "media/image_file.h"
#include "orchestrator/image_processing.h"

namespace genai::orchestrator {
namespace {

// Enough tiles for stable ranges, few enough that a full-size tower calibrates in seconds.
constexpr size_t kMaxCalibrationTiles = 8;

pipeline::Metadata vision_metadata(const VisionTowerConfig& c) {
  return {{"get_image_token_id", static_cast<int64_t>(c.image_token_id)},
          {"get_tokens_per_image", c.tokens_per_image()},
          {"get_image_size", c.image_size},
          {"get_vision_family", std::string(vision_family_name(c.family))}};
}

// Three deterministic pictures a tower sees something of: smooth colour gradients, hard edges
// (a checkerboard of coloured squares) and noise over a gradient, in two aspect ratios.
std::vector<media::RgbImage> generated_images(int64_t tile) {
  std::vector<media::RgbImage> images;
  uint32_t state = 12345u;
  auto noise = [&state] {
    state = state * 1664525u + 1013904223u;
    return static_cast<int>(state >> 24) - 128;
  };
  for (int kind = 0; kind < 3; ++kind) {
    const int64_t w = kind == 1 ? tile : tile * 3 / 2, h = kind == 1 ? tile * 3 / 2 : tile;
    media::RgbImage im(w, h);
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        uint8_t* p = im.row(y) + x * 3;
        int r = static_cast<int>(255 * x / w), g = static_cast<int>(255 * y / h), b = static_cast<int>(255 * (x + y) / (w + h));
        if (kind == 1 && ((x / 16 + y / 16) % 2 == 0)) r = 255 - r, g = 255 - b, b = 40;
        if (kind == 2) r += noise() / 2, g += noise() / 2, b += noise() / 2;
        p[0] = static_cast<uint8_t>(std::clamp(r, 0, 255));
        p[1] = static_cast<uint8_t>(std::clamp(g, 0, 255));
        p[2] = static_cast<uint8_t>(std::clamp(b, 0, 255));
      }
    images.push_back(std::move(im));
  }
  return images;
}

}  // namespace

pipeline::GraphBundle float_vision_encoder_bundle(const Model& model) {
  if (!model.vision) throw_failure("internal: a vision encoder bundle for a model without one");
  auto g = graph::build_vision_encoder_graph(model.vision);
  std::vector<pipeline::InputSpec> inputs;
  for (graph::ValueId id : g->inputs()) inputs.push_back({g->value(id).name, g->value(id).type.dtype, g->value(id).type.shape});
  pipeline::Metadata md = vision_metadata(model.vision->config);
  md["quant_recipe"] = std::string("float");
  return pipeline::GraphBundle(g, std::move(inputs), std::move(md), std::nullopt);
}

EncoderQuantization quantize_vision_encoder(std::shared_ptr<const Model> model, const std::vector<std::string>& image_paths) {
  const auto t0 = std::chrono::steady_clock::now();
  const VisionTower& tower = *model->vision;
  const ImageProcessing processing(tower.config.family, tower.processor_config);
  std::vector<media::RgbImage> images;
  if (image_paths.empty()) {
    images = generated_images(tower.config.image_size);
  } else {
    for (const auto& path : image_paths) images.push_back(media::read_image(path));
  }
  const int64_t M = tower.config.image_size, values = tower.config.channels * M * M;
  std::vector<graph::TensorMap> samples;
  for (const auto& image : images) {
    const media::ProcessedImage p = processing.process(image);
    if (p.tile_height != M || p.tile_width != M)
      throw_input_error("{}: tiles of {} x {} for a vision encoder of {} x {}", tower.processor_config.string(), p.tile_height,
                        p.tile_width, M, M);
    for (int64_t t = 0; t < p.tiles() && samples.size() < kMaxCalibrationTiles; ++t) {
      Tensor pixels = Tensor::zeros(DType::kF32, {1, tower.config.channels, M, M});
      std::memcpy(pixels.mutable_data<float>(), p.pixels.data() + t * values, static_cast<size_t>(values) * sizeof(float));
      samples.push_back({{std::string(graph::kPixelValues), std::move(pixels)}});
    }
  }
  return quantize_encoder_bundle(float_vision_encoder_bundle(*model), samples, vision_metadata(tower.config),
                                 std::string(graph::kImageFeatures), image_paths.empty() ? "generated images" : "--image_path",
                                 t0, "vision encoder", "tiles");
}

}  // namespace genai::orchestrator
