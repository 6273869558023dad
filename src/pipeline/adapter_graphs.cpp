#include "pipeline/adapter_graphs.h"

#include <deque>
#include <mutex>

#include "core/error.h"

namespace genai::pipeline {
namespace {

// Far past the enum's values and the encoder programs' (encoder_programs.cpp counts up from the
// enum's end).
constexpr int kFirstAdapterGraph = 1 << 16;

struct AdapterEntry {
  AdapterGraph graph;
  std::string name;
};

// A deque: the names' string_views stay valid while more are registered.
struct AdapterRegistry {
  std::mutex mutex;
  std::deque<AdapterEntry> entries;
};

AdapterRegistry& adapter_registry() {
  static AdapterRegistry r;
  return r;
}

}  // namespace

GraphName adapter_graph(GraphName base, std::string_view adapter) {
  if (adapter_graph_of(base)) throw_failure("internal: graph {} already has an adapter", graph_name_str(base));
  const std::string name = std::string(graph_name_str(base)) + std::string(kLoraInfix) + std::string(adapter);
  AdapterRegistry& r = adapter_registry();
  const std::lock_guard lock(r.mutex);
  for (size_t i = 0; i < r.entries.size(); ++i)
    if (r.entries[i].name == name) return static_cast<GraphName>(kFirstAdapterGraph + static_cast<int>(i));
  r.entries.push_back({{base, std::string(adapter)}, name});
  return static_cast<GraphName>(kFirstAdapterGraph + static_cast<int>(r.entries.size() - 1));
}

std::optional<AdapterGraph> adapter_graph_of(GraphName graph) {
  const int index = static_cast<int>(graph) - kFirstAdapterGraph;
  if (index < 0) return std::nullopt;
  AdapterRegistry& r = adapter_registry();
  const std::lock_guard lock(r.mutex);
  if (static_cast<size_t>(index) >= r.entries.size()) return std::nullopt;
  return r.entries[static_cast<size_t>(index)].graph;
}

std::optional<std::string_view> adapter_graph_name(GraphName graph) {
  const int index = static_cast<int>(graph) - kFirstAdapterGraph;
  if (index < 0) return std::nullopt;
  AdapterRegistry& r = adapter_registry();
  const std::lock_guard lock(r.mutex);
  if (static_cast<size_t>(index) >= r.entries.size()) return std::nullopt;
  return std::string_view(r.entries[static_cast<size_t>(index)].name);
}

std::optional<GraphName> adapter_graph_named(std::string_view name) {
  AdapterRegistry& r = adapter_registry();
  const std::lock_guard lock(r.mutex);
  for (size_t i = 0; i < r.entries.size(); ++i)
    if (r.entries[i].name == name) return static_cast<GraphName>(kFirstAdapterGraph + static_cast<int>(i));
  return std::nullopt;
}

}  // namespace genai::pipeline
