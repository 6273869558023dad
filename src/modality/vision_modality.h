// The vision encoder of a vision-language model through the quantization stage: its graph
// calibrated on image tiles (those of --image_path's images, else of generated calibration
// images: gradients, edges and noise, since nothing is downloaded), quantized with its own recipe
// (16a8w, upstream's for smolvlm), and measured: the features' SQNR against the float graph on
// the calibration tiles.
#pragma once

#include <string>
#include <vector>

#include "model/model.h"
#include "orchestrator/encoder_quantization_step.h"
#include "pipeline/graph_bundle.h"

namespace genai::orchestrator {

// The encoder's float graph with its metadata (the fp16 / GPU programs).
pipeline::GraphBundle float_vision_encoder_bundle(const Model& model);
// InputError naming the file for an unreadable --image_path image.
// Samples: image tiles; source "--image_path" or "generated images".
EncoderQuantization quantize_vision_encoder(std::shared_ptr<const Model> model, const std::vector<std::string>& image_paths);

}  // namespace genai::orchestrator
