#include "modality/speech_encoder_inputs.h"

#include <algorithm>

#include "core/error.h"
#include "graph/decoder_graphs.h"
#include "graph/speech_encoder_graph.h"

namespace genai::modality {

graph::TensorMap speech_encoder_inputs(const media::SpeechFeatures& clip, const SpeechTowerConfig& c, int64_t R) {
  return speech_encoder_inputs(clip, c.input_dim, c.context, graph::speech_encoder_capacity(c, R), R);
}

graph::TensorMap speech_encoder_inputs(const media::SpeechFeatures& clip, int64_t input_dim, int64_t C, int64_t capacity, int64_t R) {
  if (clip.width != input_dim)
    throw_input_error("audio encoder: feature rows of {} values, the encoder takes {}", clip.width, input_dim);
  if (clip.rows > capacity)
    throw_input_error("audio encoder: the clip gives {} feature rows ({:.1f} s), the encoder takes at most {} ({:.1f} s)",
                      clip.rows, static_cast<double>(clip.rows) * 0.02, capacity, static_cast<double>(capacity) * 0.02);
  const int64_t blocks = R / C;
  Tensor features = Tensor::zeros(DType::kF32, {1, R, input_dim});
  std::copy(clip.values.begin(), clip.values.end(), features.mutable_data<float>());
  Tensor frame_mask = Tensor::zeros(DType::kF32, {1, R, 1});
  for (int64_t r = 0; r < clip.rows; ++r) frame_mask.mutable_data<float>()[r] = 1.0f;
  // Query and key both inside the clip: 0; else masked (HF's last block: its padded rows and
  // columns; blocks wholly past the clip give rows nobody reads).
  Tensor mask = Tensor::zeros(DType::kF32, {blocks, 1, C, C});
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t q = 0; q < C; ++q)
      for (int64_t k = 0; k < C; ++k)
        if (b * C + q >= clip.rows || b * C + k >= clip.rows) mask.mutable_data<float>()[(b * C + q) * C + k] = graph::kMaskedValue;
  graph::TensorMap in;
  in.emplace(std::string(graph::kInputFeatures), std::move(features));
  in.emplace(std::string(graph::kFrameMask), std::move(frame_mask));
  in.emplace("atten_mask", std::move(mask));
  return in;
}

}  // namespace genai::modality
