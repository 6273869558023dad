#include "tokenizer/byte_level.h"

#include <array>
#include <unordered_map>

namespace genai::byte_level {
namespace {

std::string utf8_of(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s.push_back(static_cast<char>(cp));
  } else {  // the alphabet stays below U+0800
    s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return s;
}

struct Tables {
  std::array<std::string, 256> to_chars;
  std::array<int16_t, 0x200> from_cp;  // code point -> byte, -1 when not in the alphabet
  Tables() {
    from_cp.fill(-1);
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      const uint32_t cp = printable ? b : next++;
      to_chars[b] = utf8_of(cp);
      from_cp[cp] = static_cast<int16_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

const std::string& byte_to_chars(uint8_t b) { return tables().to_chars[b]; }

void encode(std::string_view bytes, std::string& out) {
  const auto& t = tables();
  for (char c : bytes) out += t.to_chars[static_cast<uint8_t>(c)];
}

bool decode(std::string_view chars, std::string& out) {
  const auto& t = tables();
  std::string bytes;
  bytes.reserve(chars.size());
  for (size_t i = 0; i < chars.size();) {
    const auto c0 = static_cast<uint8_t>(chars[i]);
    uint32_t cp;
    if (c0 < 0x80) {
      cp = c0;
      i += 1;
    } else if ((c0 & 0xE0) == 0xC0 && i + 1 < chars.size()) {
      cp = ((c0 & 0x1Fu) << 6) | (static_cast<uint8_t>(chars[i + 1]) & 0x3Fu);
      i += 2;
    } else {
      return false;
    }
    if (cp >= t.from_cp.size() || t.from_cp[cp] < 0) return false;
    bytes.push_back(static_cast<char>(t.from_cp[cp]));
  }
  out += bytes;
  return true;
}

}  // namespace genai::byte_level
