// Readable, stable text form of a graph (one op per line: result, type, op, operands, attributes)
// and the same content as JSON. Identical graphs give identical bytes, so tests compare dumps.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "graph/graph.h"

namespace genai::graph {

std::string dump_graph_text(const Graph& g);
nlohmann::json dump_graph_json(const Graph& g);

}  // namespace genai::graph
