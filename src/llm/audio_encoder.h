// The audio encoder as the runner uses it: one clip's feature rows in, its audio embeddings out,
// over a MethodRunner with the method "audio_encoder" (the float interpreter on the tower's graph,
// or the audio_encoder program), its inputs built by graph::speech_encoder_inputs from the
// signature (rows, width, attention context) and the capacity constant, float32 or quantized
// (llm/encoder_io.h).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "llm/encoder_io.h"
#include "llm/method_runner.h"
#include "media/speech_features.h"
#include "model/speech_tower.h"

namespace genai {

class AudioEncoder {
 public:
  // InputError naming the origin when the signature or the get_audio_capacity constant is not
  // the audio encoder's.
  explicit AudioEncoder(std::unique_ptr<MethodRunner> runner);
  ~AudioEncoder();

  int64_t dim() const { return dim_; }
  int64_t capacity() const { return capacity_; }  // feature rows a clip may fill
  // The clip's audio embeddings: [clip.audio_tokens, dim()].
  std::vector<float> encode(const media::SpeechFeatures& clip);

 private:
  std::unique_ptr<MethodRunner> runner_;
  int64_t rows_ = 0, width_ = 0, context_ = 0, capacity_ = 0, tokens_ = 0, dim_ = 0;
  std::vector<std::unique_ptr<EncoderIo>> in_;
  std::unique_ptr<EncoderIo> out_;
};

// The encoder over `tower`'s float graph of `rows` feature rows, run by the interpreter.
std::unique_ptr<AudioEncoder> make_graph_audio_encoder(std::shared_ptr<const SpeechTower> tower, int64_t rows);

}  // namespace genai
