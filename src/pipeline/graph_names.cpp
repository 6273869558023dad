#include "pipeline/graph_names.h"

#include <array>
#include <string>

#include "core/error.h"
#include "pipeline/adapter_graphs.h"
#include "pipeline/encoder_programs.h"

namespace genai::pipeline {
namespace {

struct Name {
  GraphName graph;
  std::string_view name;
};
constexpr std::array<Name, 8> kNames = {{{GraphName::kKvForward, "kv_forward"},
                                         {GraphName::kPrefillForward, "prefill_forward"},
                                         {GraphName::kTokEmbeddingKvForward, "tok_embedding_kv_forward"},
                                         {GraphName::kTokEmbeddingPrefillForward, "tok_embedding_prefill_forward"},
                                         {GraphName::kKvForwardAr1, "kv_forward_ar1"},
                                         {GraphName::kTokEmbeddingKvForwardAr1, "tok_embedding_kv_forward_ar1"},
                                         {GraphName::kVisionEncoder, "vision_encoder"},
                                         {GraphName::kAudioEncoder, "audio_encoder"}}};

}  // namespace

std::string_view graph_name_str(GraphName graph) {
  for (const auto& n : kNames) {
    if (n.graph == graph) return n.name;
  }
  if (const auto adapted = adapter_graph_name(graph)) return *adapted;
  return registered_graph_name(graph).value_or("unknown");
}

GraphName parse_graph_name(std::string_view name) {
  std::string valid;
  for (const auto& n : kNames) {
    if (n.name == name) return n.graph;
    valid += (valid.empty() ? "" : ", ") + std::string(n.name);
  }
  if (const auto registered = registered_graph(name)) return *registered;
  if (const auto adapted = adapter_graph_named(name)) return *adapted;
  for (std::string_view n : registered_graph_names()) valid += ", " + std::string(n);
  throw_input_error("unknown graph name '{}'; valid graph names: {}", name, valid);
}

std::vector<GraphName> decoder_graph_names(ModelMode mode) {
  if (mode == ModelMode::kKv) return {GraphName::kKvForward};
  if (mode == ModelMode::kLookahead) return {GraphName::kKvForward, GraphName::kPrefillForward, GraphName::kKvForwardAr1};
  return {GraphName::kKvForward, GraphName::kPrefillForward};
}

std::vector<GraphName> tok_embedding_graph_names(ModelMode mode) {
  if (mode == ModelMode::kKv) return {GraphName::kTokEmbeddingKvForward};
  if (mode == ModelMode::kLookahead)
    return {GraphName::kTokEmbeddingKvForward, GraphName::kTokEmbeddingPrefillForward,
            GraphName::kTokEmbeddingKvForwardAr1};
  return {GraphName::kTokEmbeddingKvForward, GraphName::kTokEmbeddingPrefillForward};
}

}  // namespace genai::pipeline
