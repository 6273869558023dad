// A compiled PCRE2 pattern with Unicode semantics (UTF + UCP, JIT when available), as the
// pre-tokenizer regexes of Hugging Face tokenizer.json files and llama.cpp need (\p{L}, \p{N}, \s).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace genai {

class UnicodeRegex {
 public:
  // An invalid pattern is an InputError naming `origin` (the file or table it came from).
  UnicodeRegex(std::string pattern, std::string_view origin);
  ~UnicodeRegex();
  UnicodeRegex(const UnicodeRegex&) = delete;
  UnicodeRegex& operator=(const UnicodeRegex&) = delete;

  const std::string& pattern() const { return pattern_; }

  // Appends the [begin, end) byte ranges of all non-empty, non-overlapping matches in `text`,
  // scanning left to right. Returns false when `text` is not valid UTF-8 (ranges untouched).
  bool find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& ranges) const;

 private:
  std::string pattern_;
  void* code_ = nullptr;  // pcre2_code_8*, JIT-compiled when the platform supports it
};

}  // namespace genai
