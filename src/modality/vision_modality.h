// Images (--image_path) for a vision-language model (SmolVLM, InternVL): the vision encoder
// program (graph and artifact key "vision_encoder"), calibrated on image tiles (those of
// --image_path's images, else of generated images: gradients, edges and noise, since nothing is
// downloaded) and quantized with the encoders' recipe; at run time each file decoded and split as
// the model's image processor does (its preprocessor_config.json), its tiles encoded (float graph
// or vision_encoder program), and its place in the prompt spelled as the model's processor
// spells it.
#pragma once

#include <memory>

#include "modality/modality.h"

namespace genai::modality {

std::unique_ptr<Modality> make_vision_modality();

}  // namespace genai::modality
