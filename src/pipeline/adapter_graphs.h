// Adapter graphs: a LoRA adapter's copy of a decoder graph, "<graph>_lora_<adapter>"
// (kv_forward_lora_alpha), compiled as one more method of its base graph's program. The methods
// share the base weights' data; only the adapter's factors and its activation encodings are its
// own. Their graph names exist once an adapter is named (adapter_graph), for the rest of the
// process, and parse and print like the built-in ones.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/graph_names.h"

namespace genai::pipeline {

inline constexpr std::string_view kLoraInfix = "_lora_";

// The graph `base` with `adapter`'s low-rank paths (registered on first use); the adapter's
// name passed check_lora_adapter_name.
GraphName adapter_graph(GraphName base, std::string_view adapter);

struct AdapterGraph {
  GraphName base;
  std::string adapter;
};
// The base graph and adapter of an adapter graph; nullopt for any other graph.
std::optional<AdapterGraph> adapter_graph_of(GraphName graph);

// Used by graph_names.cpp's name tables.
std::optional<std::string_view> adapter_graph_name(GraphName graph);
std::optional<GraphName> adapter_graph_named(std::string_view name);

}  // namespace genai::pipeline
