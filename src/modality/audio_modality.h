// The audio encoder of a speech model through the quantization stage: its graph (clips of up to
// 12 s) calibrated on clips (those of --audio_path, else generated calibration audio: tones,
// chirps and noise, since nothing is downloaded), quantized with its own recipe (16a8w), and
// measured: the audio embeddings' SQNR against the float graph on the calibration clips.
#pragma once

#include <string>
#include <vector>

#include "model/model.h"
#include "orchestrator/encoder_quantization_step.h"
#include "pipeline/graph_bundle.h"

namespace genai::orchestrator {

// The encoder's float graph with its metadata (the fp16 / GPU programs).
pipeline::GraphBundle float_audio_encoder_bundle(const Model& model);
// InputError naming the file for an unreadable or unsuitable --audio_path clip.
// Samples: clips; source "--audio_path" or "generated audio".
EncoderQuantization quantize_audio_encoder(std::shared_ptr<const Model> model, const std::vector<std::string>& audio_paths);

}  // namespace genai::orchestrator
