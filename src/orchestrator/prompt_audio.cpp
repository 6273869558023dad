#include "orchestrator/prompt_audio.h"

#include "core/error.h"
#include "core/log.h"
#include "media/wav_file.h"

namespace genai::orchestrator {

PromptMedia prompt_audio(const std::vector<std::string>& paths, AudioEncoder& encoder,
                         const media::SpeechFeatureConfig& config, int32_t audio_token_id) {
  PromptMedia audio;
  audio.content_item = audio.placeholder = "<|audio|>";
  audio.token_id = audio_token_id;
  audio.dim = encoder.dim();
  // Each feature row stacks two hops of the mel spectrogram.
  const double row_seconds = 2.0 * static_cast<double>(config.hop_length) / static_cast<double>(config.sampling_rate);
  for (const std::string& path : paths) {
    const media::SpeechFeatures clip = media::speech_features(media::read_wav(path), config, path);
    if (clip.rows > encoder.capacity())
      throw_input_error("{}: {:.1f} s of audio; the audio encoder takes at most {:.1f} s", path,
                        static_cast<double>(clip.rows) * row_seconds, static_cast<double>(encoder.capacity()) * row_seconds);
    const std::vector<float> features = encoder.encode(clip);
    audio.features.insert(audio.features.end(), features.begin(), features.end());
    std::string tokens;
    for (int64_t i = 0; i < clip.audio_tokens; ++i) tokens += "<|audio|>";
    audio.expansions.push_back(std::move(tokens));
    log::info("{}: {} feature rows, {} audio tokens", path, clip.rows, clip.audio_tokens);
  }
  return audio;
}

}  // namespace genai::orchestrator
