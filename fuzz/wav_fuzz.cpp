// libFuzzer target: WAV files through the reader, and short mono 16 kHz ones on through Granite
// Speech's features (mel spectrogram, log, stacking). Anything but InputError is a finding.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "media/speech_features.h"
#include "media/wav_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const genai::media::AudioClip clip = genai::media::parse_wav(data, size, "fuzz.wav");
    if (clip.frames() <= 4000) (void)genai::media::speech_features(clip, genai::media::SpeechFeatureConfig{}, "fuzz.wav");
  } catch (const genai::InputError&) {
  }
  return 0;
}
