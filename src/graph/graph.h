// A static, typed SSA graph. Values are graph inputs, weights (referenced by their canonical
// name in the shared Weights), constants (tables the builder computed) or op results; every op
// has one result and only reads values defined before it. Value names are stable across the
// graphs of one model ("layers.3.attn.q_proj.out"), so quantization encodings can be matched by
// tensor name between the calibration, kv and prefill graphs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "graph/op.h"
#include "model/weights.h"

namespace genai::graph {

using ValueId = int32_t;

enum class ValueKind : uint8_t { kInput, kWeight, kConstant, kOpResult };

struct Value {
  std::string name;
  TensorType type;
  ValueKind kind = ValueKind::kOpResult;
  int32_t producer = -1;                    // op index for kOpResult
  std::shared_ptr<const Tensor> constant;   // for kConstant
};

struct Op {
  OpKind kind = OpKind::kAdd;
  std::vector<ValueId> operands;
  ValueId result = -1;
  Attrs attrs;
};

struct GraphOutput {
  std::string name;
  ValueId value = -1;
};

class Graph {
 public:
  // `weights` is shared by every graph built from one model; it may be null for graphs that
  // reference no weights (tests).
  Graph(std::string name, std::shared_ptr<const Weights> weights);

  const std::string& name() const { return name_; }
  const std::shared_ptr<const Weights>& weights() const { return weights_; }

  // Building. Each returns the new value's id. Types of op results are inferred; a mismatch
  // throws Failure naming the op and its operands.
  ValueId add_input(std::string name, DType dtype, Shape shape);
  // The weight `canonical_name` of the shared Weights (float32); the same name returns the same
  // value. A missing weight is an InputError naming it.
  ValueId add_weight(const std::string& canonical_name);
  ValueId add_constant(std::string name, std::shared_ptr<const Tensor> tensor);
  ValueId add_op(OpKind kind, std::vector<ValueId> operands, std::string result_name, Attrs attrs = {});
  void add_output(std::string name, ValueId value);

  const std::vector<Value>& values() const { return values_; }
  const std::vector<Op>& ops() const { return ops_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<GraphOutput>& outputs() const { return outputs_; }
  const Value& value(ValueId id) const { return values_.at(static_cast<size_t>(id)); }
  // -1 when no value has that name.
  ValueId find_value(const std::string& name) const;
  // The graph input / output named `name`, or nullptr.
  const Value* find_input(const std::string& name) const;
  const GraphOutput* find_output(const std::string& name) const;

  // Rewriting (passes). Direct access; run the verifier afterwards.
  std::vector<Op>& mutable_ops() { return ops_; }
  std::vector<Value>& mutable_values() { return values_; }
  std::vector<GraphOutput>& mutable_outputs() { return outputs_; }
  // Points every use of `from` (operands and graph outputs) at `to`.
  void replace_all_uses(ValueId from, ValueId to);
  // Keeps the ops with keep_op[i] true (in order), the graph inputs, and the weights/constants
  // still used; renumbers values and producers.
  void compact(const std::vector<bool>& keep_op);

 private:
  ValueId push_value(Value v);

  std::string name_;
  std::shared_ptr<const Weights> weights_;
  std::vector<Value> values_;
  std::vector<Op> ops_;
  std::vector<ValueId> inputs_;
  std::vector<GraphOutput> outputs_;
};

}  // namespace genai::graph
