// A sentencepiece .model file run by libsentencepiece itself, so that its normalizer and model
// type (BPE or unigram) behave exactly as in the Python package.
#pragma once

#include <filesystem>
#include <memory>

#include "tokenizer/added_tokens.h"
#include "tokenizer/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace genai {

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // An unreadable or malformed file is an InputError naming the path.
  explicit SentencePieceTokenizer(const std::filesystem::path& path);
  ~SentencePieceTokenizer() override;

  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special = true) const override;
  std::string decode(std::span<const int32_t> ids) const override;
  std::string token_bytes(int32_t prev, int32_t id) const override;
  int32_t vocab_size() const override;
  int32_t bos_id() const override;
  int32_t eos_id() const override;
  std::vector<int32_t> stop_ids() const override;
  int32_t special_id(std::string_view text) const override;
  std::string kind() const override { return "sentencepiece"; }

  const sentencepiece::SentencePieceProcessor& processor() const { return *sp_; }

 private:
  void check_id(int32_t id) const;

  std::string origin_;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  AddedTokenMatcher controls_;
};

}  // namespace genai
