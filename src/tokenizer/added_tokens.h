// Added (special) tokens are matched in the raw text before any pre-tokenization, as Hugging Face
// tokenizers and llama.cpp do: at each position the longest token starting there wins.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace genai {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool special = true;       // special tokens are only matched when parse_special is on
  bool lstrip = false;       // swallow whitespace to the left of the match
  bool rstrip = false;       // swallow whitespace to the right of the match
  bool single_word = false;  // only match when not inside a word
};

// A run of the input: either plain text to tokenize or one added token.
struct TextSegment {
  std::string_view text;
  int32_t token_id = -1;  // >= 0: an added token
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);

  // Splits `text` into plain runs and added tokens; non-special tokens always match, special
  // ones only when `parse_special`.
  std::vector<TextSegment> split(std::string_view text, bool parse_special) const;

  // Id of the added token whose content is exactly `text`, or -1.
  int32_t find(std::string_view text) const;
  const std::vector<AddedToken>& tokens() const { return tokens_; }

 private:
  std::vector<AddedToken> tokens_;
  std::unordered_map<std::string, size_t> by_content_;
  std::vector<std::vector<size_t>> by_first_byte_;  // 256 lists, longest first
};

}  // namespace genai
