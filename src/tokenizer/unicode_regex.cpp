#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/unicode_regex.h"

#include <pcre2.h>

#include "core/error.h"

namespace genai {
namespace {

pcre2_code* as_code(void* p) { return static_cast<pcre2_code*>(p); }

// One match-data block per thread: allocating it per call would dominate the cost of splitting
// many short pieces. Only the whole-match range is read, so a small ovector serves every pattern.
struct MatchData {
  pcre2_match_data* data = nullptr;
  MatchData() : data(pcre2_match_data_create(4, nullptr)) {}
  ~MatchData() { pcre2_match_data_free(data); }
};

}  // namespace

UnicodeRegex::UnicodeRegex(std::string pattern, std::string_view origin) : pattern_(std::move(pattern)) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern_.data()), pattern_.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    throw_input_error("{}: pre-tokenizer regex {:?} does not compile at offset {}: {}", origin, pattern_, offset,
                      reinterpret_cast<const char*>(message));
  }
  code_ = code;
  // Without JIT support pcre2_match falls back to the interpreter: slower, same results.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
}

UnicodeRegex::~UnicodeRegex() { pcre2_code_free(as_code(code_)); }

bool UnicodeRegex::find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& ranges) const {
  thread_local MatchData md;
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  const size_t first = ranges.size();
  size_t pos = 0;
  bool checked = false;
  while (pos < text.size()) {
    // The subject is validated once; later calls skip the O(n) UTF check.
    const uint32_t options = checked ? PCRE2_NO_UTF_CHECK : 0;
    const int rc = pcre2_match(as_code(code_), subject, text.size(), pos, options, md.data, nullptr);
    checked = true;
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21) {
        ranges.resize(first);
        return false;
      }
      throw_failure("pre-tokenizer regex {:?}: match error {}", pattern_, rc);
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.data);
    size_t b = ov[0], e = ov[1];
    if (e > b) {
      ranges.emplace_back(b, e);
      pos = e;
    } else {  // empty match: step over one character
      pos = b + 1;
      while (pos < text.size() && (static_cast<uint8_t>(text[pos]) & 0xC0) == 0x80) ++pos;
    }
  }
  return true;
}

}  // namespace genai
