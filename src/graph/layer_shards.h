// A decoder graph cut into consecutive parts by layer, as upstream's --num_sharding cuts a model
// into several QNN contexts: part k holds the ops of layers [k*L/n, (k+1)*L/n); the first part also
// holds what precedes layer 0 (the embedding, rotary tables, masks) and the last what follows the
// last layer (the final norm and the output head). A value one part computes and a later part reads
// becomes an output of the first and an input of the second (the hidden state, tables computed
// once); each part reads the graph inputs it uses and produces the graph outputs it computes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace genai::graph {

// One part: its graph (named like the whole one; inputs and outputs named as the whole graph's, or
// for a value passed between parts, by the name both parts use for it).
struct LayerShard {
  std::shared_ptr<Graph> graph;
};

// The layer an op belongs to by its result's name ("layers.<i>.<...>"), or -1.
int64_t layer_of(const std::string& value_name);

// Layers of a decoder graph: one more than the highest layer its ops name (0: none).
int64_t layer_count(const Graph& g);

// Splits `g` into `parts` shards over its layer_count(g) layers. InputError when parts is not in
// [1, layers] (it names --num_sharding); parts == 1 gives one copy of the graph.
std::vector<LayerShard> split_by_layers(const Graph& g, int64_t parts);

}  // namespace genai::graph
