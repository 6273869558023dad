// What every tokenizer fuzz target does with a tokenizer its reader accepted: encode the probe
// text, decode it back, stream it token by token, and look up stop and special tokens. Any crash
// or sanitizer report in there is a finding; InputErrors are caught by the caller.
#pragma once

#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_files.h"
#include "tokenizer/tokenizer.h"

namespace genai::fuzz {

inline void exercise_tokenizer(const Tokenizer& tok, std::string_view special) {
  const auto ids = tok.encode(kProbeText, true);
  (void)tok.decode(ids);
  int32_t prev = -1;
  for (int32_t id : ids) {
    (void)tok.token_bytes(prev, id);
    prev = id;
  }
  (void)tok.stop_ids();
  (void)tok.special_id(special);
}

}  // namespace genai::fuzz
