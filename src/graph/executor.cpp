#include "graph/executor.h"

#include "core/error.h"

namespace genai::graph {

InterpreterExecutor::InterpreterExecutor(GraphMap graphs) : graphs_(std::move(graphs)) {}

bool InterpreterExecutor::has_graph(std::string_view name) const { return graphs_.count(std::string(name)) != 0; }

const Graph& InterpreterExecutor::graph(std::string_view name) const {
  auto it = graphs_.find(std::string(name));
  if (it == graphs_.end()) {
    std::string valid;
    for (const auto& [n, g] : graphs_) valid += (valid.empty() ? "" : ", ") + n;
    throw_input_error("no graph named '{}' (graphs: {})", name, valid);
  }
  return *it->second;
}

std::vector<IoSpec> InterpreterExecutor::inputs(std::string_view name) const {
  const Graph& g = graph(name);
  std::vector<IoSpec> specs;
  for (ValueId id : g.inputs()) specs.push_back({g.value(id).name, g.value(id).type});
  return specs;
}

std::vector<IoSpec> InterpreterExecutor::outputs(std::string_view name) const {
  const Graph& g = graph(name);
  std::vector<IoSpec> specs;
  for (const auto& o : g.outputs()) specs.push_back({o.name, g.value(o.value).type});
  return specs;
}

TensorMap InterpreterExecutor::run(std::string_view name, const InputMap& inputs) {
  InterpreterOptions options;
  options.observer = observer_;
  return interpret(graph(name), inputs, options);
}

}  // namespace genai::graph
