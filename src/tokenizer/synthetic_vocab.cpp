#include "tokenizer/synthetic_vocab.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/training_text.h"
#include "tokenizer/utf8.h"

namespace genai {
namespace {


void check_size(int32_t vocab_size) {
  if (vocab_size < kMinSyntheticVocabSize)
    throw_input_error("vocab_size {} is too small for a synthetic vocabulary (minimum {})", vocab_size,
                      kMinSyntheticVocabSize);
}

std::vector<std::string> characters(std::string_view s) {
  std::vector<std::string> out;
  for (size_t pos = 0; pos < s.size();) {
    const size_t len = utf8::char_length(s, pos);
    out.emplace_back(s.substr(pos, len));
    pos += len;
  }
  return out;
}

std::vector<TrainingWord> to_words(const std::map<std::string, int64_t>& counts) {
  std::vector<TrainingWord> words;
  for (const auto& [w, c] : counts) words.push_back({characters(w), c});
  return words;
}

}  // namespace

BpeVocab make_synthetic_bpe_vocab(int32_t vocab_size, uint64_t seed) {
  check_size(vocab_size);
  BpeVocab v;
  v.pre_tokenizer = "gpt2";
  v.tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  v.types.assign(3, TokenType::kControl);
  v.bos_id = 1;
  v.eos_id = 2;
  v.add_bos = false;
  std::set<std::string> have(v.tokens.begin(), v.tokens.end());
  for (int b = 0; b < 256; ++b) {
    v.tokens.push_back(byte_level::byte_to_chars(static_cast<uint8_t>(b)));
    v.types.push_back(TokenType::kNormal);
    have.insert(v.tokens.back());
  }
  // Train on the GPT-2 pieces of the embedded text (byte-level spelled).
  const PreTokenizer pre(PreTokenizer::named_steps("gpt2"), "synthetic vocabulary");
  std::map<std::string, int64_t> counts;
  for (auto& piece : pre.split(synthetic_training_text())) ++counts[piece];
  const size_t room = static_cast<size_t>(vocab_size) - v.tokens.size();
  for (const auto& [a, b] : train_bpe(to_words(counts), room, seed)) {
    const std::string joined = a + b;
    if (!have.count(joined)) {
      if (v.tokens.size() >= static_cast<size_t>(vocab_size)) break;
      v.tokens.push_back(joined);
      v.types.push_back(TokenType::kNormal);
      have.insert(joined);
    }
    v.merges.push_back(a + " " + b);
  }
  for (int32_t i = 0; v.tokens.size() < static_cast<size_t>(vocab_size); ++i) {
    v.tokens.push_back(fmt::format("<|filler_{}|>", i));
    v.types.push_back(TokenType::kUnused);
  }
  return v;
}

SpmVocab make_synthetic_spm_vocab(int32_t vocab_size, uint64_t seed) {
  check_size(vocab_size);
  SpmVocab v;
  v.pieces = {"<unk>", "<s>", "</s>"};
  v.scores = {0.0f, 0.0f, 0.0f};
  v.types = {TokenType::kUnknown, TokenType::kControl, TokenType::kControl};
  v.unk_id = 0;
  v.bos_id = 1;
  v.eos_id = 2;
  v.add_space_prefix = true;
  for (int b = 0; b < 256; ++b) {
    v.pieces.push_back(fmt::format("<0x{:02X}>", b));
    v.scores.push_back(0.0f);
    v.types.push_back(TokenType::kByte);
  }
  // Words as sentencepiece sees them: "▁" + the word, split at whitespace.
  std::map<std::string, int64_t> counts;
  const std::string_view text = synthetic_training_text();
  for (size_t pos = 0; pos < text.size();) {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n')) ++pos;
    size_t end = pos;
    while (end < text.size() && text[end] != ' ' && text[end] != '\n') ++end;
    if (end > pos) ++counts[std::string(kSpmSpace) + std::string(text.substr(pos, end - pos))];
    pos = end;
  }
  // Characters by frequency (most frequent first) so that a small vocabulary keeps the useful ones.
  std::map<std::string, int64_t> char_counts;
  for (const auto& [w, c] : counts)
    for (auto& ch : characters(w)) char_counts[ch] += c;
  std::vector<std::pair<std::string, int64_t>> chars(char_counts.begin(), char_counts.end());
  std::stable_sort(chars.begin(), chars.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  const size_t base = v.pieces.size();
  const size_t room = static_cast<size_t>(vocab_size) - base;
  if (chars.size() > room) chars.resize(room);

  std::vector<std::string> merged;
  if (chars.size() < room) {
    std::set<std::string> have;
    for (const auto& [ch, c] : chars) have.insert(ch);
    for (const auto& [a, b] : train_bpe(to_words(counts), room - chars.size(), seed)) {
      std::string joined = a + b;
      if (have.insert(joined).second) merged.push_back(std::move(joined));
      if (merged.size() + chars.size() >= room) break;
    }
  }
  // Scores as sentencepiece assigns them: earlier merges score higher, characters below all merges.
  for (size_t i = 0; i < merged.size(); ++i) {
    v.pieces.push_back(merged[i]);
    v.scores.push_back(-static_cast<float>(i));
    v.types.push_back(TokenType::kNormal);
  }
  for (size_t i = 0; i < chars.size(); ++i) {
    v.pieces.push_back(chars[i].first);
    v.scores.push_back(-static_cast<float>(merged.size() + i));
    v.types.push_back(TokenType::kNormal);
  }
  const float floor_score = -static_cast<float>(merged.size() + chars.size());
  for (int32_t i = 0; v.pieces.size() < static_cast<size_t>(vocab_size); ++i) {
    v.pieces.push_back(fmt::format("<filler_{}>", i));
    v.scores.push_back(floor_score - 1.0f - static_cast<float>(i));
    v.types.push_back(TokenType::kNormal);
  }
  v.max_token_length = 0;
  for (const auto& p : v.pieces) v.max_token_length = std::max<int32_t>(v.max_token_length, static_cast<int32_t>(p.size()));
  return v;
}

}  // namespace genai
