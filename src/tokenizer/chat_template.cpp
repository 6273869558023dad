#include "tokenizer/chat_template.h"

#include <cctype>

#include "core/error.h"

namespace genai {
namespace {

std::string_view trim(std::string_view s) {
  const char* ws = " \t\n\r\v\f";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

// Formats whose every turn is open + role + close_role + content + end, then the assistant's
// header: ChatML (SmolLM2, Qwen), Granite 3.x, Phi-4-mini and GLM-Edge differ only in markers.
struct TurnMarkers {
  std::string_view open, close_role, end, generation;
  std::string_view assistant = "assistant";  // the assistant's role name in the text
};
constexpr TurnMarkers kChatMlMarkers{"<|im_start|>", "\n", "<|im_end|>\n", "<|im_start|>assistant\n"};
constexpr TurnMarkers kGraniteMarkers{"<|start_of_role|>", "<|end_of_role|>", "<|end_of_text|>\n",
                                      "<|start_of_role|>assistant<|end_of_role|>"};
constexpr TurnMarkers kPhiMarkers{"<|", "|>", "<|end|>", "<|assistant|>"};
constexpr TurnMarkers kGlmEdgeMarkers{"<|", "|>\n", "", "<|assistant|>\n"};
// Gemma 4: <|turn>role\n...<turn|>\n with a system role of its own, the assistant called "model".
constexpr TurnMarkers kGemma4Markers{"<|turn>", "\n", "<turn|>\n", "<|turn>model\n", "model"};

std::string marked_turns(const TurnMarkers& m, const std::vector<ChatTurn>& turns, std::string_view default_system) {
  std::string out;
  auto turn = [&](std::string_view role, std::string_view content) {
    out.append(m.open).append(role).append(m.close_role).append(content).append(m.end);
  };
  if ((turns.empty() || turns[0].role != "system") && !default_system.empty()) turn("system", default_system);
  for (const auto& t : turns) turn(t.role == "assistant" ? m.assistant : std::string_view(t.role), t.content);
  out.append(m.generation);
  return out;
}

// Llama 3: <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|> (contents trimmed, as
// Meta's template does); <|begin_of_text|> comes from add_bos.
std::string llama3(const std::vector<ChatTurn>& turns, std::string_view default_system) {
  std::string out;
  auto turn = [&out](std::string_view role, std::string_view content) {
    out += "<|start_header_id|>";
    out += role;
    out += "<|end_header_id|>\n\n";
    out += trim(content);
    out += "<|eot_id|>";
  };
  if ((turns.empty() || turns[0].role != "system") && !default_system.empty()) turn("system", default_system);
  for (const auto& t : turns) turn(t.role, t.content);
  out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  return out;
}

// Llama 2: <s>[INST] <<SYS>>\nsystem\n<</SYS>>\n\nuser [/INST] answer </s><s>[INST] ... [/INST]
std::string llama2(const std::vector<ChatTurn>& turns, std::string_view default_system) {
  std::string system(default_system);
  size_t first = 0;
  if (!turns.empty() && turns[0].role == "system") {
    system = turns[0].content;
    first = 1;
  }
  std::string out;
  bool first_user = true;
  for (size_t i = first; i < turns.size(); ++i) {
    const auto& t = turns[i];
    if (t.role == "user") {
      std::string content;
      if (first_user && !system.empty()) content = "<<SYS>>\n" + system + "\n<</SYS>>\n\n";
      content += t.content;
      if (!first_user) out += "<s>";  // the first BOS comes from add_bos
      out += "[INST] " + std::string(trim(content)) + " [/INST]";
      first_user = false;
    } else if (t.role == "assistant") {
      out += " " + std::string(trim(t.content)) + " </s>";
    } else {
      throw_input_error("chat turn role {:?} is not valid here (valid: system first, then user, assistant)", t.role);
    }
  }
  return out;
}

// Gemma: <start_of_turn>user\n...<end_of_turn>\n, the assistant called "model"; it has no
// system role, so a system text opens the first user turn (as llama.cpp does).
std::string gemma(const std::vector<ChatTurn>& turns, std::string_view default_system) {
  std::string out, system(default_system);
  size_t first = 0;
  if (!turns.empty() && turns[0].role == "system") {
    system = turns[0].content;
    first = 1;
  }
  for (size_t i = first; i < turns.size(); ++i) {
    const ChatTurn& t = turns[i];
    out += "<start_of_turn>";
    out += t.role == "assistant" ? "model" : t.role;
    out += "\n";
    if (i == first && !system.empty()) out += system + "\n\n";
    out += t.content + "<end_of_turn>\n";
  }
  out += "<start_of_turn>model\n";
  return out;
}

std::string smolvlm(const std::vector<ChatTurn>& turns, std::string_view default_system) {
  std::string out = "<|im_start|>";
  auto turn = [&](std::string_view role, std::string_view content) {
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(role.front())));
    out += role.substr(1);
    out += content.substr(0, kSmolVlmImageToken.size()) == kSmolVlmImageToken ? ":" : ": ";
    out += content;
    out += "<end_of_utterance>\n";
  };
  const bool has_system = !turns.empty() && turns.front().role == "system";
  if (!has_system && !default_system.empty()) turn("system", default_system);
  for (const auto& t : turns) turn(t.role.empty() ? "user" : t.role, t.content);
  return out + "Assistant:";
}

}  // namespace

const std::vector<ChatFormat>& all_chat_formats() {
  static const std::vector<ChatFormat> k{ChatFormat::kNone,    ChatFormat::kChatML, ChatFormat::kLlama3, ChatFormat::kLlama2,
                                         ChatFormat::kGranite, ChatFormat::kPhi,    ChatFormat::kGemma, ChatFormat::kGlmEdge,
                                         ChatFormat::kGemma4, ChatFormat::kSmolVlm};
  return k;
}

std::string_view chat_format_name(ChatFormat f) {
  switch (f) {
    case ChatFormat::kNone: return "none";
    case ChatFormat::kChatML: return "chatml";
    case ChatFormat::kLlama3: return "llama3";
    case ChatFormat::kLlama2: return "llama2";
    case ChatFormat::kGranite: return "granite";
    case ChatFormat::kPhi: return "phi";
    case ChatFormat::kGemma: return "gemma";
    case ChatFormat::kGlmEdge: return "glm_edge";
    case ChatFormat::kGemma4: return "gemma4";
    case ChatFormat::kSmolVlm: return "smolvlm";
  }
  return "none";
}

std::string apply_chat_template(ChatFormat format, const std::vector<ChatTurn>& turns) {
  return apply_chat_template(format, turns, format == ChatFormat::kChatML ? kSmolLM2DefaultSystem : "");
}

std::string apply_chat_template(ChatFormat format, const std::vector<ChatTurn>& turns, std::string_view default_system) {
  switch (format) {
    case ChatFormat::kChatML: return marked_turns(kChatMlMarkers, turns, default_system);
    case ChatFormat::kLlama3: return llama3(turns, default_system);
    case ChatFormat::kLlama2: return llama2(turns, default_system);
    case ChatFormat::kGranite: return marked_turns(kGraniteMarkers, turns, default_system);
    case ChatFormat::kPhi: return marked_turns(kPhiMarkers, turns, default_system);
    case ChatFormat::kGemma: return gemma(turns, default_system);
    case ChatFormat::kGlmEdge: return marked_turns(kGlmEdgeMarkers, turns, default_system);
    case ChatFormat::kGemma4: return marked_turns(kGemma4Markers, turns, default_system);
    case ChatFormat::kSmolVlm: return smolvlm(turns, default_system);
    case ChatFormat::kNone: break;
  }
  // No template: the turns' text as is (a plain completion prompt).
  std::string out;
  for (const auto& t : turns) {
    if (!out.empty()) out += "\n";
    out += t.content;
  }
  return out;
}

ChatFormat detect_chat_format(std::string_view jinja) {
  if (jinja.find("<end_of_utterance>") != std::string_view::npos) return ChatFormat::kSmolVlm;
  if (jinja.find("<|im_start|>") != std::string_view::npos) return ChatFormat::kChatML;
  if (jinja.find("<|start_header_id|>") != std::string_view::npos) return ChatFormat::kLlama3;
  if (jinja.find("[INST]") != std::string_view::npos) return ChatFormat::kLlama2;
  if (jinja.find("<|start_of_role|>") != std::string_view::npos) return ChatFormat::kGranite;
  if (jinja.find("<|turn>") != std::string_view::npos) return ChatFormat::kGemma4;
  if (jinja.find("<start_of_turn>") != std::string_view::npos) return ChatFormat::kGemma;
  if (jinja.find("<|assistant|>") != std::string_view::npos && jinja.find("<|end|>") != std::string_view::npos)
    return ChatFormat::kPhi;
  if (jinja.find("<|assistant|>") != std::string_view::npos && jinja.find("<|user|>") != std::string_view::npos)
    return ChatFormat::kGlmEdge;
  return ChatFormat::kNone;
}

std::string chat_default_system_prompt(std::string_view jinja) {
  constexpr std::string_view kOpen = "<|im_start|>system\n";
  // Only a literal inside a string constant counts; "'<|im_start|>' + message['role']" does not.
  size_t pos = 0;
  while ((pos = jinja.find(kOpen, pos)) != std::string_view::npos) {
    const size_t start = pos + kOpen.size();
    const size_t end = jinja.find("<|im_end|>", start);
    if (end == std::string_view::npos) return {};
    const std::string_view text = jinja.substr(start, end - start);
    if (text.find_first_of("{}'\"+") == std::string_view::npos) return std::string(text);
    pos = start;
  }
  return {};
}

}  // namespace genai
