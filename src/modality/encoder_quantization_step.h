// What the quantization stage does alike for every encoder it quantizes beside the decoder (the
// vision and the audio encoder): the encoder's float bundle calibrated on its samples with its own
// recipe (16a8w, upstream's encoder recipe) and its output's SQNR against float over those
// samples.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "graph/interpreter.h"
#include "pipeline/graph_bundle.h"

namespace genai::orchestrator {

struct EncoderQuantization {
  pipeline::GraphBundle bundle;
  std::string recipe;
  int64_t samples = 0;    // calibration samples (image tiles, audio clips)
  double sqnr_db = 0.0;   // the output, QDQ against float, over the samples
  double seconds = 0.0;   // from `started` (reading and preparing the samples included)
  std::string source;     // "--image_path", "generated images", ...
};

// `label` ("vision encoder") and `unit` ("tiles") name it in the log.
EncoderQuantization quantize_encoder_bundle(const pipeline::GraphBundle& float_bundle,
                                            const std::vector<graph::TensorMap>& samples, pipeline::Metadata metadata,
                                            const std::string& output, std::string source,
                                            std::chrono::steady_clock::time_point started, std::string_view label,
                                            std::string_view unit);

}  // namespace genai::orchestrator
