// Chat prompt formats of instruct models, picked from the checkpoint's metadata or the model name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace genai {

enum class ChatFormat { kNone, kChatML, kLlama3, kLlama2 };
std::string_view chat_format_name(ChatFormat f);  // "none", "chatml", "llama3", "llama2"

struct ChatTurn {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

// The prompt text for `turns`, ending with the header that opens the assistant's reply.
std::string apply_chat_template(ChatFormat format, const std::vector<ChatTurn>& turns);

// Recognises the Jinja template string stored in GGUF tokenizer.chat_template / tokenizer_config.json.
ChatFormat detect_chat_format(std::string_view jinja_template);

}  // namespace genai
