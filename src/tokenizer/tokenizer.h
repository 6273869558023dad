// Text <-> token ids, exactly as the model's own tokenizer does it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace genai {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Token ids for `text`. Special-token strings present in the text (e.g. "<|im_start|>") map to
  // their ids when `parse_special` is true, as HF tokenizers do for added tokens.
  virtual std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special = true) const = 0;
  // Concatenated text of the ids. decode(encode(s)) == s for any valid UTF-8 s.
  virtual std::string decode(std::span<const int32_t> ids) const = 0;
  // Raw bytes one token contributes in context `prev` (for streaming; may be a partial UTF-8 seq).
  virtual std::string token_bytes(int32_t prev, int32_t id) const = 0;

  virtual int32_t vocab_size() const = 0;
  virtual int32_t bos_id() const = 0;      // -1 when none
  virtual int32_t eos_id() const = 0;      // -1 when none
  // Every id that ends generation (eos plus model-specific ones such as <|eot_id|>, <|im_end|>).
  virtual std::vector<int32_t> stop_ids() const = 0;
  // Id of an exact special/added token string, or -1.
  virtual int32_t special_id(std::string_view text) const = 0;
  virtual std::string kind() const = 0;    // "llama2c", "spm", "bpe", "sentencepiece"
  // Whether the model's own tokenizer prepends BOS to a prompt (llama/SPM models do; SmolLM2 and
  // Qwen2 do not; Llama 3 does): the add_bos a runner should pass for a fresh prompt.
  virtual bool add_bos_by_default() const { return bos_id() >= 0; }

  // The Jinja chat template shipped with the tokenizer files ("" when none); see chat_template.h.
  const std::string& chat_template() const { return chat_template_; }
  void set_chat_template(std::string jinja) { chat_template_ = std::move(jinja); }

 private:
  std::string chat_template_;
};

// Streams decoded text: feeds token ids, returns only complete UTF-8 text so far. The first
// pushed token is decoded in context `prev` (-1: mid-text, so an SPM word-start space is kept;
// pass bos_id() to get decode()'s start-of-text behaviour).
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tok, int32_t prev = -1) : tok_(tok), prev_(prev) {}
  std::string push(int32_t id);
  // Whatever is still held back (an incomplete UTF-8 tail), then resets the pending bytes.
  std::string flush();

 private:
  const Tokenizer& tok_;
  int32_t prev_ = -1;
  std::string pending_;
};

}  // namespace genai
