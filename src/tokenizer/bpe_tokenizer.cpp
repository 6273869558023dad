#include "tokenizer/bpe_tokenizer.h"

#include <queue>

#include <fmt/format.h>

#include "core/error.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/stop_tokens.h"
#include "tokenizer/utf8.h"

namespace genai {

namespace {

// Each literal (pattern, content) replacement in turn, as a Sequence of Replace does.
std::string replace_all(std::string_view text, const std::vector<std::pair<std::string, std::string>>& replacements) {
  std::string s(text);
  for (const auto& [pattern, content] : replacements) {
    if (pattern.empty()) continue;
    std::string out;
    size_t at = 0;
    for (size_t hit; (hit = s.find(pattern, at)) != std::string::npos; at = hit + pattern.size())
      out.append(s, at, hit - at).append(content);
    out.append(s, at, std::string::npos);
    s = std::move(out);
  }
  return s;
}

}  // namespace

BpeTokenizer::BpeTokenizer(BpeModelSpec spec)
    : origin_(std::move(spec.origin)),
      tokens_(std::move(spec.tokens)),
      added_(std::move(spec.added)),
      pre_(std::move(spec.pre_steps), origin_),
      ignore_merges_(spec.ignore_merges),
      byte_fallback_(spec.byte_fallback),
      fuse_unk_(spec.fuse_unk),
      normalizer_replace_(std::move(spec.normalizer_replace)),
      decoder_replace_(std::move(spec.decoder_replace)),
      unk_id_(spec.unk_id),
      bos_id_(spec.bos_id),
      eos_id_(spec.eos_id),
      add_bos_(spec.add_bos) {
  const auto n = static_cast<int32_t>(tokens_.size());
  if (n == 0) throw_input_error("{}: the vocabulary is empty", origin_);
  token_ids_.reserve(tokens_.size());
  // The first id of a duplicated string wins, as in Hugging Face vocab maps.
  for (int32_t i = 0; i < n; ++i) token_ids_.emplace(tokens_[i], i);
  for (const auto& t : added_.tokens())
    if (t.id < 0 || t.id >= n)
      throw_input_error("{}: added token {:?} has id {} outside the vocabulary [0, {})", origin_, t.content, t.id, n);
  for (int32_t id : {unk_id_, bos_id_, eos_id_})
    if (id >= n) throw_input_error("{}: special token id {} outside the vocabulary [0, {})", origin_, id, n);

  merges_.reserve(spec.merges.size());
  for (size_t r = 0; r < spec.merges.size(); ++r) {
    const auto& [a, b] = spec.merges[r];
    auto ia = token_ids_.find(a), ib = token_ids_.find(b), ic = token_ids_.find(a + b);
    if (ia == token_ids_.end() || ib == token_ids_.end() || ic == token_ids_.end())
      throw_input_error("{}: merge {} \"{} {}\" uses a token that is not in the vocabulary", origin_, r, a, b);
    // A repeated pair keeps its first (highest-priority) rank.
    merges_.emplace(pair_key(ia->second, ib->second), Merge{static_cast<int32_t>(r), ic->second});
  }
  if (byte_fallback_) {
    byte_fallback_ids_.resize(256, -1);
    for (int b = 0; b < 256; ++b) {
      auto it = token_ids_.find(fmt::format("<0x{:02X}>", b));
      if (it != token_ids_.end()) byte_fallback_ids_[b] = it->second;
    }
  }
}

void BpeTokenizer::encode_piece(const std::string& piece, std::vector<int32_t>& out) const {
  if (ignore_merges_) {
    auto it = token_ids_.find(piece);
    if (it != token_ids_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  // Initial symbols: one per character (unknown characters become byte tokens, unk, or vanish).
  struct Symbol {
    int32_t id;
    int32_t prev, next;
  };
  std::vector<Symbol> syms;
  syms.reserve(piece.size());
  std::string ch;
  for (size_t pos = 0; pos < piece.size();) {
    const size_t len = utf8::char_length(piece, pos);
    ch.assign(piece, pos, len);
    pos += len;
    auto it = token_ids_.find(ch);
    if (it != token_ids_.end()) {
      syms.push_back({it->second, 0, 0});
      continue;
    }
    bool done = false;
    if (byte_fallback_) {
      done = true;
      for (char c : ch) done = done && byte_fallback_ids_[static_cast<uint8_t>(c)] >= 0;
      if (done)
        for (char c : ch) syms.push_back({byte_fallback_ids_[static_cast<uint8_t>(c)], 0, 0});
    }
    if (!done && unk_id_ >= 0 && !(fuse_unk_ && !syms.empty() && syms.back().id == unk_id_)) syms.push_back({unk_id_, 0, 0});
  }
  const auto n = static_cast<int32_t>(syms.size());
  for (int32_t i = 0; i < n; ++i) {
    syms[i].prev = i - 1;
    syms[i].next = i + 1 < n ? i + 1 : -1;
  }
  // Lowest rank first, leftmost among equal ranks; stale entries are skipped when popped.
  struct Candidate {
    int32_t rank, left, left_id, right_id;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  auto consider = [&](int32_t left) {
    if (left < 0) return;
    const int32_t right = syms[left].next;
    if (right < 0) return;
    auto it = merges_.find(pair_key(syms[left].id, syms[right].id));
    if (it != merges_.end()) queue.push({it->second.rank, left, syms[left].id, syms[right].id});
  };
  for (int32_t i = 0; i + 1 < n; ++i) consider(i);
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    const int32_t right = syms[c.left].next;
    if (syms[c.left].id != c.left_id || right < 0 || syms[right].id != c.right_id) continue;  // stale
    syms[c.left].id = merges_.at(pair_key(c.left_id, c.right_id)).result;
    syms[c.left].next = syms[right].next;
    if (syms[right].next >= 0) syms[syms[right].next].prev = c.left;
    syms[right].id = -1;  // dead
    consider(syms[c.left].prev);
    consider(c.left);
  }
  for (int32_t i = 0; i >= 0 && i < n; i = syms[i].next) out.push_back(syms[i].id);
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 2);
  if (add_bos && bos_id_ >= 0) ids.push_back(bos_id_);
  // Natural text repeats its words; memoising the BPE of each piece makes long inputs cheap.
  std::unordered_map<std::string, std::pair<uint32_t, uint32_t>> cache;
  std::vector<int32_t> cached_ids;
  for (const auto& seg : added_.split(text, parse_special)) {
    if (seg.token_id >= 0) {
      ids.push_back(seg.token_id);
      continue;
    }
    for (auto& piece : pre_.split(normalizer_replace_.empty() ? std::string(seg.text) : replace_all(seg.text, normalizer_replace_))) {
      auto it = cache.find(piece);
      if (it == cache.end()) {
        const auto begin = static_cast<uint32_t>(cached_ids.size());
        encode_piece(piece, cached_ids);
        it = cache.emplace(std::move(piece), std::make_pair(begin, static_cast<uint32_t>(cached_ids.size()))).first;
      }
      ids.insert(ids.end(), cached_ids.begin() + it->second.first, cached_ids.begin() + it->second.second);
    }
  }
  return ids;
}

std::string BpeTokenizer::token_bytes(int32_t /*prev*/, int32_t id) const {
  if (id < 0 || id >= vocab_size())
    throw_input_error("{}: token id {} outside the vocabulary [0, {})", origin_, id, vocab_size());
  const std::string& t = tokens_[id];
  if (byte_fallback_ && t.size() == 6 && t.starts_with("<0x") && t.back() == '>') {
    for (int b = 0; b < 256; ++b)
      if (byte_fallback_ids_[b] == id) return std::string(1, static_cast<char>(b));
  }
  std::string out;
  // Like the Hugging Face ByteLevel decoder: a token with a character outside the byte alphabet
  // (special tokens such as "<｜begin▁of▁sentence｜>") is emitted as written.
  if (pre_.byte_level() && byte_level::decode(t, out)) return out;
  return decoder_replace_.empty() ? t : replace_all(t, decoder_replace_);
}

std::string BpeTokenizer::decode(std::span<const int32_t> ids) const {
  std::string out;
  int32_t prev = -1;
  for (int32_t id : ids) {
    out += token_bytes(prev, id);
    prev = id;
  }
  return out;
}

int32_t BpeTokenizer::special_id(std::string_view text) const {
  const int32_t id = added_.find(text);
  if (id >= 0) return id;
  return -1;
}

std::vector<int32_t> BpeTokenizer::stop_ids() const {
  return collect_stop_ids(eos_id_, [this](std::string_view s) { return special_id(s); });
}

}  // namespace genai
