// The vision encoder of a vision-language model through the quantization stage: its graph
// calibrated on image tiles (those of --image_path's images, else of generated calibration
// images: gradients, edges and noise, since nothing is downloaded), quantized with its own recipe
// (16a8w, upstream's for smolvlm), and measured: the features' SQNR against the float graph on
// the calibration tiles.
#pragma once

#include <string>
#include <vector>

#include "model/model.h"
#include "pipeline/graph_bundle.h"

namespace genai::orchestrator {

struct VisionEncoderQuantization {
  pipeline::GraphBundle bundle;
  std::string recipe;
  int64_t tiles = 0;        // calibration tiles
  double sqnr_db = 0.0;     // features, QDQ against float, over the calibration tiles
  double seconds = 0.0;
  std::string source;       // "--image_path" or "generated images"
};

// The encoder's float graph with its metadata (the fp16 / GPU programs).
pipeline::GraphBundle float_vision_encoder_bundle(const Model& model);
// InputError naming the file for an unreadable --image_path image.
VisionEncoderQuantization quantize_vision_encoder(std::shared_ptr<const Model> model,
                                                  const std::vector<std::string>& image_paths);

}  // namespace genai::orchestrator
