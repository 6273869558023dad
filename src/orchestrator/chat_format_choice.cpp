#include "orchestrator/chat_format_choice.h"

#include "core/error.h"
#include "orchestrator/model_lookup.h"

namespace genai::orchestrator {
namespace {

ChatFormat chat_format_from_name(const std::string& name) {
  std::string valid;
  for (ChatFormat f : all_chat_formats()) {
    if (chat_format_name(f) == name) return f;
    valid += (valid.empty() ? "" : ", ") + std::string(chat_format_name(f));
  }
  throw_failure("unknown chat format '{}' ({})", name, valid);
}

}  // namespace

ChatFormatChoice choose_chat_format(const std::optional<std::string>& prepared, const Tokenizer& tokenizer,
                                    const std::optional<std::string>& decoder_model) {
  if (prepared) return {chat_format_from_name(*prepared), "model_preparation"};
  if (!tokenizer.chat_template().empty()) return {detect_chat_format(tokenizer.chat_template()), "tokenizer template"};
  if (decoder_model) {
    if (const DecoderModelSpec* spec = find_decoder_model(*decoder_model)) return {spec->chat_format, "--decoder_model"};
  }
  return {};
}

}  // namespace genai::orchestrator
