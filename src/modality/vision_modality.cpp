#include "modality/vision_modality.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/error.h"
#include "core/log.h"
#include "graph/vision_encoder_graph.h"
#include "media/image_file.h"
#include "modality/encoder.h"
#include "modality/image_processing.h"

namespace genai::modality {
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

// The vision encoder's signature: pixel_values [1, C, M, M] in, image_features [1, S, dim] out.
struct TileShape {
  int64_t channels = 0, tile = 0, tokens = 0, dim = 0;
};

TileShape tile_shape(const Encoder& encoder) {
  const auto& ins = encoder.inputs();
  const auto& out = encoder.output();
  const std::string origin = encoder.runner().origin();
  if (ins.size() != 1 || ins[0].name != graph::kPixelValues || out.name != graph::kImageFeatures)
    throw_input_error("{}: method {} must map {} to {} alone", origin, encoder.method(), graph::kPixelValues,
                      graph::kImageFeatures);
  const auto& p = ins[0].shape;
  const auto& f = out.shape;
  if (p.size() != 4 || p[0] != 1 || p[2] != p[3] || p[1] < 1 || p[2] < 1 || f.size() != 3 || f[0] != 1 || f[1] < 1 || f[2] < 1)
    throw_input_error("{}: method {}: {} [1, C, M, M] and {} [1, tokens, dim] expected", origin, encoder.method(),
                      graph::kPixelValues, graph::kImageFeatures);
  return {p[1], p[2], f[1], f[2]};
}

// --image_path: each file decoded and split as the model's image processor does, its tiles encoded
// tile after tile, and its place in the prompt spelled as the model's processor spells it.
class ImagePrompter final : public MediaPrompter {
 public:
  ImagePrompter(std::unique_ptr<Encoder> encoder, ImageProcessing processing, int32_t image_token_id)
      : encoder_(std::move(encoder)), shape_(tile_shape(*encoder_)), processing_(std::move(processing)),
        token_id_(image_token_id) {
    if (processing_.tile_size() != shape_.tile)
      throw_input_error("the image processor's tiles are {} pixels but the vision encoder takes {}", processing_.tile_size(),
                        shape_.tile);
  }

  PromptMedia prompt(const std::vector<std::string>& paths) override {
    PromptMedia images;
    images.content_item = processing_.content_item();
    images.placeholder = processing_.placeholder();
    images.token_id = token_id_;
    images.dim = shape_.dim;
    for (const std::string& path : paths) {
      const media::ProcessedImage image = processing_.process(media::read_image(path));
      const std::vector<float> features = encode(image.pixels);
      images.features.insert(images.features.end(), features.begin(), features.end());
      images.expansions.push_back(processing_.expansion(image, shape_.tokens));
      images.tiles += image.tiles();
      log::info("{}: {} tile(s) ({} x {}{}), {} image tokens", path, image.tiles(), image.rows, image.cols,
                image.tiles() > 1 ? " + the whole image" : "", image.tiles() * shape_.tokens);
    }
    return images;
  }

 private:
  // The features of every tile of `pixels` ([tiles, C, M, M]): [tiles * tokens, dim].
  std::vector<float> encode(std::span<const float> pixels) {
    const size_t per_tile = static_cast<size_t>(shape_.channels * shape_.tile * shape_.tile);
    if (pixels.empty() || pixels.size() % per_tile != 0)
      throw_input_error("{}: {} pixel values are not whole tiles of {} x {} x {}", encoder_->runner().origin(),
                        pixels.size(), shape_.channels, shape_.tile, shape_.tile);
    const size_t tiles = pixels.size() / per_tile, rows = static_cast<size_t>(shape_.tokens * shape_.dim);
    std::vector<float> features(tiles * rows);
    for (size_t t = 0; t < tiles; ++t) {
      const float* tile = pixels.data() + t * per_tile;
      encoder_->run(std::span(&tile, 1), features.data() + t * rows);
    }
    return features;
  }

  std::unique_ptr<Encoder> encoder_;
  TileShape shape_;
  ImageProcessing processing_;
  int32_t token_id_;
};

class VisionModality final : public Modality {
 public:
  std::string_view name() const override { return "vision"; }
  pipeline::EncoderProgram program() const override {
    return {pipeline::GraphName::kVisionEncoder, pipeline::ArtifactKey::kVisionEncoder};
  }
  std::string_view option_name() const override { return "image_path"; }
  std::string_view token_id_constant() const override { return "get_image_token_id"; }
  std::string_view sample_unit() const override { return "tiles"; }
  bool present_in(const Model& model) const override { return model.vision != nullptr; }
  std::filesystem::path processor_config(const Model& model) const override { return tower(model).processor_config; }

  pipeline::GraphBundle float_bundle(const Model& model) const override {
    tower(model);  // Failure without one
    auto g = graph::build_vision_encoder_graph(model.vision);
    std::vector<pipeline::InputSpec> inputs;
    for (graph::ValueId id : g->inputs()) inputs.push_back({g->value(id).name, g->value(id).type.dtype, g->value(id).type.shape});
    pipeline::Metadata md = vision_metadata(model.vision->config);
    md["quant_recipe"] = std::string("float");
    return pipeline::GraphBundle(g, std::move(inputs), std::move(md), std::nullopt);
  }

  // Image tiles: those of --image_path's images, else of generated calibration images (gradients,
  // edges and noise, since nothing is downloaded).
  EncoderCalibration calibration(const Model& model, const std::vector<std::string>& image_paths) const override {
    const VisionTower& t = tower(model);
    const ImageProcessing processing(t.config.family, t.processor_config);
    std::vector<media::RgbImage> images;
    if (image_paths.empty()) {
      images = generated_images(t.config.image_size);
    } else {
      for (const auto& path : image_paths) images.push_back(media::read_image(path));
    }
    const int64_t M = t.config.image_size, values = t.config.channels * M * M;
    EncoderCalibration c;
    for (const auto& image : images) {
      const media::ProcessedImage p = processing.process(image);
      if (p.tile_height != M || p.tile_width != M)
        throw_input_error("{}: tiles of {} x {} for a vision encoder of {} x {}", t.processor_config.string(), p.tile_height,
                          p.tile_width, M, M);
      for (int64_t i = 0; i < p.tiles() && c.samples.size() < kMaxCalibrationTiles; ++i) {
        Tensor pixels = Tensor::zeros(DType::kF32, {1, t.config.channels, M, M});
        std::memcpy(pixels.mutable_data<float>(), p.pixels.data() + i * values, static_cast<size_t>(values) * sizeof(float));
        c.samples.push_back({{std::string(graph::kPixelValues), std::move(pixels)}});
      }
    }
    c.metadata = vision_metadata(t.config);
    c.output = std::string(graph::kImageFeatures);
    c.source = image_paths.empty() ? "generated images" : "--image_path";
    return c;
  }

  std::unique_ptr<MediaPrompter> open_program(const runtime::ArtifactDir& dir) const override {
    auto runner = program_encoder_runner(dir, pipeline::ArtifactKey::kVisionEncoder);
    const std::string origin = runner->origin();
    const auto token = runner->constant_int(token_id_constant());
    const auto family = runner->program().constant_string("get_vision_family");
    if (!token || !family) throw_input_error("{}: no get_image_token_id or get_vision_family constant", origin);
    const std::filesystem::path processor = processor_of(dir, pipeline::ArtifactKey::kVisionEncoder);
    return std::make_unique<ImagePrompter>(std::make_unique<Encoder>(std::move(runner), std::string(graph::kVisionEncoder)),
                                           ImageProcessing(vision_family_from_name(*family, origin), processor),
                                           static_cast<int32_t>(*token));
  }

  std::unique_ptr<MediaPrompter> open_float(std::shared_ptr<const Model> model) const override {
    const VisionTower& t = tower(*model);
    auto runner = float_encoder_runner(float_bundle(*model), std::string(graph::kVisionEncoder), "the vision encoder graph",
                                       "the image size");
    return std::make_unique<ImagePrompter>(std::make_unique<Encoder>(std::move(runner), std::string(graph::kVisionEncoder)),
                                           ImageProcessing(t.config.family, t.processor_config), t.config.image_token_id);
  }

  void add_stats(const PromptMedia& media, double ms, GenerationStats& stats) const override {
    stats.images = static_cast<int64_t>(media.expansions.size());
    stats.image_tiles = media.tiles;
    stats.image_ms = ms;
  }
  std::string_view notes_count_name() const override { return "images"; }
  std::string_view notes_ms_name() const override { return "image_ms"; }
  std::string_view metric_ms_name() const override { return "image_encode_ms"; }

 private:
  static const VisionTower& tower(const Model& model) {
    if (!model.vision) throw_failure("internal: a vision encoder for a model without one");
    return *model.vision;
  }
};

}  // namespace

std::unique_ptr<Modality> make_vision_modality() { return std::make_unique<VisionModality>(); }

}  // namespace genai::modality
