// Audio (--audio_path) for a speech model (Granite Speech): the audio encoder program (graph and
// artifact key "audio_encoder", clips of up to 12 s), calibrated on clips (those of --audio_path,
// else generated audio: tones, chirps and noise, since nothing is downloaded) and quantized with
// the encoders' recipe; at run time each WAV file becomes the model's features (its feature
// extractor's settings), is encoded (float graph or audio_encoder program), and stands in the
// prompt as one "<|audio|>" per audio embedding.
#pragma once

#include <memory>

#include "modality/modality.h"

namespace genai::modality {

std::unique_ptr<Modality> make_audio_modality();

}  // namespace genai::modality
