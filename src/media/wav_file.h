// Audio input: WAV files (RIFF/WAVE: integer PCM of 8, 16, 24 or 32 bits, IEEE float of 32 or 64
// bits, plain or WAVE_FORMAT_EXTENSIBLE) to float samples in [-1, 1), integers divided by 2^(bits-1)
// as soundfile and torchaudio read them (8-bit PCM is unsigned, centred on 128). Hand-written: the
// format is a chunk list (see README), and every size in it is checked against the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace genai::media {

struct AudioClip {
  int64_t sample_rate = 0;
  int64_t channels = 0;
  std::vector<float> samples;  // interleaved, frames * channels
  int64_t frames() const { return channels > 0 ? static_cast<int64_t>(samples.size()) / channels : 0; }
};

// InputError naming the file for a missing or unreadable file, one that is not RIFF/WAVE, a
// truncated or inconsistent chunk, or a sample format not listed above.
AudioClip read_wav(const std::filesystem::path& path);
// The same from bytes in memory (`origin` names them in errors).
AudioClip parse_wav(const uint8_t* data, size_t size, const std::string& origin);

}  // namespace genai::media
