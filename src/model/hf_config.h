// Hugging Face config.json <-> ModelConfig (every family of model_config.h's table).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/model_config.h"

namespace genai {

// Architecture by name (model_config.h's table); InputError naming `source`, `key` and the valid ones.
Architecture parse_architecture(const std::string& name, const std::string& source, const std::string& key);

// config.json as a JSON object; InputError naming the file when it is not one.
nlohmann::json read_hf_config_json(const std::filesystem::path& config_json);
// Reads config.json; missing or mistyped keys and unsupported settings are InputErrors naming the
// file and the key. A multimodal checkpoint's config (model_type gemma4 with a text_config, as
// google/gemma-4-e2b-it ships it, or smolvlm / idefics3) gives its text decoder's config.
ModelConfig read_hf_config(const std::filesystem::path& config_json);
// The names under which a checkpoint of `config` may keep the decoder tensor `canonical`, in the
// order to try: itself for a text-only checkpoint; for multimodal ones the text model's prefix in
// place of "model." (gemma4: model.language_model., smolvlm: model.text_model., internvl:
// language_model.model. as saved, model.language_model. as its modules name it) and InternVL's
// head as language_model.lm_head.weight.
std::vector<std::string> hf_text_tensor_names(const nlohmann::json& config, const std::string& canonical);
// config.json text for `config` (sorted keys, deterministic); transformers loads it.
std::string hf_config_json(const ModelConfig& config);

}  // namespace genai
