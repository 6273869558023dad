#include <gtest/gtest.h>

#include "core/error.h"
#include "tokenizer/chat_template.h"

namespace genai {
namespace {

// SmolLM2-135M-Instruct's template as its GGUF stores it.
constexpr std::string_view kSmolLM2Template =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\n"
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

TEST(ChatTemplate, ChatMLInsertsSmolLM2DefaultSystemPrompt) {
  const std::string p = apply_chat_template(ChatFormat::kChatML, {{"user", "Hi"}});
  EXPECT_EQ(p,
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  const std::string with_system = apply_chat_template(ChatFormat::kChatML, {{"system", "Be brief."}, {"user", "Hi"}});
  EXPECT_EQ(with_system, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(apply_chat_template(ChatFormat::kChatML, {{"user", "Hi"}}, ""),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, Llama3HeadersAndEotTokens) {
  const std::string p = apply_chat_template(ChatFormat::kLlama3, {{"system", "S"}, {"user", " Hi \n"}});
  EXPECT_EQ(p,
            "<|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplate, Llama2InstWithSystemBlockAndLaterTurns) {
  const std::string p =
      apply_chat_template(ChatFormat::kLlama2, {{"system", "S"}, {"user", "A"}, {"assistant", "B"}, {"user", "C"}});
  EXPECT_EQ(p, "[INST] <<SYS>>\nS\n<</SYS>>\n\nA [/INST] B </s><s>[INST] C [/INST]");
  EXPECT_THROW(apply_chat_template(ChatFormat::kLlama2, {{"tool", "x"}}), InputError);
}

TEST(ChatTemplate, DetectsFormatsAndDefaultSystemPrompts) {
  EXPECT_EQ(detect_chat_format(kSmolLM2Template), ChatFormat::kChatML);
  EXPECT_EQ(detect_chat_format("{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>' }}"),
            ChatFormat::kLlama3);
  EXPECT_EQ(detect_chat_format("{{ bos_token + '[INST] ' + content + ' [/INST]' }}"), ChatFormat::kLlama2);
  EXPECT_EQ(detect_chat_format("{{ messages }}"), ChatFormat::kNone);
  EXPECT_EQ(chat_default_system_prompt(kSmolLM2Template), kSmolLM2DefaultSystem);
  EXPECT_EQ(chat_default_system_prompt("{{'<|im_start|>' + message['role'] + '\n'}}"), "");
  EXPECT_EQ(chat_format_name(ChatFormat::kLlama3), "llama3");
  // Granite 3.x and Phi-4-mini, as their tokenizer_config.json templates spell the markers.
  EXPECT_EQ(detect_chat_format("{{'<|start_of_role|>' + message['role'] + '<|end_of_role|>' + message['content'] + "
                               "'<|end_of_text|>\n'}}"),
            ChatFormat::kGranite);
  EXPECT_EQ(detect_chat_format("{{'<|' + message['role'] + '|>' + message['content'] + '<|end|>'}}{% if "
                               "add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}"),
            ChatFormat::kPhi);
  for (ChatFormat f : all_chat_formats()) EXPECT_FALSE(chat_format_name(f).empty());
}

TEST(ChatTemplate, GraniteRolesBetweenRoleMarkers) {
  EXPECT_EQ(apply_chat_template(ChatFormat::kGranite, {{"system", "S"}, {"user", "Hi"}}),
            "<|start_of_role|>system<|end_of_role|>S<|end_of_text|>\n"
            "<|start_of_role|>user<|end_of_role|>Hi<|end_of_text|>\n"
            "<|start_of_role|>assistant<|end_of_role|>");
  EXPECT_EQ(apply_chat_template(ChatFormat::kGranite, {{"user", "Hi"}}),
            "<|start_of_role|>user<|end_of_role|>Hi<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>");
}

TEST(ChatTemplate, GemmaCallsTheAssistantModelAndFoldsTheSystemIntoTheFirstTurn) {
  EXPECT_EQ(apply_chat_template(ChatFormat::kGemma, {{"system", "S"}, {"user", "Hi"}, {"assistant", "Yo"}, {"user", "Q"}}),
            "<start_of_turn>user\nS\n\nHi<end_of_turn>\n<start_of_turn>model\nYo<end_of_turn>\n"
            "<start_of_turn>user\nQ<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_EQ(detect_chat_format("{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}"),
            ChatFormat::kGemma);
}

TEST(ChatTemplate, GlmEdgeRolesOnTheirOwnLines) {
  EXPECT_EQ(apply_chat_template(ChatFormat::kGlmEdge, {{"system", "S"}, {"user", "Hi"}}),
            "<|system|>\nS<|user|>\nHi<|assistant|>\n");
  EXPECT_EQ(detect_chat_format("{{ '<|' + item['role'] + '|>\n' + item['content'] }}{% if add_generation_prompt %}"
                               "{{ '<|assistant|>\n' }}{% endif %}<|user|>"),
            ChatFormat::kGlmEdge);
}

// Gemma 4 (upstream's runner, gemma4): <|turn>role\n...<turn|>\n with a system turn of its own,
// the assistant called "model"; <turn|> ends a reply.
TEST(ChatTemplate, Gemma4TurnsWithANativeSystemRole) {
  EXPECT_EQ(apply_chat_template(ChatFormat::kGemma4, {{"system", "S"}, {"user", "Hi"}, {"assistant", "Yo"}, {"user", "Q"}}),
            "<|turn>system\nS<turn|>\n<|turn>user\nHi<turn|>\n<|turn>model\nYo<turn|>\n<|turn>user\nQ<turn|>\n"
            "<|turn>model\n");
  EXPECT_EQ(apply_chat_template(ChatFormat::kGemma4, {{"user", "Hi"}}), "<|turn>user\nHi<turn|>\n<|turn>model\n");
  EXPECT_EQ(detect_chat_format("{{ '<|turn>' + role + '\n' + message['content'] | trim + '<turn|>\n' }}"),
            ChatFormat::kGemma4);
  EXPECT_EQ(chat_format_name(ChatFormat::kGemma4), "gemma4");
}

TEST(ChatTemplate, PhiTurnsEndWithEndAndNoNewlines) {
  EXPECT_EQ(apply_chat_template(ChatFormat::kPhi, {{"system", "S"}, {"user", "Hi"}}),
            "<|system|>S<|end|><|user|>Hi<|end|><|assistant|>");
}

}  // namespace
}  // namespace genai
