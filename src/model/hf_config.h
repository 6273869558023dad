// Hugging Face config.json <-> ModelConfig (every family of model_config.h's table).
#pragma once

#include <filesystem>
#include <string>

#include "model/model_config.h"

namespace genai {

// Architecture by name (model_config.h's table); InputError naming `source`, `key` and the valid ones.
Architecture parse_architecture(const std::string& name, const std::string& source, const std::string& key);

// Reads config.json; missing or mistyped keys and unsupported settings are InputErrors naming the
// file and the key.
ModelConfig read_hf_config(const std::filesystem::path& config_json);
// config.json text for `config` (sorted keys, deterministic); transformers loads it.
std::string hf_config_json(const ModelConfig& config);

}  // namespace genai
