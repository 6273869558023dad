// Upstream's --decoder_model names (llama.py SUPPORTED_LLM_MODELS) mapped to what we need to know
// about each: the architecture and shape of the released checkpoint, the chat template family
// (upstream's DECODER_MODEL_VERSION), the tokenizer kinds it ships, and the name the recipe table
// (quant::default_recipe) knows it by. The checkpoint always comes from --checkpoint (no hub
// access); when the checkpoint itself says what it is (GGUF metadata, config.json) the name is
// optional, and when both are given they must agree.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/model_config.h"
#include "tokenizer/chat_template.h"

namespace genai::orchestrator {

struct DecoderModelSpec {
  std::string_view name;     // --decoder_model spelling
  std::string_view version;  // upstream DECODER_MODEL_VERSION (runner chat template family)
  Architecture arch = Architecture::kLlama;
  // Shape of the released checkpoint (checked against the checkpoint's config).
  int64_t dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, vocab_size = 0;
  ChatFormat chat_format = ChatFormat::kNone;  // used when the checkpoint carries no template
  std::vector<std::string_view> tokenizer_kinds;  // Tokenizer::kind() values it ships with
  std::string_view recipe_name;                   // what quant::default_recipe is asked for
};

// Every upstream name, in upstream order (options::supported_decoder_models()).
std::span<const DecoderModelSpec> decoder_model_table();
// nullptr when unknown.
const DecoderModelSpec* find_decoder_model(std::string_view name);

// The natively built model whose released shape `config` has (arch, dim, layers, heads, kv heads,
// vocab), or nullptr.
const DecoderModelSpec* identify_decoder_model(const ModelConfig& config);

// InputError when `config` (read from `checkpoint`) disagrees with `spec`: the message names both, each differing field and both values.
void check_checkpoint_matches(const DecoderModelSpec& spec, const ModelConfig& config, std::string_view checkpoint);

// The model a run is about: the --decoder_model entry (checked against the checkpoint) or, without
// a name, the entry the checkpoint's shape identifies (may be null: any checkpoint of a built family
// works without one).
struct ResolvedModel {
  const DecoderModelSpec* spec = nullptr;
  bool named = false;  // spec came from --decoder_model
  ChatFormat chat_format = ChatFormat::kNone;
  // What quant::default_recipe is asked for: the spec's recipe name, else the checkpoint's name.
  std::string recipe_name;
};

// `decoder_model` empty = not given. `checkpoint_chat` is the format the checkpoint's own template
// gives (kNone when it has none).
ResolvedModel resolve_model(std::string_view decoder_model, const ModelConfig& config, std::string_view checkpoint,
                            ChatFormat checkpoint_chat, std::string_view tokenizer_kind);

}  // namespace genai::orchestrator
