#include "graph/graph.h"

#include <fmt/format.h>

#include "core/error.h"

namespace genai::graph {

Graph::Graph(std::string name, std::shared_ptr<const Weights> weights)
    : name_(std::move(name)), weights_(std::move(weights)) {}

ValueId Graph::push_value(Value v) {
  values_.push_back(std::move(v));
  return static_cast<ValueId>(values_.size() - 1);
}

ValueId Graph::add_input(std::string name, DType dtype, Shape shape) {
  if (find_value(name) >= 0) throw_failure("internal: graph {}: value name '{}' defined twice", name_, name);
  Value v;
  v.name = std::move(name);
  v.type = {dtype, std::move(shape)};
  v.kind = ValueKind::kInput;
  const ValueId id = push_value(std::move(v));
  inputs_.push_back(id);
  return id;
}

ValueId Graph::add_weight(const std::string& canonical_name) {
  for (size_t i = 0; i < values_.size(); ++i)
    if (values_[i].kind == ValueKind::kWeight && values_[i].name == canonical_name) return static_cast<ValueId>(i);
  if (!weights_) throw_failure("internal: graph {} has no weights for '{}'", name_, canonical_name);
  const Tensor& t = weights_->get(canonical_name);
  // Stored 16-bit weights are float32 values to the graph: its executors read Weights::f32.
  if (t.dtype() != DType::kF32 && t.dtype() != DType::kF16 && t.dtype() != DType::kBF16)
    throw_input_error("{}: weight {} is {}, the graph builder needs float32, float16 or bfloat16", weights_->source(),
                      canonical_name, dtype_name(t.dtype()));
  Value v;
  v.name = canonical_name;
  v.type = {DType::kF32, t.shape()};
  v.kind = ValueKind::kWeight;
  return push_value(std::move(v));
}

ValueId Graph::add_constant(std::string name, std::shared_ptr<const Tensor> tensor) {
  if (find_value(name) >= 0) throw_failure("internal: graph {}: value name '{}' defined twice", name_, name);
  Value v;
  v.name = std::move(name);
  v.type = {tensor->dtype(), tensor->shape()};
  v.kind = ValueKind::kConstant;
  v.constant = std::move(tensor);
  return push_value(std::move(v));
}

ValueId Graph::add_op(OpKind kind, std::vector<ValueId> operands, std::string result_name, Attrs attrs) {
  std::vector<TensorType> types;
  for (ValueId id : operands) {
    if (id < 0 || static_cast<size_t>(id) >= values_.size())
      throw_failure("internal: graph {}: op '{}' reads an undefined value", name_, result_name);
    types.push_back(values_[id].type);
  }
  std::string why;
  auto type = infer_op_type(kind, types, attrs, &why);
  if (!type) throw_failure("internal: graph {}: op '{}' ({}): {}", name_, result_name, op_kind_name(kind), why);
  if (find_value(result_name) >= 0)
    throw_failure("internal: graph {}: value name '{}' defined twice", name_, result_name);
  Op op;
  op.kind = kind;
  op.operands = std::move(operands);
  op.attrs = std::move(attrs);
  Value v;
  v.name = std::move(result_name);
  v.type = *type;
  v.kind = ValueKind::kOpResult;
  v.producer = static_cast<int32_t>(ops_.size());
  op.result = push_value(std::move(v));
  ops_.push_back(std::move(op));
  return ops_.back().result;
}

void Graph::add_output(std::string name, ValueId value) {
  if (find_output(name)) throw_failure("internal: graph {}: output '{}' defined twice", name_, name);
  outputs_.push_back({std::move(name), value});
}

ValueId Graph::find_value(const std::string& name) const {
  for (size_t i = 0; i < values_.size(); ++i)
    if (values_[i].name == name) return static_cast<ValueId>(i);
  return -1;
}

const Value* Graph::find_input(const std::string& name) const {
  for (ValueId id : inputs_)
    if (values_[id].name == name) return &values_[id];
  return nullptr;
}

const GraphOutput* Graph::find_output(const std::string& name) const {
  for (const auto& o : outputs_)
    if (o.name == name) return &o;
  return nullptr;
}

void Graph::replace_all_uses(ValueId from, ValueId to) {
  for (Op& op : ops_)
    for (ValueId& v : op.operands)
      if (v == from) v = to;
  for (GraphOutput& o : outputs_)
    if (o.value == from) o.value = to;
}

void Graph::compact(const std::vector<bool>& keep_op) {
  std::vector<bool> used(values_.size(), false);
  for (ValueId id : inputs_) used[id] = true;
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (!keep_op.at(i)) continue;
    used[ops_[i].result] = true;
    for (ValueId v : ops_[i].operands) used[v] = true;
  }
  for (const auto& o : outputs_) used[o.value] = true;

  std::vector<ValueId> remap(values_.size(), -1);
  std::vector<Value> values;
  for (size_t i = 0; i < values_.size(); ++i) {
    if (!used[i]) continue;
    remap[i] = static_cast<ValueId>(values.size());
    values.push_back(std::move(values_[i]));
  }
  std::vector<Op> ops;
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (!keep_op[i]) continue;
    Op op = std::move(ops_[i]);
    for (ValueId& v : op.operands) v = remap[v];
    op.result = remap[op.result];
    values[op.result].producer = static_cast<int32_t>(ops.size());
    ops.push_back(std::move(op));
  }
  for (ValueId& id : inputs_) id = remap[id];
  for (auto& o : outputs_) o.value = remap[o.value];
  values_ = std::move(values);
  ops_ = std::move(ops);
}

}  // namespace genai::graph
