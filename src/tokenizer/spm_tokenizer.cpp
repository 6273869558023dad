#include "tokenizer/spm_tokenizer.h"

#include <queue>

#include <fmt/format.h>

#include "core/error.h"
#include "tokenizer/stop_tokens.h"
#include "tokenizer/utf8.h"

namespace genai {
namespace {


int parse_byte_piece(const std::string& p) {
  if (p.size() != 6 || !p.starts_with("<0x") || p[5] != '>') return -1;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int hi = hex(p[3]), lo = hex(p[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

}  // namespace

std::vector<TokenType> SpmTokenizer::infer_types(const SpmVocab& v) {
  std::vector<TokenType> types(v.pieces.size(), TokenType::kNormal);
  for (size_t i = 0; i < v.pieces.size(); ++i) {
    const auto id = static_cast<int32_t>(i);
    if (id == v.unk_id)
      types[i] = TokenType::kUnknown;
    else if (id == v.bos_id || id == v.eos_id)
      types[i] = TokenType::kControl;
    else if (parse_byte_piece(v.pieces[i]) >= 0)
      types[i] = TokenType::kByte;
  }
  return types;
}

SpmTokenizer::SpmTokenizer(SpmVocab vocab, std::string kind, std::string origin)
    : vocab_(std::move(vocab)), kind_(std::move(kind)), origin_(std::move(origin)) {
  const auto n = static_cast<int32_t>(vocab_.pieces.size());
  if (n == 0) throw_input_error("{}: the vocabulary is empty", origin_);
  if (vocab_.scores.size() != vocab_.pieces.size())
    throw_input_error("{}: {} pieces but {} scores", origin_, n, vocab_.scores.size());
  if (vocab_.types.empty()) vocab_.types = infer_types(vocab_);
  if (vocab_.types.size() != vocab_.pieces.size())
    throw_input_error("{}: {} pieces but {} token types", origin_, n, vocab_.types.size());
  for (int32_t* id : {&vocab_.bos_id, &vocab_.eos_id, &vocab_.unk_id})
    if (*id >= n) throw_input_error("{}: special token id {} outside the vocabulary [0, {})", origin_, *id, n);

  byte_ids_.assign(256, -1);
  std::vector<AddedToken> specials;
  for (int32_t i = 0; i < n; ++i) {
    const std::string& p = vocab_.pieces[i];
    switch (vocab_.types[i]) {
      case TokenType::kNormal:
      case TokenType::kUndefined:
      case TokenType::kUnused:
        mergeable_.emplace(p, i);
        break;
      case TokenType::kUserDefined:
        mergeable_.emplace(p, i);
        if (!p.empty()) specials.push_back({p, i, /*special=*/false});
        break;
      case TokenType::kControl:
        if (!p.empty()) specials.push_back({p, i, /*special=*/true});
        break;
      case TokenType::kByte:
        if (int b = parse_byte_piece(p); b >= 0 && byte_ids_[b] < 0) byte_ids_[b] = i;
        break;
      case TokenType::kUnknown:
        break;
    }
  }
  specials_ = AddedTokenMatcher(std::move(specials));
}

void SpmTokenizer::encode_text(std::string_view text, bool space_prefix, std::vector<int32_t>& out) const {
  if (text.empty()) return;
  std::string norm;
  norm.reserve(text.size() + 8);
  if (space_prefix) norm += kSpmSpace;
  for (char c : text) {
    if (c == ' ')
      norm += kSpmSpace;
    else
      norm.push_back(c);
  }
  // Symbols are characters; `len == 0` marks one merged into its left neighbour.
  struct Symbol {
    int32_t prev, next;
    size_t begin, len;
  };
  std::vector<Symbol> syms;
  for (size_t pos = 0; pos < norm.size();) {
    const size_t len = utf8::char_length(norm, pos);
    const auto i = static_cast<int32_t>(syms.size());
    syms.push_back({i - 1, -1, pos, len});
    if (i > 0) syms[i - 1].next = i;
    pos += len;
  }
  struct Candidate {
    float score;
    int32_t left, right;
    size_t size;
    bool operator<(const Candidate& o) const { return score != o.score ? score < o.score : left > o.left; }
  };
  std::priority_queue<Candidate> agenda;
  // Merged pieces that are "unused" are split back into their parts afterwards.
  std::unordered_map<std::string_view, std::pair<std::string_view, std::string_view>> rev_merge;
  auto view = [&](size_t begin, size_t len) { return std::string_view(norm).substr(begin, len); };
  auto consider = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const std::string_view piece = view(syms[left].begin, syms[left].len + syms[right].len);
    auto it = mergeable_.find(std::string(piece));
    if (it == mergeable_.end()) return;
    agenda.push({vocab_.scores[it->second], left, right, piece.size()});
    if (vocab_.types[it->second] == TokenType::kUnused)
      rev_merge[piece] = {view(syms[left].begin, syms[left].len), view(syms[right].begin, syms[right].len)};
  };
  for (size_t i = 1; i < syms.size(); ++i) consider(static_cast<int32_t>(i - 1), static_cast<int32_t>(i));
  while (!agenda.empty()) {
    const Candidate c = agenda.top();
    agenda.pop();
    Symbol& l = syms[c.left];
    Symbol& r = syms[c.right];
    if (l.len == 0 || r.len == 0 || l.len + r.len != c.size || l.next != c.right) continue;  // stale
    l.len += r.len;
    l.next = r.next;
    if (r.next >= 0) syms[r.next].prev = c.left;
    r.len = 0;
    consider(l.prev, c.left);
    consider(c.left, l.next);
  }
  // Emit: known pieces as ids, unused ones resegmented, the rest as bytes (or unk).
  auto emit = [&](auto&& self, std::string_view piece) -> void {
    auto it = mergeable_.find(std::string(piece));
    if (it != mergeable_.end()) {
      if (vocab_.types[it->second] == TokenType::kUnused) {
        auto rm = rev_merge.find(piece);
        if (rm != rev_merge.end()) {
          self(self, rm->second.first);
          self(self, rm->second.second);
          return;
        }
      }
      out.push_back(it->second);
      return;
    }
    bool all_bytes = true;
    for (char ch : piece) all_bytes = all_bytes && byte_ids_[static_cast<uint8_t>(ch)] >= 0;
    if (all_bytes) {
      for (char ch : piece) out.push_back(byte_ids_[static_cast<uint8_t>(ch)]);
    } else if (vocab_.unk_id >= 0) {
      out.push_back(vocab_.unk_id);
    }
  };
  for (int32_t i = syms.empty() ? -1 : 0; i >= 0; i = syms[i].next) emit(emit, view(syms[i].begin, syms[i].len));
}

std::vector<int32_t> SpmTokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  std::vector<int32_t> ids;
  if (add_bos && vocab_.bos_id >= 0) ids.push_back(vocab_.bos_id);
  // As llama.cpp: the word-start space goes before the first text and after every special token.
  bool after_special = true;
  for (const auto& seg : specials_.split(text, parse_special)) {
    if (seg.token_id >= 0) {
      ids.push_back(seg.token_id);
      after_special = true;
      continue;
    }
    encode_text(seg.text, vocab_.add_space_prefix && after_special, ids);
    after_special = false;
  }
  return ids;
}

std::string SpmTokenizer::piece_text(int32_t id, bool at_start) const {
  if (id < 0 || id >= vocab_size())
    throw_input_error("{}: token id {} outside the vocabulary [0, {})", origin_, id, vocab_size());
  const std::string& p = vocab_.pieces[id];
  switch (vocab_.types[id]) {
    case TokenType::kControl:
      return {};
    case TokenType::kByte:
      if (int b = parse_byte_piece(p); b >= 0) return std::string(1, static_cast<char>(b));
      return p;
    default:
      break;
  }
  std::string out;
  out.reserve(p.size());
  for (size_t pos = 0; pos < p.size();) {
    if (p.compare(pos, kSpmSpace.size(), kSpmSpace) == 0) {
      out.push_back(' ');
      pos += kSpmSpace.size();
    } else {
      out.push_back(p[pos++]);
    }
  }
  // sentencepiece drops the word-start space it added in front of the text.
  if (at_start && vocab_.add_space_prefix && !out.empty() && out[0] == ' ') out.erase(0, 1);
  return out;
}

std::string SpmTokenizer::token_bytes(int32_t prev, int32_t id) const {
  return piece_text(id, prev >= 0 && prev == vocab_.bos_id);
}

std::string SpmTokenizer::decode(std::span<const int32_t> ids) const {
  std::string out;
  bool at_start = true;
  for (int32_t id : ids) {
    std::string t = piece_text(id, at_start);
    if (at_start && vocab_.types[id] != TokenType::kControl) at_start = false;
    out += t;
  }
  return out;
}

int32_t SpmTokenizer::special_id(std::string_view text) const { return specials_.find(text); }

std::vector<int32_t> SpmTokenizer::stop_ids() const {
  return collect_stop_ids(vocab_.eos_id, [this](std::string_view s) { return special_id(s); });
}

}  // namespace genai
