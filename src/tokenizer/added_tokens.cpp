#include "tokenizer/added_tokens.h"

#include <algorithm>

namespace genai {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_word_byte(char c) {
  const auto u = static_cast<uint8_t>(c);
  return u >= 0x80 || (u >= '0' && u <= '9') || (u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || u == '_';
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)) {
  by_first_byte_.resize(256);
  for (size_t i = 0; i < tokens_.size(); ++i) {
    if (tokens_[i].content.empty()) continue;
    by_content_.emplace(tokens_[i].content, i);
    by_first_byte_[static_cast<uint8_t>(tokens_[i].content[0])].push_back(i);
  }
  for (auto& list : by_first_byte_)
    std::stable_sort(list.begin(), list.end(),
                     [&](size_t a, size_t b) { return tokens_[a].content.size() > tokens_[b].content.size(); });
}

int32_t AddedTokenMatcher::find(std::string_view text) const {
  auto it = by_content_.find(std::string(text));
  return it == by_content_.end() ? -1 : tokens_[it->second].id;
}

std::vector<TextSegment> AddedTokenMatcher::split(std::string_view text, bool parse_special) const {
  std::vector<TextSegment> out;
  if (tokens_.empty()) {
    if (!text.empty()) out.push_back({text, -1});
    return out;
  }
  size_t plain_begin = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const AddedToken* hit = nullptr;
    for (size_t idx : by_first_byte_[static_cast<uint8_t>(text[pos])]) {
      const AddedToken& t = tokens_[idx];
      if (t.special && !parse_special) continue;
      if (text.compare(pos, t.content.size(), t.content) != 0) continue;
      if (t.single_word) {
        const size_t end = pos + t.content.size();
        if ((pos > 0 && is_word_byte(text[pos - 1])) || (end < text.size() && is_word_byte(text[end]))) continue;
      }
      hit = &t;
      break;
    }
    if (hit == nullptr) {
      ++pos;
      continue;
    }
    size_t begin = pos, end = pos + hit->content.size();
    if (hit->lstrip)
      while (begin > plain_begin && is_space(text[begin - 1])) --begin;
    if (hit->rstrip)
      while (end < text.size() && is_space(text[end])) ++end;
    if (begin > plain_begin) out.push_back({text.substr(plain_begin, begin - plain_begin), -1});
    out.push_back({text.substr(begin, end - begin), hit->id});
    plain_begin = pos = end;
  }
  if (plain_begin < text.size()) out.push_back({text.substr(plain_begin), -1});
  return out;
}

}  // namespace genai
