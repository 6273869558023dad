#include "graph/passes.h"

namespace genai::graph {

bool eliminate_dead_code(Graph& g) {
  const auto& ops = g.ops();
  std::vector<bool> live_value(g.values().size(), false);
  for (const auto& o : g.outputs()) live_value[o.value] = true;
  std::vector<bool> keep(ops.size(), false);
  for (size_t i = ops.size(); i-- > 0;) {
    if (!live_value[ops[i].result]) continue;
    keep[i] = true;
    for (ValueId v : ops[i].operands) live_value[v] = true;
  }
  bool changed = false;
  for (bool k : keep) changed |= !k;
  // Unused weights/constants count as dead code too.
  for (size_t i = 0; i < g.values().size(); ++i) {
    const ValueKind kind = g.values()[i].kind;
    if ((kind == ValueKind::kWeight || kind == ValueKind::kConstant) && !live_value[i]) changed = true;
  }
  if (changed) g.compact(keep);
  return changed;
}

bool canonicalize(Graph& g) {
  bool changed = false;
  auto& ops = g.mutable_ops();
  const auto producer_op = [&](ValueId v) -> Op* {
    const Value& val = g.value(v);
    return val.kind == ValueKind::kOpResult ? &ops[val.producer] : nullptr;
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    Op& op = ops[i];
    if (op.kind == OpKind::kReshape) {
      // Fold a chain: read the innermost operand; the intermediate reshapes become dead.
      while (Op* inner = producer_op(op.operands[0])) {
        if (inner->kind != OpKind::kReshape) break;
        op.operands[0] = inner->operands[0];
        changed = true;
      }
      if (g.value(op.operands[0]).type == g.value(op.result).type) {
        g.replace_all_uses(op.result, op.operands[0]);
        changed = true;
      }
    } else if (op.kind == OpKind::kTranspose) {
      while (Op* inner = producer_op(op.operands[0])) {
        if (inner->kind != OpKind::kTranspose) break;
        // out[i] = mid[p_outer[i]] = in[p_inner[p_outer[i]]]
        const auto& outer = attr_ints(op.attrs, "perm");
        const auto& in_perm = attr_ints(inner->attrs, "perm");
        std::vector<int64_t> composed(outer.size());
        for (size_t d = 0; d < outer.size(); ++d) composed[d] = in_perm[outer[d]];
        op.attrs["perm"] = composed;
        op.operands[0] = inner->operands[0];
        changed = true;
      }
      const auto& perm = attr_ints(op.attrs, "perm");
      bool identity = true;
      for (size_t d = 0; d < perm.size(); ++d) identity &= perm[d] == static_cast<int64_t>(d);
      if (identity && g.value(op.operands[0]).type == g.value(op.result).type) {
        g.replace_all_uses(op.result, op.operands[0]);
        changed = true;
      }
    }
  }
  return changed;
}

Pass dead_code_elimination_pass() { return {"dead-code-elimination", eliminate_dead_code}; }
Pass canonicalize_pass() { return {"canonicalize", canonicalize}; }

PassManager default_pipeline() {
  PassManager pm;
  pm.add(canonicalize_pass());
  pm.add(dead_code_elimination_pass());
  return pm;
}

}  // namespace genai::graph
