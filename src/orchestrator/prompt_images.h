// --image_path: the images of a run as the first prompt carries them. Each file is decoded and
// split as the model's image processor does (its preprocessor_config.json), its tiles encoded by
// the vision encoder (float graph or vision_encoder program), and its place in the prompt spelled
// as the model's processor spells it.
#pragma once

#include <string>
#include <vector>

#include "llm/generation.h"
#include "llm/image_encoder.h"
#include "orchestrator/image_processing.h"

namespace genai::orchestrator {

// InputError naming the file for an unreadable image, and naming the processor when its tile
// size is not the encoder's.
PromptMedia prompt_images(const std::vector<std::string>& paths, ImageEncoder& encoder, const ImageProcessing& processing,
                           int32_t image_token_id);

}  // namespace genai::orchestrator
