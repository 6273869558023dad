// Chat prompt formats of instruct models, picked from the checkpoint's metadata or the model name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace genai {

enum class ChatFormat { kNone, kChatML, kLlama3, kLlama2, kGranite, kPhi, kGemma, kGlmEdge, kGemma4, kSmolVlm };
// "none", "chatml", "llama3", "llama2", "granite", "phi", "gemma", "glm_edge", "gemma4", "smolvlm"
std::string_view chat_format_name(ChatFormat f);
// Every format, in enum order (for name lookups and messages).
const std::vector<ChatFormat>& all_chat_formats();

struct ChatTurn {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

// The prompt text for `turns`, ending with the header that opens the assistant's reply. The BOS
// token of the first turn is not part of the text (encode with add_bos); later Llama 2 turns carry
// "<s>" as text, to be parsed as a special token. ChatML without a system turn gets SmolLM2's
// default system prompt (kSmolLM2DefaultSystem), as SmolLM2-Instruct's template does.
std::string apply_chat_template(ChatFormat format, const std::vector<ChatTurn>& turns);
// Same, with the system prompt used when `turns` has none ("" = no system turn).
std::string apply_chat_template(ChatFormat format, const std::vector<ChatTurn>& turns,
                                std::string_view default_system);

// SmolVLM's template: "<|im_start|>" once, then "User: text<end_of_utterance>\n" per turn (the role
// capitalised; ":" without the space when the content opens with "<image>"), then "Assistant:".
inline constexpr std::string_view kSmolVlmImageToken = "<image>";

inline constexpr std::string_view kSmolLM2DefaultSystem =
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face";

// The default system prompt a ChatML Jinja template inserts when no system message is given
// (the literal between "<|im_start|>system\n" and "<|im_end|>"), or "" when it inserts none.
std::string chat_default_system_prompt(std::string_view jinja_template);

// Recognises the Jinja template string stored in GGUF tokenizer.chat_template / tokenizer_config.json.
ChatFormat detect_chat_format(std::string_view jinja_template);

}  // namespace genai
