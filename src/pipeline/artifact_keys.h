// Artifact keys name the .pte files a pipeline produces ({artifact_key: path} end to end). They are
// a different name space from graph names (graph_names.h: methods inside one .pte); distinct enum
// types keep the two from being mixed up. The decode-QDQ evaluation file (decode_qdq.pt2) is
// deliberately not an artifact key: it is not a program the runtime loads.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace genai::pipeline {

enum class ArtifactKey { kTextDecoder, kTokEmbedding, kVisionEncoder, kAudioEncoder, kTextEncoder, kAttentionSinkEvictor };

enum class ModelMode { kKv, kHybrid, kLookahead };

std::string_view artifact_key_name(ArtifactKey key);  // "text_decoder", ...
std::vector<ArtifactKey> all_artifact_keys();
// InputError naming the valid keys.
ArtifactKey parse_artifact_key(std::string_view name);

std::string_view model_mode_name(ModelMode mode);  // "kv", "hybrid", "lookahead"
ModelMode parse_model_mode(std::string_view name);  // InputError naming --model_mode and choices

// Upstream's .pte file stem: text decoder "<mode>_llama_qnn" (prefixed "stories260k_" for
// stories260k), "attention_sink_evictor", others "<key>_qnn".
std::string artifact_file_stem(ArtifactKey key, ModelMode mode, std::string_view decoder_model = "");

// Absent artifacts are omitted, never null.
using ArtifactMap = std::map<ArtifactKey, std::filesystem::path>;
nlohmann::json artifact_map_to_json(const ArtifactMap& map);
// InputError for unknown keys or non-string paths.
ArtifactMap artifact_map_from_json(const nlohmann::json& j);

}  // namespace genai::pipeline
