// The audio encoder as a static graph (artifact key "audio_encoder", method "audio_encoder"): a
// clip's features in, its audio embeddings out, in the text decoder's width:
//   inputs  input_features [1, rows, input_dim] float32 (the extractor's stacked log-mel rows,
//           zero past the clip), frame_mask [1, rows, 1] (1 for the clip's rows, 0 past it),
//           atten_mask [blocks, 1, context, context] (0 where query and key are both inside the
//           clip, -255 elsewhere: HF's mask of the last, padded block)
//   output  audio_features [1, rows / window * queries, text_dim]
// `rows` is a multiple of the attention context and of the projector's window; a clip fills at
// most speech_encoder_capacity of them. Rows past the clip never reach the clip's own: attention
// is masked, the depthwise convolution (its taps as rotations of the rows) reads zeros there
// (frame_mask), and the projector's windows see zeros there, as HF pads them.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "graph/graph.h"
#include "model/speech_tower.h"

namespace genai::graph {

inline constexpr std::string_view kAudioEncoder = "audio_encoder";
inline constexpr std::string_view kInputFeatures = "input_features";
inline constexpr std::string_view kFrameMask = "frame_mask";
inline constexpr std::string_view kAudioFeatures = "audio_features";

// InputError when `rows` is not a positive multiple of the context and the window.
std::shared_ptr<Graph> build_speech_encoder_graph(std::shared_ptr<const SpeechTower> tower, int64_t rows,
                                                  std::string name = std::string(kAudioEncoder));

// The graph's rows for `seconds` of features (the extractor's rows are 20 ms apart): the smallest
// multiple of the attention context and the projector window that holds them. A clip fills the
// capacity below, a few rows less (Granite Speech: 600 rows, clips of up to 11.86 s).
int64_t speech_encoder_rows(const SpeechTowerConfig& config, double seconds = 12.0);
// The feature rows a clip may fill in a graph of `rows`: half a convolution kernel less, so its
// rotations wrap zeros around.
int64_t speech_encoder_capacity(const SpeechTowerConfig& config, int64_t rows);
}  // namespace genai::graph
