// --audio_path: the clips of a run as the first prompt carries them. Each WAV file becomes the
// model's features (its feature extractor's settings), is encoded by the audio encoder (float
// graph or audio_encoder program), and stands in the prompt as Granite Speech's processor
// spells it: one "<|audio|>" per audio embedding.
#pragma once

#include <string>
#include <vector>

#include "llm/audio_encoder.h"
#include "llm/generation.h"
#include "media/speech_features.h"

namespace genai::orchestrator {

// InputError naming the file for an unreadable clip, another rate or channel count, or a clip
// longer than the encoder takes.
PromptMedia prompt_audio(const std::vector<std::string>& paths, AudioEncoder& encoder,
                         const media::SpeechFeatureConfig& features, int32_t audio_token_id);

}  // namespace genai::orchestrator
