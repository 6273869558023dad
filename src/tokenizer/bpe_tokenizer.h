// BPE as Hugging Face tokenizers runs it: byte-level (GPT-2 family: SmolLM2, Llama 3, Qwen2) or
// SentencePiece-style (Gemma's tokenizer.json: spaces normalized to "▁", characters as symbols
// with byte fallback): added tokens, the normalizer's literal replacements, pre-tokenizer
// regexes, then merges by rank inside every piece; decoding undoes the replacements.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace genai {

// Everything a BpeTokenizer is built from, whichever file it came from.
struct BpeModelSpec {
  std::string origin;  // file name for error messages
  std::vector<std::string> tokens;                        // id -> token string
  std::vector<std::pair<std::string, std::string>> merges;  // priority order
  std::vector<AddedToken> added;
  std::vector<PreTokenizerStep> pre_steps;
  bool ignore_merges = false;  // a piece that is itself a token is not merged (Llama 3)
  bool byte_fallback = false;  // unknown characters become <0xXX> tokens
  bool fuse_unk = false;       // consecutive unknown characters give one unk token
  // Literal (pattern, content) replacements: the normalizer's on text outside added tokens, the
  // decoder's on each token's text (SentencePiece-style: " " -> "▁" and back).
  std::vector<std::pair<std::string, std::string>> normalizer_replace, decoder_replace;
  int32_t unk_id = -1, bos_id = -1, eos_id = -1;
  bool add_bos = false;
};

class BpeTokenizer final : public Tokenizer {
 public:
  explicit BpeTokenizer(BpeModelSpec spec);

  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special = true) const override;
  std::string decode(std::span<const int32_t> ids) const override;
  std::string token_bytes(int32_t prev, int32_t id) const override;
  int32_t vocab_size() const override { return static_cast<int32_t>(tokens_.size()); }
  int32_t bos_id() const override { return bos_id_; }
  int32_t eos_id() const override { return eos_id_; }
  std::vector<int32_t> stop_ids() const override;
  int32_t special_id(std::string_view text) const override;
  std::string kind() const override { return "bpe"; }

  bool add_bos_by_default() const override { return add_bos_ && bos_id_ >= 0; }
  // BPE of one pre-tokenized piece (byte-level spelling), appended to `out`.
  void encode_piece(const std::string& piece, std::vector<int32_t>& out) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t result;
  };
  static uint64_t pair_key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }

  std::string origin_;
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> token_ids_;
  std::unordered_map<uint64_t, Merge> merges_;
  AddedTokenMatcher added_;
  PreTokenizer pre_;
  bool ignore_merges_, byte_fallback_, fuse_unk_;
  std::vector<std::pair<std::string, std::string>> normalizer_replace_, decoder_replace_;
  int32_t unk_id_, bos_id_, eos_id_;
  bool add_bos_;
  std::vector<int32_t> byte_fallback_ids_;  // <0xXX> ids when byte_fallback
};

}  // namespace genai
