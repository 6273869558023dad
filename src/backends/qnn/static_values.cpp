#include "backends/qnn/static_values.h"

#include <algorithm>
#include <memory>
#include <string>

#include "core/error.h"
#include "quant/encoding_set.h"
#include "quant/qdq_executor.h"

namespace genai::backends::qnn {

using graph::Graph;
using graph::ValueId;
using graph::ValueKind;

StaticValues fold_static_values(const pipeline::GraphBundle& bundle) {
  const Graph& g = *bundle.graph();
  StaticValues out;
  out.static_op.assign(g.ops().size(), false);
  std::vector<bool> fixed(g.values().size(), false);  // input-independent values
  for (size_t v = 0; v < g.values().size(); ++v) {
    const ValueKind k = g.values()[v].kind;
    fixed[v] = k == ValueKind::kWeight || k == ValueKind::kConstant;
  }
  bool any = false;
  for (size_t i = 0; i < g.ops().size(); ++i) {
    const graph::Op& op = g.ops()[i];
    if (g.value(op.result).type.dtype != DType::kF32) continue;
    bool all = true;
    for (ValueId v : op.operands) all = all && fixed[static_cast<size_t>(v)];
    out.static_op[i] = fixed[static_cast<size_t>(op.result)] = all;
    any = any || all;
  }
  if (!any) return out;
  // The QNN EP takes no initializer as a MatMul's first operand (the learned queries meet the
  // audio's keys in the cross-attention): the data movement before such a MatMul (reshape,
  // transpose) stays as ops, on the initializer of the result they move.
  for (const graph::Op& op : g.ops()) {
    if (op.kind != graph::OpKind::kMatMul || out.static_op[static_cast<size_t>(g.value(op.result).producer)]) continue;
    for (ValueId v = op.operands[0]; g.value(v).kind == ValueKind::kOpResult;) {
      const graph::Op& p = g.ops()[static_cast<size_t>(g.value(v).producer)];
      if (!out.static_op[static_cast<size_t>(g.value(v).producer)] || !quant::is_passthrough(p.kind)) break;
      out.static_op[static_cast<size_t>(g.value(v).producer)] = false;
      v = p.operands[0];
    }
  }
  // The frontier: static results read by an input-dependent op or given as a graph output.
  std::vector<ValueId> frontier;
  auto reads = [&](ValueId v) {
    const auto& val = g.value(v);
    if (val.kind == ValueKind::kOpResult && out.static_op[static_cast<size_t>(val.producer)] &&
        std::find(frontier.begin(), frontier.end(), v) == frontier.end())
      frontier.push_back(v);
  };
  for (size_t i = 0; i < g.ops().size(); ++i)
    if (!out.static_op[i])
      for (ValueId v : g.ops()[i].operands) reads(v);
  for (const auto& o : g.outputs()) reads(o.value);
  if (frontier.empty()) return out;

  // Every input-independent op, as a graph of the same name (the encodings are looked up by value
  // name), run once through the QDQ reference.
  auto sub = std::make_shared<Graph>(g.name(), g.weights());
  std::vector<ValueId> map(g.values().size(), -1);
  auto mapped = [&](ValueId v) {
    ValueId& m = map[static_cast<size_t>(v)];
    if (m >= 0) return m;
    const auto& val = g.value(v);
    if (val.kind == ValueKind::kWeight) m = sub->add_weight(val.name);
    else if (val.kind == ValueKind::kConstant) m = sub->add_constant(val.name, val.constant);
    else throw_failure("qnn export: graph {}: static value {} read before it is computed", g.name(), val.name);
    return m;
  };
  for (size_t i = 0; i < g.ops().size(); ++i) {
    const graph::Op& op = g.ops()[i];
    if (!fixed[static_cast<size_t>(op.result)]) continue;  // also the ones kept as ops above
    std::vector<ValueId> operands;
    for (ValueId v : op.operands) operands.push_back(mapped(v));
    map[static_cast<size_t>(op.result)] = sub->add_op(op.kind, operands, g.value(op.result).name, op.attrs);
  }
  for (ValueId v : frontier) sub->add_output(g.value(v).name, map[static_cast<size_t>(v)]);
  quant::QdqExecutor qdq({{g.name(), sub}}, {{g.name(), bundle.encodings()}});
  graph::TensorMap results = qdq.run(g.name(), {});
  for (ValueId v : frontier) {
    auto it = results.find(g.value(v).name);
    if (it == results.end()) throw_failure("qnn export: graph {}: static value {} was not computed", g.name(), g.value(v).name);
    out.frontier.emplace(v, std::move(it->second));
  }
  return out;
}

}  // namespace genai::backends::qnn
