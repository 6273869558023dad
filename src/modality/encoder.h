// The vision encoder as the runner uses it: one tile of pixels in, its feature rows out, over a
// MethodRunner with the method "vision_encoder" (the float interpreter on the tower's graph, the
// QDQ reference, or the vision_encoder program). Quantized programs take and give codes: the
// pixels are quantized and the features dequantized with the encodings the program publishes as
// constants (get_pixel_values_scale / _zero_point, get_image_features_scale / _zero_point).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "llm/encoder_io.h"
#include "llm/method_runner.h"
#include "model/vision_tower.h"

namespace genai {

class ImageEncoder {
 public:
  // Reads the layout from the signature: pixel_values [1, C, M, M], image_features [1, S, dim],
  // float32, uint8 or uint16 (then with the constants above). InputError naming the origin otherwise.
  explicit ImageEncoder(std::unique_ptr<MethodRunner> runner);
  ~ImageEncoder();

  int64_t channels() const { return channels_; }
  int64_t tile_size() const { return tile_; }
  int64_t tokens_per_tile() const { return tokens_; }
  int64_t dim() const { return dim_; }
  const MethodRunner& runner() const { return *runner_; }

  // The features of every tile of `pixels` ([tiles, C, M, M] float32), tile after tile:
  // [tiles * tokens_per_tile(), dim()].
  std::vector<float> encode(std::span<const float> pixels);

 private:
  std::unique_ptr<MethodRunner> runner_;
  int64_t channels_ = 0, tile_ = 0, tokens_ = 0, dim_ = 0;
  std::unique_ptr<EncoderIo> in_, out_;
};

// The encoder over `tower`'s float graph run by the interpreter.
std::unique_ptr<ImageEncoder> make_graph_image_encoder(std::shared_ptr<const VisionTower> tower);

}  // namespace genai
