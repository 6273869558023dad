#include "pipeline/encoder_programs.h"

#include <deque>
#include <mutex>
#include <string>

#include "core/error.h"

namespace genai::pipeline {
namespace {

// Values past the last enumerator of each enum: the enums' underlying int holds them, and the
// name tables look them up here.
constexpr int kFirstFreeGraph = static_cast<int>(GraphName::kAudioEncoder) + 1;
constexpr int kFirstFreeKey = static_cast<int>(ArtifactKey::kAttentionSinkEvictor) + 1;

struct Registered {
  EncoderProgram program;
  std::string graph_name, key_name;
};

// A deque: the names' string_views stay valid while more are registered.
struct Registry {
  std::mutex mutex;
  std::deque<Registered> entries;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

std::vector<EncoderProgram> encoder_programs() {
  std::vector<EncoderProgram> out{{GraphName::kVisionEncoder, ArtifactKey::kVisionEncoder},
                                  {GraphName::kAudioEncoder, ArtifactKey::kAudioEncoder}};
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  for (const auto& e : r.entries) out.push_back(e.program);
  return out;
}

std::optional<ArtifactKey> encoder_program_key(GraphName graph) {
  for (const EncoderProgram& p : encoder_programs())
    if (p.graph == graph) return p.key;
  return std::nullopt;
}

bool is_encoder_program(ArtifactKey key) {
  for (const EncoderProgram& p : encoder_programs())
    if (p.key == key) return true;
  return false;
}

EncoderProgram register_encoder_program(std::string_view graph_name, std::string_view artifact_key) {
  const std::optional<GraphName> graph = [&]() -> std::optional<GraphName> {
    try {
      return parse_graph_name(graph_name);
    } catch (const InputError&) {
      return std::nullopt;
    }
  }();
  const std::optional<ArtifactKey> key = [&]() -> std::optional<ArtifactKey> {
    try {
      return parse_artifact_key(artifact_key);
    } catch (const InputError&) {
      return std::nullopt;
    }
  }();
  if (graph && key && encoder_program_key(*graph) == key) return {*graph, *key};
  if (graph || key)
    throw_failure("encoder program {} / {}: the name is taken by another graph or artifact", graph_name, artifact_key);
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  const int index = static_cast<int>(r.entries.size());
  r.entries.push_back({{static_cast<GraphName>(kFirstFreeGraph + index), static_cast<ArtifactKey>(kFirstFreeKey + index)},
                       std::string(graph_name),
                       std::string(artifact_key)});
  return r.entries.back().program;
}

std::optional<std::string_view> registered_graph_name(GraphName graph) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  for (const auto& e : r.entries)
    if (e.program.graph == graph) return e.graph_name;
  return std::nullopt;
}

std::optional<GraphName> registered_graph(std::string_view name) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  for (const auto& e : r.entries)
    if (e.graph_name == name) return e.program.graph;
  return std::nullopt;
}

std::optional<std::string_view> registered_artifact_key_name(ArtifactKey key) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  for (const auto& e : r.entries)
    if (e.program.key == key) return e.key_name;
  return std::nullopt;
}

std::optional<ArtifactKey> registered_artifact_key(std::string_view name) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  for (const auto& e : r.entries)
    if (e.key_name == name) return e.program.key;
  return std::nullopt;
}

std::vector<ArtifactKey> registered_artifact_keys() {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  std::vector<ArtifactKey> out;
  for (const auto& e : r.entries) out.push_back(e.program.key);
  return out;
}

std::vector<std::string_view> registered_graph_names() {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  std::vector<std::string_view> out;
  for (const auto& e : r.entries) out.push_back(e.graph_name);
  return out;
}

}  // namespace genai::pipeline
