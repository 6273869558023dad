// --num_sharding: a program's decoder graphs cut into layer shards (graph::split_by_layers), each
// shard a bundle of its own (its graph, its inputs, its quantized I/O types from the same
// encodings), and a method assembled from its shards' delegated methods: one delegate per shard,
// called in order, the values passed between shards held in the method's planned buffer after the
// largest shard's arena.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "compile/compiler_adapter.h"
#include "pipeline/graph_bundle.h"

namespace genai::compile {

// `bundle` split into `parts` bundles (InputError naming --num_sharding for a count outside
// [1, layers]).
std::vector<pipeline::GraphBundle> shard_bundle(const pipeline::GraphBundle& bundle, int64_t parts);

// One method from its shards, compiled one delegate each (shards[k] from bundles[k]), in order.
CompiledMethod join_shards(std::string_view method_name, const pipeline::GraphBundle& whole,
                           const std::vector<pipeline::GraphBundle>& bundles, std::vector<CompiledMethod> shards);

}  // namespace genai::compile
