// GPT-2's reversible byte <-> printable-character alphabet used by byte-level BPE vocabularies:
// printable Latin-1 bytes map to themselves, the other 68 bytes to U+0100.. in byte order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace genai::byte_level {

// UTF-8 text of the character byte `b` is written as in vocab strings ("Ġ" for ' ').
const std::string& byte_to_chars(uint8_t b);

// Appends the byte-level spelling of `bytes` to `out`.
void encode(std::string_view bytes, std::string& out);

// Decodes a vocab string back to raw bytes. Returns false (and leaves `out` unchanged) when a
// character is outside the byte alphabet, as for special tokens such as "<｜begin▁of▁sentence｜>".
bool decode(std::string_view chars, std::string& out);

}  // namespace genai::byte_level
