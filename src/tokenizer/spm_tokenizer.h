// SentencePiece-style BPE over a scored vocabulary (llama.cpp "llama" vocab, llama2.c
// tokenizer.bin): "▁" marks spaces, the highest-scoring adjacent pair merges first, characters
// without a piece fall back to <0xXX> byte tokens. Same algorithm as sentencepiece's BPE model.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace genai {

class SpmTokenizer final : public Tokenizer {
 public:
  // `kind` is what kind() reports ("spm", "llama2c"); `origin` names the source in errors.
  SpmTokenizer(SpmVocab vocab, std::string kind, std::string origin);

  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special = true) const override;
  std::string decode(std::span<const int32_t> ids) const override;
  std::string token_bytes(int32_t prev, int32_t id) const override;
  int32_t vocab_size() const override { return static_cast<int32_t>(vocab_.pieces.size()); }
  int32_t bos_id() const override { return vocab_.bos_id; }
  int32_t eos_id() const override { return vocab_.eos_id; }
  std::vector<int32_t> stop_ids() const override;
  int32_t special_id(std::string_view text) const override;
  std::string kind() const override { return kind_; }

  const SpmVocab& vocab() const { return vocab_; }
  // The types llama2.c files leave implicit: <unk>/<s>/</s> roles by id, <0xXX> bytes.
  static std::vector<TokenType> infer_types(const SpmVocab& vocab);

 private:
  void encode_text(std::string_view text, bool space_prefix, std::vector<int32_t>& out) const;
  std::string piece_text(int32_t id, bool at_start) const;

  SpmVocab vocab_;
  std::string kind_, origin_;
  std::unordered_map<std::string, int32_t> mergeable_;  // normal / user-defined / unused pieces
  std::vector<int32_t> byte_ids_;                        // byte -> <0xXX> id, -1 when absent
  AddedTokenMatcher specials_;                           // control (special) + user-defined pieces
};

}  // namespace genai
