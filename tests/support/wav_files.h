// Test audio written without Python: RIFF/WAVE headers of any layout (for the reader's bad-input
// tests) and a deterministic 16-bit mono clip (two tones and noise from `seed`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace genai::testing {

// A canonical 44-byte header: `format` 1 = PCM, 3 = IEEE float; `data_bytes` as the data chunk
// declares it (the caller appends the samples, or fewer to make a truncated file).
std::string wav_header(uint16_t format, uint16_t channels, uint32_t rate, uint16_t bits, uint32_t data_bytes);

// Throws std::runtime_error when the file cannot be written.
void write_test_wav(const std::filesystem::path& path, double seconds, uint32_t seed, uint32_t rate = 16000);

}  // namespace genai::testing
