// What the quantization stage does alike for every modality's encoder it quantizes beside the
// decoder: the encoder's float bundle calibrated on the modality's samples with the encoders'
// recipe (16a8w, upstream's encoder recipe) and its output's SQNR against float over those samples.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "modality/modality.h"
#include "pipeline/graph_bundle.h"

namespace genai::modality {

struct EncoderQuantization {
  pipeline::GraphBundle bundle;
  std::string recipe;
  int64_t samples = 0;    // calibration samples (image tiles, audio clips)
  double sqnr_db = 0.0;   // the output, QDQ against float, over the samples
  double seconds = 0.0;   // reading and preparing the samples included
  std::string source;     // "--image_path", "generated images", ...
};

// `paths`: the files of the modality's option (calibration media), or none. InputError naming the
// file for an unreadable or unsuitable one.
EncoderQuantization quantize_encoder(const Modality& modality, const Model& model, const std::vector<std::string>& paths);

}  // namespace genai::modality
