#include "pipeline/artifact_keys.h"

#include <array>

#include <fmt/format.h>

#include "core/error.h"
#include "pipeline/encoder_programs.h"

namespace genai::pipeline {
namespace {

struct KeyName {
  ArtifactKey key;
  std::string_view name;
};
constexpr std::array<KeyName, 6> kKeys = {{{ArtifactKey::kTextDecoder, "text_decoder"},
                                           {ArtifactKey::kTokEmbedding, "tok_embedding"},
                                           {ArtifactKey::kVisionEncoder, "vision_encoder"},
                                           {ArtifactKey::kAudioEncoder, "audio_encoder"},
                                           {ArtifactKey::kTextEncoder, "text_encoder"},
                                           {ArtifactKey::kAttentionSinkEvictor, "attention_sink_evictor"}}};

struct ModeName {
  ModelMode mode;
  std::string_view name;
};
constexpr std::array<ModeName, 3> kModes = {
    {{ModelMode::kKv, "kv"}, {ModelMode::kHybrid, "hybrid"}, {ModelMode::kLookahead, "lookahead"}}};

}  // namespace

std::string_view artifact_key_name(ArtifactKey key) {
  for (const auto& k : kKeys) {
    if (k.key == key) return k.name;
  }
  return registered_artifact_key_name(key).value_or("unknown");
}

std::vector<ArtifactKey> all_artifact_keys() {
  std::vector<ArtifactKey> out;
  for (const auto& k : kKeys) out.push_back(k.key);
  for (ArtifactKey k : registered_artifact_keys()) out.push_back(k);
  return out;
}

ArtifactKey parse_artifact_key(std::string_view name) {
  std::string valid;
  for (const auto& k : kKeys) {
    if (k.name == name) return k.key;
    valid += (valid.empty() ? "" : ", ") + std::string(k.name);
  }
  if (const auto registered = registered_artifact_key(name)) return *registered;
  for (ArtifactKey k : registered_artifact_keys()) valid += ", " + std::string(artifact_key_name(k));
  throw_input_error("unknown artifact key '{}'; valid keys: {}", name, valid);
}

std::string_view model_mode_name(ModelMode mode) {
  for (const auto& m : kModes) {
    if (m.mode == mode) return m.name;
  }
  return "unknown";
}

ModelMode parse_model_mode(std::string_view name) {
  for (const auto& m : kModes) {
    if (m.name == name) return m.mode;
  }
  throw_input_error("--model_mode '{}' is not valid; valid choices: kv, hybrid, lookahead", name);
}

std::string artifact_file_stem(ArtifactKey key, ModelMode mode, std::string_view decoder_model) {
  switch (key) {
    case ArtifactKey::kTextDecoder: {
      std::string stem = fmt::format("{}_llama_qnn", model_mode_name(mode));
      return decoder_model == "stories260k" ? "stories260k_" + stem : stem;
    }
    case ArtifactKey::kAttentionSinkEvictor:
      return "attention_sink_evictor";
    default:
      return fmt::format("{}_qnn", artifact_key_name(key));
  }
}

nlohmann::json artifact_map_to_json(const ArtifactMap& map) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, path] : map) j[std::string(artifact_key_name(key))] = path.string();
  return j;
}

ArtifactMap artifact_map_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw_input_error("artifact map: expected an object {{artifact_key: path}}");
  ArtifactMap out;
  for (const auto& [key, value] : j.items()) {
    ArtifactKey k = parse_artifact_key(key);
    if (!value.is_string()) throw_input_error("artifact map: path of '{}' must be a string, got {}", key, value.dump());
    out[k] = value.get<std::string>();
  }
  return out;
}

}  // namespace genai::pipeline
