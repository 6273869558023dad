// Structural checks of a graph: unique value names, SSA def-before-use, every op's result type
// equal to what infer_op_type derives, weights present in the shared Weights with the recorded
// type, constants carrying a tensor of their type, inputs/outputs bound to defined values.
#pragma once

#include <string>

#include "graph/graph.h"

namespace genai::graph {

// Empty when the graph is well formed; otherwise the first problem, naming the op (index, result
// name, kind) or the value.
std::string verify_graph(const Graph& g);
// Throws Failure "graph <name>: <context>: <problem>" when verify_graph finds one.
void verify_graph_or_throw(const Graph& g, const std::string& context);

}  // namespace genai::graph
