// A real, small compile::Backend for the strategy tests: its payload is the graph's op list as
// text, its named data the float weights the graph reads (content-addressed keys, so graphs that
// share weights share entries), and its plan comes from compile::plan_memory over the op results'
// lifetimes. Graph inputs and outputs are caller-owned and not planned.
#pragma once

#include <set>
#include <string>

#include <fmt/format.h>

#include "compile/backend.h"
#include "compile/memory_planner.h"
#include "core/sha256.h"
#include "graph/graph.h"

namespace genai::compile::testing {

class ListingBackend : public Backend {
 public:
  explicit ListingBackend(std::set<graph::OpKind> unsupported = {}, std::string name = "listing",
                          target::BackendType type = target::BackendType::kHtpBackend)
      : unsupported_(std::move(unsupported)), name_(std::move(name)), type_(type) {}

  std::string_view name() const override { return name_; }
  std::string_view delegate_id() const override { return "GenaiListingBackend"; }
  target::BackendType backend_type() const override { return type_; }

  std::optional<std::string> check_support(const pipeline::GraphBundle& bundle,
                                           const LoweringTarget& target) const override {
    for (const graph::Op& op : bundle.graph()->ops()) {
      if (unsupported_.count(op.kind)) {
        return fmt::format("op {} (result {}) is not supported by the {} backend on {}", graph::op_kind_name(op.kind),
                           bundle.graph()->value(op.result).name, name_, target.soc->name);
      }
    }
    return std::nullopt;
  }

  LoweredMethod lower(std::string_view method_name, const pipeline::GraphBundle& bundle,
                      const LoweringTarget&) const override {
    const graph::Graph& g = *bundle.graph();
    LoweredMethod out;
    out.delegate_id = std::string(delegate_id());
    std::string text = fmt::format("method {}\n", method_name);
    std::set<graph::ValueId> weights_done;
    for (const graph::Op& op : g.ops()) {
      std::string operands;
      for (graph::ValueId v : op.operands) {
        operands += (operands.empty() ? "" : " ") + g.value(v).name;
        const graph::Value& val = g.value(v);
        if (val.kind == graph::ValueKind::kWeight && weights_done.insert(v).second) {
          const Tensor& t = g.weights()->get(val.name);
          const std::string key = fmt::format("{}.f32.{}", val.name, sha256_hex(t.bytes()).substr(0, 16));
          out.named_data.push_back(pte::NamedData{key, pte::Blob(std::vector<uint8_t>(t.bytes().begin(), t.bytes().end()))});
        }
      }
      text += fmt::format("{} {} -> {}\n", graph::op_kind_name(op.kind), operands, g.value(op.result).name);
    }
    out.payload = pte::Blob(std::vector<uint8_t>(text.begin(), text.end()));

    auto io_dtype = [&](const std::string& name, DType graph_dtype, bool input) {
      if (const auto& io = bundle.quant_io_dtypes()) {
        const auto& side = input ? io->inputs : io->outputs;
        if (auto it = side.find(name); it != side.end()) return it->second;
      }
      return graph_dtype;
    };
    for (graph::ValueId id : g.inputs()) {
      const graph::Value& v = g.value(id);
      out.inputs.push_back({v.name, io_dtype(v.name, v.type.dtype, true), v.type.shape});
    }
    std::set<graph::ValueId> outputs;
    for (const graph::GraphOutput& o : g.outputs()) {
      const graph::Value& v = g.value(o.value);
      out.outputs.push_back({o.name, io_dtype(o.name, v.type.dtype, false), v.type.shape});
      outputs.insert(o.value);
    }

    // Lifetimes of op results (caller-owned graph outputs excluded).
    std::vector<int64_t> last_use(g.values().size(), -1);
    for (size_t i = 0; i < g.ops().size(); ++i) {
      for (graph::ValueId v : g.ops()[i].operands) last_use[static_cast<size_t>(v)] = static_cast<int64_t>(i);
    }
    std::vector<BufferRequest> requests;
    for (size_t i = 0; i < g.ops().size(); ++i) {
      const graph::ValueId r = g.ops()[i].result;
      if (outputs.count(r)) continue;
      const graph::Value& v = g.value(r);
      const uint64_t bytes = static_cast<uint64_t>(shape_numel(v.type.shape)) * dtype_size(v.type.dtype);
      requests.push_back({bytes, static_cast<int64_t>(i), std::max<int64_t>(last_use[static_cast<size_t>(r)], static_cast<int64_t>(i))});
    }
    const MemoryPlan plan = plan_memory(requests);
    out.planned_bytes = plan.total_bytes;
    out.lower_bound_bytes = plan.lower_bound_bytes;
    return out;
  }

 private:
  std::set<graph::OpKind> unsupported_;
  std::string name_;
  target::BackendType type_;
};

}  // namespace genai::compile::testing
