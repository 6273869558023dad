#include "graph/verifier.h"

#include <set>

#include <fmt/format.h>

#include "core/error.h"

namespace genai::graph {

std::string verify_graph(const Graph& g) {
  const auto& values = g.values();
  const auto& ops = g.ops();
  auto valid = [&](ValueId id) { return id >= 0 && static_cast<size_t>(id) < values.size(); };

  std::set<std::string> names;
  for (size_t i = 0; i < values.size(); ++i) {
    const Value& v = values[i];
    if (v.name.empty()) return fmt::format("value #{} has no name", i);
    if (!names.insert(v.name).second) return fmt::format("value name '{}' is defined twice", v.name);
    switch (v.kind) {
      case ValueKind::kWeight: {
        if (!g.weights() || !g.weights()->contains(v.name))
          return fmt::format("weight '{}' is not in the shared weights", v.name);
        const Tensor& t = g.weights()->get(v.name);  // as stored: float32 values of a 16-bit type are float32 here
        const bool float_type = t.dtype() == DType::kF32 || t.dtype() == DType::kF16 || t.dtype() == DType::kBF16;
        if (!float_type || v.type.dtype != DType::kF32 || t.shape() != v.type.shape)
          return fmt::format("weight '{}' is {}{} but the graph records {}", v.name, dtype_name(t.dtype()),
                             shape_to_string(t.shape()), type_to_string(v.type));
        break;
      }
      case ValueKind::kConstant:
        if (!v.constant || v.constant->dtype() != v.type.dtype || v.constant->shape() != v.type.shape)
          return fmt::format("constant '{}' has no tensor of type {}", v.name, type_to_string(v.type));
        break;
      case ValueKind::kOpResult:
        if (v.producer < 0 || static_cast<size_t>(v.producer) >= ops.size() ||
            ops[v.producer].result != static_cast<ValueId>(i))
          return fmt::format("value '{}' names a producer op that does not define it", v.name);
        break;
      case ValueKind::kInput:
        break;
    }
  }
  std::set<ValueId> input_set;
  for (ValueId id : g.inputs()) {
    if (!valid(id) || values[id].kind != ValueKind::kInput) return "a graph input is not bound to an input value";
    input_set.insert(id);
  }
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].kind == ValueKind::kInput && !input_set.count(static_cast<ValueId>(i)))
      return fmt::format("input value '{}' is not a graph input", values[i].name);

  std::vector<bool> defined(values.size(), false);
  for (size_t i = 0; i < values.size(); ++i) defined[i] = values[i].kind != ValueKind::kOpResult;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    const std::string where =
        fmt::format("op #{} '{}' ({})", i, valid(op.result) ? values[op.result].name : std::string("?"), op_kind_name(op.kind));
    if (!valid(op.result) || values[op.result].producer != static_cast<int32_t>(i))
      return where + ": result is not a value it produces";
    std::vector<TensorType> types;
    for (ValueId v : op.operands) {
      if (!valid(v)) return where + ": operand is not a value";
      if (!defined[v]) return fmt::format("{}: operand '{}' is used before it is defined", where, values[v].name);
      types.push_back(values[v].type);
    }
    std::string why;
    auto t = infer_op_type(op.kind, types, op.attrs, &why);
    if (!t) return fmt::format("{}: {}", where, why);
    if (!(*t == values[op.result].type))
      return fmt::format("{}: result recorded as {} but the op produces {}", where, type_to_string(values[op.result].type),
                         type_to_string(*t));
    defined[op.result] = true;
  }
  std::set<std::string> out_names;
  for (const auto& o : g.outputs()) {
    if (!valid(o.value)) return fmt::format("output '{}' is not bound to a value", o.name);
    if (!out_names.insert(o.name).second) return fmt::format("output '{}' is defined twice", o.name);
  }
  return {};
}

void verify_graph_or_throw(const Graph& g, const std::string& context) {
  const std::string problem = verify_graph(g);
  if (!problem.empty()) throw_failure("graph {}: {}: {}", g.name(), context, problem);
}

}  // namespace genai::graph
