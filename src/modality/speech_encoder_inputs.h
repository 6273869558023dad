// The audio encoder graph's inputs (graph/speech_encoder_graph.h) for one clip, packed from the
// clip's features at run time and for calibration: its feature rows, zeros past them, and the
// masks (frame_mask; atten_mask: 0 where query and key are both inside the clip, masked elsewhere).
#pragma once

#include <cstdint>

#include "graph/interpreter.h"
#include "media/speech_features.h"
#include "model/speech_tower.h"

namespace genai::modality {

// InputError when the clip has more rows than the graph can take (naming both) or rows of
// another width.
graph::TensorMap speech_encoder_inputs(const media::SpeechFeatures& clip, const SpeechTowerConfig& config, int64_t rows);
// The same from the graph's own numbers (a compiled program's signature and constants).
graph::TensorMap speech_encoder_inputs(const media::SpeechFeatures& clip, int64_t input_dim, int64_t context,
                                       int64_t capacity, int64_t rows);

}  // namespace genai::modality
