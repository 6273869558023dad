#include "tokenizer/utf8.h"

namespace genai::utf8 {

size_t incomplete_tail(std::string_view s) {
  // Look back at most 3 bytes for a lead byte whose sequence runs past the end.
  const size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const uint8_t c = static_cast<uint8_t>(s[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    const size_t need = sequence_length(c);
    return need > back ? back : 0;
  }
  return 0;
}

}  // namespace genai::utf8
