#include "graph/layer_shards.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "core/error.h"

namespace genai::graph {

int64_t layer_of(const std::string& value_name) {
  constexpr std::string_view kPrefix = "layers.";
  if (value_name.compare(0, kPrefix.size(), kPrefix) != 0) return -1;
  const char* begin = value_name.data() + kPrefix.size();
  const char* end = value_name.data() + value_name.size();
  int64_t layer = -1;
  const auto [ptr, ec] = std::from_chars(begin, end, layer);
  if (ec != std::errc() || ptr == begin || ptr == end || *ptr != '.') return -1;
  return layer;
}

int64_t layer_count(const Graph& g) {
  int64_t top = -1;
  for (const Op& op : g.ops()) top = std::max(top, layer_of(g.value(op.result).name));
  return top + 1;
}

std::vector<LayerShard> split_by_layers(const Graph& g, int64_t parts) {
  const int64_t n_layers = layer_count(g);
  if (parts < 1 || parts > n_layers)
    throw_input_error("--num_sharding {}: the decoder has {} layers; valid: 1 to {}", parts, n_layers, n_layers);
  const auto& ops = g.ops();
  const auto& values = g.values();
  // The part of each op: its layer's part, never below the part of an op before it (ops are in
  // topological order, so a value is always computed in the part that reads it or an earlier one).
  std::vector<int64_t> part_of_op(ops.size(), 0);
  int64_t current = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const int64_t layer = layer_of(values[static_cast<size_t>(ops[i].result)].name);
    if (layer >= 0) current = std::max(current, layer * parts / n_layers);
    part_of_op[i] = current;
  }
  auto part_of_value = [&](ValueId v) {
    const Value& value = values[static_cast<size_t>(v)];
    return value.kind == ValueKind::kOpResult ? part_of_op[static_cast<size_t>(value.producer)] : int64_t{-1};
  };
  // Values read by a later part than the one computing them, and the graph outputs by value.
  std::set<ValueId> passed;
  for (size_t i = 0; i < ops.size(); ++i)
    for (ValueId v : ops[i].operands) {
      const int64_t p = part_of_value(v);
      if (p >= 0 && p < part_of_op[i]) passed.insert(v);
    }
  std::map<ValueId, std::string> output_name;
  for (const GraphOutput& o : g.outputs()) {
    if (values[static_cast<size_t>(o.value)].kind != ValueKind::kOpResult)
      throw_failure("graph {}: output {} is not computed by an op; it cannot be sharded", g.name(), o.name);
    output_name.emplace(o.value, o.name);  // a value output twice passes under its first name
  }
  auto passed_name = [&](ValueId v) {
    auto it = output_name.find(v);
    return it != output_name.end() ? it->second : values[static_cast<size_t>(v)].name;
  };

  std::vector<LayerShard> shards;
  for (int64_t p = 0; p < parts; ++p) {
    auto s = std::make_shared<Graph>(g.name(), g.weights());
    std::vector<ValueId> map(values.size(), -1);
    // Inputs: the graph inputs this part reads, in the graph's order, then the values earlier
    // parts pass to it, in value order.
    std::set<ValueId> reads;
    for (size_t i = 0; i < ops.size(); ++i)
      if (part_of_op[i] == p)
        for (ValueId v : ops[i].operands) reads.insert(v);
    for (ValueId in : g.inputs())
      if (reads.count(in)) map[static_cast<size_t>(in)] = s->add_input(values[static_cast<size_t>(in)].name,
                                                                       values[static_cast<size_t>(in)].type.dtype,
                                                                       values[static_cast<size_t>(in)].type.shape);
    for (ValueId v : reads) {
      const int64_t from = part_of_value(v);
      if (from >= 0 && from < p)
        map[static_cast<size_t>(v)] = s->add_input(passed_name(v), values[static_cast<size_t>(v)].type.dtype,
                                                   values[static_cast<size_t>(v)].type.shape);
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      if (part_of_op[i] != p) continue;
      std::vector<ValueId> operands;
      for (ValueId v : ops[i].operands) {
        ValueId& m = map[static_cast<size_t>(v)];
        const Value& value = values[static_cast<size_t>(v)];
        if (m < 0 && value.kind == ValueKind::kWeight) m = s->add_weight(value.name);
        if (m < 0 && value.kind == ValueKind::kConstant) m = s->add_constant(value.name, value.constant);
        if (m < 0) throw_failure("graph {}: op {} of part {} reads {}, which no part provides", g.name(), i, p, value.name);
        operands.push_back(m);
      }
      map[static_cast<size_t>(ops[i].result)] =
          s->add_op(ops[i].kind, std::move(operands), values[static_cast<size_t>(ops[i].result)].name, ops[i].attrs);
    }
    // Outputs: the graph outputs this part computes, in the graph's order, then what it passes on.
    for (const GraphOutput& o : g.outputs())
      if (part_of_value(o.value) == p) s->add_output(o.name, map[static_cast<size_t>(o.value)]);
    for (ValueId v : passed)
      if (part_of_value(v) == p && !output_name.count(v)) s->add_output(passed_name(v), map[static_cast<size_t>(v)]);
    shards.push_back({std::move(s)});
  }
  return shards;
}

}  // namespace genai::graph
