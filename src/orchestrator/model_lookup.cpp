#include "orchestrator/model_lookup.h"

#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"

namespace genai::orchestrator {
namespace {

using A = Architecture;
using C = ChatFormat;

DecoderModelSpec supported(std::string_view name, std::string_view version, A arch, int64_t dim, int64_t layers,
                           int64_t heads, int64_t kv, int64_t vocab, C chat, std::vector<std::string_view> kinds,
                           std::string_view recipe) {
  DecoderModelSpec s;
  s.name = name;
  s.version = version;
  s.arch = arch;
  s.dim = dim;
  s.n_layers = layers;
  s.n_heads = heads;
  s.n_kv_heads = kv;
  s.vocab_size = vocab;
  s.chat_format = chat;
  s.tokenizer_kinds = std::move(kinds);
  s.recipe_name = recipe;
  return s;
}

const std::vector<DecoderModelSpec>& table() {
  static const std::vector<DecoderModelSpec> t = [] {
    const std::vector<std::string_view> spm = {"llama2c", "spm", "sentencepiece"}, bpe = {"bpe"};
    std::vector<DecoderModelSpec> v;
    v.push_back(supported("stories260k", "llama2", A::kLlama, 64, 5, 8, 4, 512, C::kNone, spm, "stories260k"));
    v.push_back(supported("stories110m", "llama2", A::kLlama, 768, 12, 12, 12, 32000, C::kNone, spm, "stories110m"));
    v.push_back(supported("llama3_2-1b_instruct", "llama3", A::kLlama, 2048, 16, 32, 8, 128256, C::kLlama3, bpe,
                          "llama3.2-1b"));
    v.push_back(supported("llama3_2-3b_instruct", "llama3", A::kLlama, 3072, 28, 24, 8, 128256, C::kLlama3, bpe,
                          "llama3.2-3b"));
    v.push_back(supported("codegen2_1b", "codegen", A::kCodeGen, 2048, 16, 16, 16, 51200, C::kNone, bpe, "codegen2_1b"));
    v.push_back(supported("gemma-2b", "gemma", A::kGemma, 2048, 18, 8, 1, 256000, C::kGemma, {"sentencepiece", "spm"},
                          "gemma-2b"));
    v.push_back(supported("gemma2-2b", "gemma2", A::kGemma2, 2304, 26, 8, 4, 256000, C::kGemma, {"sentencepiece", "spm"},
                          "gemma2-2b"));
    v.push_back(supported("gemma3-1b", "gemma3", A::kGemma3, 1152, 26, 4, 1, 262144, C::kGemma, {"sentencepiece", "spm"},
                          "gemma3-1b"));
    v.push_back(supported("granite_3_3-2b_instruct", "granite", A::kGranite, 2048, 40, 32, 8, 49159, C::kGranite, bpe,
                          "granite_3_3-2b"));
    // Granite 3.3-2B's shape with the audio token (a Granite Speech folder: its text_config).
    v.push_back(supported("granite_speech_3_3-2b", "granite_speech", A::kGranite, 2048, 40, 32, 8, 49160, C::kGranite, bpe,
                          "granite_speech_3_3-2b"));
    v.push_back(supported("phi_4_mini", "phi_4_mini", A::kPhi3, 3072, 32, 24, 8, 200064, C::kPhi, bpe, "phi_4_mini"));
    v.push_back(supported("qwen2_5-0_5b", "qwen2_5", A::kQwen2, 896, 24, 14, 2, 151936, C::kChatML, bpe, "qwen2_5-0_5b"));
    v.push_back(supported("qwen2_5-1_5b", "qwen2_5", A::kQwen2, 1536, 28, 12, 2, 151936, C::kChatML, bpe, "qwen2_5-1_5b"));
    v.push_back(supported("qwen3-0_6b", "qwen3", A::kQwen3, 1024, 28, 16, 8, 151936, C::kChatML, bpe, "qwen3-0_6b"));
    v.push_back(supported("qwen3-1_7b", "qwen3", A::kQwen3, 2048, 28, 16, 8, 151936, C::kChatML, bpe, "qwen3-1_7b"));
    v.push_back(supported("smollm2_135m", "smollm2_135m", A::kLlama, 576, 30, 9, 3, 49152, C::kChatML, bpe, "smollm2"));
    v.push_back(supported("smollm3-3b", "smollm3", A::kSmolLM3, 2048, 36, 16, 4, 128256, C::kChatML, bpe, "smollm3-3b"));
    v.push_back(supported("glm-1_5b", "glm", A::kGlm, 2048, 28, 16, 4, 59264, C::kGlmEdge, bpe, "glm-1_5b"));
    // SmolLM2-360M's shape with the 128 tokens SmolVLM adds (a SmolVLM folder: its text_config).
    v.push_back(supported("smolvlm_500m_instruct", "smolvlm", A::kLlama, 960, 32, 15, 5, 49280, C::kSmolVlm, bpe,
                          "smolvlm_500m_instruct"));
    // Qwen2.5-0.5B's shape with InternVL's tokens (an InternVL folder: its text_config).
    v.push_back(supported("internvl3_1b", "internvl3", A::kQwen2, 896, 24, 14, 2, 151674, C::kChatML, bpe, "internvl3_1b"));
    v.push_back(supported("gemma4-e2b", "gemma4", A::kGemma4, 1536, 35, 8, 1, 262144, C::kGemma4, bpe, "gemma4-e2b"));
    return v;
  }();
  return t;
}

std::string valid_names() {
  std::string out;
  for (const auto& s : table()) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

std::string shape_text(Architecture arch, int64_t dim, int64_t layers, int64_t heads, int64_t kv, int64_t vocab) {
  return fmt::format("{}, dim {}, {} layers, {} heads ({} kv), vocab {}", architecture_name(arch), dim, layers, heads, kv,
                     vocab);
}

}  // namespace

std::span<const DecoderModelSpec> decoder_model_table() { return table(); }

const DecoderModelSpec* find_decoder_model(std::string_view name) {
  for (const auto& s : table()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const DecoderModelSpec* identify_decoder_model(const ModelConfig& c) {
  for (const auto& s : table()) {
    if (s.arch == c.arch && s.dim == c.dim && s.n_layers == c.n_layers &&
        s.n_heads == c.n_heads && s.n_kv_heads == c.n_kv_heads && s.vocab_size == c.vocab_size)
      return &s;
  }
  return nullptr;
}

void check_checkpoint_matches(const DecoderModelSpec& s, const ModelConfig& c, std::string_view checkpoint) {
  std::vector<std::string> diffs;
  auto field = [&](std::string_view what, int64_t want, int64_t got) {
    if (want != got) diffs.push_back(fmt::format("{} {} vs {}", what, want, got));
  };
  if (s.arch != c.arch)
    diffs.push_back(fmt::format("architecture {} vs {}", architecture_name(s.arch), architecture_name(c.arch)));
  field("dim", s.dim, c.dim);
  field("layers", s.n_layers, c.n_layers);
  field("heads", s.n_heads, c.n_heads);
  field("kv heads", s.n_kv_heads, c.n_kv_heads);
  field("vocab", s.vocab_size, c.vocab_size);
  if (diffs.empty()) return;
  std::string list;
  for (const auto& d : diffs) list += (list.empty() ? "" : "; ") + d;
  throw_input_error(
      "--decoder_model {} does not match --checkpoint {}: {} is {} but the checkpoint is {} (differs: {}); "
      "pass the right --decoder_model or leave it out (the checkpoint identifies itself)",
      s.name, checkpoint, s.name, shape_text(s.arch, s.dim, s.n_layers, s.n_heads, s.n_kv_heads, s.vocab_size),
      shape_text(c.arch, c.dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size), list);
}

ResolvedModel resolve_model(std::string_view decoder_model, const ModelConfig& config, std::string_view checkpoint,
                            ChatFormat checkpoint_chat, std::string_view tokenizer_kind) {
  ResolvedModel r;
  if (!decoder_model.empty()) {
    r.spec = find_decoder_model(decoder_model);
    if (!r.spec) throw_input_error("--decoder_model '{}' is not a known model; valid: {}", decoder_model, valid_names());
    check_checkpoint_matches(*r.spec, config, checkpoint);
    r.named = true;
    if (!tokenizer_kind.empty()) {
      bool known = false;
      for (auto k : r.spec->tokenizer_kinds) known = known || k == tokenizer_kind;
      if (!known)
        log::warn("--decoder_model {} ships a {} tokenizer; this run uses a '{}' tokenizer", r.spec->name,
                  r.spec->tokenizer_kinds.empty() ? std::string_view("?") : r.spec->tokenizer_kinds.front(), tokenizer_kind);
    }
  } else {
    r.spec = identify_decoder_model(config);
  }
  r.chat_format = checkpoint_chat;
  if (r.chat_format == ChatFormat::kNone && r.named) r.chat_format = r.spec->chat_format;
  r.recipe_name = r.spec ? std::string(r.spec->recipe_name) : config.name;
  return r;
}

}  // namespace genai::orchestrator
