#include "media/wav_file.h"

#include <cstring>
#include <string>

#include "core/error.h"
#include "core/mapped_file.h"

namespace genai::media {
namespace {

constexpr uint16_t kPcm = 1, kFloat = 3, kExtensible = 0xFFFE;

uint32_t u32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24; }
uint16_t u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

struct Format {
  uint16_t tag = 0, channels = 0, block_align = 0, bits = 0;
  uint32_t rate = 0;
};

float sample_at(const uint8_t* p, const Format& f) {
  if (f.tag == kFloat) {
    if (f.bits == 32) {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    double v;
    std::memcpy(&v, p, 8);
    return static_cast<float>(v);
  }
  switch (f.bits) {
    case 8: return static_cast<float>(static_cast<int>(p[0]) - 128) / 128.0f;
    case 16: return static_cast<float>(static_cast<int16_t>(u16(p))) / 32768.0f;
    case 24: {
      const int32_t v = static_cast<int32_t>((p[0] << 8) | (p[1] << 16) | (static_cast<uint32_t>(p[2]) << 24)) >> 8;
      return static_cast<float>(v) / 8388608.0f;
    }
    default: return static_cast<float>(static_cast<double>(static_cast<int32_t>(u32(p))) / 2147483648.0);
  }
}

}  // namespace

AudioClip parse_wav(const uint8_t* d, size_t size, const std::string& origin) {
  if (size < 12 || std::memcmp(d, "RIFF", 4) != 0 || std::memcmp(d + 8, "WAVE", 4) != 0)
    throw_input_error("{}: not a WAV file (no RIFF/WAVE header)", origin);
  Format f;
  bool have_format = false;
  const uint8_t* data = nullptr;
  size_t data_size = 0;
  for (size_t at = 12; at + 8 <= size;) {
    const uint32_t chunk = u32(d + at + 4);
    const uint8_t* body = d + at + 8;
    if (chunk > size - at - 8) throw_input_error("{}: a '{}' chunk of {} bytes runs past the end: truncated", origin,
                                                 std::string(reinterpret_cast<const char*>(d + at), 4), chunk);
    if (std::memcmp(d + at, "fmt ", 4) == 0) {
      if (chunk < 16) throw_input_error("{}: the fmt chunk holds {} bytes, at least 16 expected", origin, chunk);
      f.tag = u16(body);
      f.channels = u16(body + 2);
      f.rate = u32(body + 4);
      f.block_align = u16(body + 12);
      f.bits = u16(body + 14);
      if (f.tag == kExtensible) {
        if (chunk < 40) throw_input_error("{}: an extensible fmt chunk of {} bytes, 40 expected", origin, chunk);
        f.tag = u16(body + 24);  // the sub-format GUID's first field
      }
      have_format = true;
    } else if (std::memcmp(d + at, "data", 4) == 0) {
      data = body;
      data_size = chunk;
    }
    at += 8 + static_cast<size_t>(chunk) + (chunk & 1);  // chunks are padded to even sizes
  }
  if (!have_format) throw_input_error("{}: no fmt chunk", origin);
  if (!data) throw_input_error("{}: no data chunk", origin);
  const bool pcm_ok = f.tag == kPcm && (f.bits == 8 || f.bits == 16 || f.bits == 24 || f.bits == 32);
  const bool float_ok = f.tag == kFloat && (f.bits == 32 || f.bits == 64);
  if (!pcm_ok && !float_ok)
    throw_input_error("{}: sample format {} with {} bits is not supported (valid: PCM of 8, 16, 24 or 32 bits, float of 32 "
                      "or 64 bits)",
                      origin, f.tag, f.bits);
  if (f.channels == 0 || f.rate == 0 || f.block_align != f.channels * (f.bits / 8))
    throw_input_error("{}: {} channel(s) at {} Hz with block align {} do not describe {}-bit samples", origin, f.channels,
                      f.rate, f.block_align, f.bits);
  if (data_size % f.block_align != 0)
    throw_input_error("{}: the data chunk holds {} bytes, not whole frames of {}: truncated", origin, data_size, f.block_align);
  AudioClip clip;
  clip.sample_rate = f.rate;
  clip.channels = f.channels;
  const size_t bytes = f.bits / 8, n = data_size / bytes;
  clip.samples.resize(n);
  for (size_t i = 0; i < n; ++i) clip.samples[i] = sample_at(data + i * bytes, f);
  return clip;
}

AudioClip read_wav(const std::filesystem::path& path) {
  std::shared_ptr<const MappedFile> file;
  try {
    file = MappedFile::open(path);
  } catch (const InputError&) {
    throw_input_error("{}: cannot be read", path.string());
  }
  return parse_wav(file->data(), file->size(), path.string());
}

}  // namespace genai::media
