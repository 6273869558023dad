#include "support/wav_files.h"

#include <cmath>
#include <fstream>
#include <algorithm>
#include <numbers>
#include <random>
#include <stdexcept>

namespace genai::testing {

std::string wav_header(uint16_t format, uint16_t channels, uint32_t rate, uint16_t bits, uint32_t data_bytes) {
  std::string h = "RIFF";
  auto put32 = [&](uint32_t v) { for (int i = 0; i < 4; ++i) h += static_cast<char>(v >> (8 * i)); };
  auto put16 = [&](uint16_t v) { for (int i = 0; i < 2; ++i) h += static_cast<char>(v >> (8 * i)); };
  put32(36 + data_bytes);
  h += "WAVEfmt ";
  put32(16);
  put16(format);
  put16(channels);
  put32(rate);
  put32(rate * channels * bits / 8);
  put16(static_cast<uint16_t>(channels * bits / 8));
  put16(bits);
  h += "data";
  put32(data_bytes);
  return h;
}

void write_test_wav(const std::filesystem::path& path, double seconds, uint32_t seed, uint32_t rate) {
  const auto n = static_cast<uint32_t>(seconds * rate);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(-0.05, 0.05);
  std::string data = wav_header(1, 1, rate, 16, n * 2);
  const double f1 = 220.0 + 40.0 * (seed % 7), f2 = 3.1 * f1;
  for (uint32_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / rate;
    const double v = 0.4 * std::sin(2 * std::numbers::pi * f1 * t) + 0.2 * std::sin(2 * std::numbers::pi * f2 * t) + noise(rng);
    const auto s = static_cast<int16_t>(std::lround(std::clamp(v, -1.0, 1.0) * 32767.0));
    data += static_cast<char>(s & 0xff);
    data += static_cast<char>((s >> 8) & 0xff);
  }
  std::ofstream out(path, std::ios::binary);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace genai::testing
