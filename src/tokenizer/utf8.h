// UTF-8 helpers the tokenizers share: character lengths and completeness of byte streams.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace genai::utf8 {

// Length of the UTF-8 sequence a lead byte announces (1 for stray continuation/invalid bytes, so
// that walking a string always advances).
inline size_t sequence_length(uint8_t lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

// Length of the character starting at `pos`, clipped to the string end.
inline size_t char_length(std::string_view s, size_t pos) {
  size_t n = sequence_length(static_cast<uint8_t>(s[pos]));
  return pos + n > s.size() ? s.size() - pos : n;
}

// Number of bytes at the end of `s` that start a UTF-8 sequence not yet complete (0..3); a
// streaming decoder holds them back until the next token completes the character.
size_t incomplete_tail(std::string_view s);

}  // namespace genai::utf8
