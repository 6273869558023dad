// One chat-format choice for every run path: model_preparation's, else the tokenizer's template,
// else the --decoder_model entry, else plain text.
#include <gtest/gtest.h>

#include "core/error.h"
#include "orchestrator/chat_format_choice.h"
#include "tokenizer/factory.h"
#include "tokenizer/synthetic_vocab.h"

namespace genai::orchestrator {
namespace {

std::unique_ptr<Tokenizer> tokenizer_with_template(const std::string& chat_template) {
  BpeVocab v = make_synthetic_bpe_vocab(300, 0);
  v.chat_template = chat_template;
  return make_bpe_tokenizer(std::move(v));
}

TEST(ChatFormatChoice, PreparedThenTokenizerTemplateThenDecoderModelThenNone) {
  const auto chatml = tokenizer_with_template("{{'<|im_start|>' + message['role'] + '\\n'}}");
  const auto plain = tokenizer_with_template("");
  const std::optional<std::string> none, named = std::string("llama3_2-1b_instruct");  // --decoder_model

  ChatFormatChoice c = choose_chat_format(std::string("llama3"), *chatml, none);
  EXPECT_EQ(c.format, ChatFormat::kLlama3);
  EXPECT_EQ(c.from, "model_preparation");
  c = choose_chat_format(std::nullopt, *chatml, named);
  EXPECT_EQ(c.format, ChatFormat::kChatML);
  EXPECT_EQ(c.from, "tokenizer template");
  c = choose_chat_format(std::nullopt, *plain, named);
  EXPECT_EQ(c.format, ChatFormat::kLlama3);
  EXPECT_EQ(c.from, "--decoder_model");
  c = choose_chat_format(std::nullopt, *plain, none);
  EXPECT_EQ(c.format, ChatFormat::kNone);
  EXPECT_EQ(c.from, "none");
  EXPECT_THROW(choose_chat_format(std::string("vicuna"), *plain, none), genai::Failure);
}

}  // namespace
}  // namespace genai::orchestrator
