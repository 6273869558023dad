#include "compile/layer_sharding.h"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "core/error.h"
#include "graph/layer_shards.h"
#include "pte/scalar_type.h"
#include "quant/encoding_set.h"
#include "quant/quantize.h"

namespace genai::compile {
namespace {

constexpr uint64_t kAlign = 64;
uint64_t aligned(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

}  // namespace

std::vector<pipeline::GraphBundle> shard_bundle(const pipeline::GraphBundle& bundle, int64_t parts) {
  std::vector<pipeline::GraphBundle> out;
  for (graph::LayerShard& s : graph::split_by_layers(*bundle.graph(), parts)) {
    std::vector<pipeline::InputSpec> inputs;
    for (graph::ValueId id : s.graph->inputs())
      inputs.push_back({s.graph->value(id).name, s.graph->value(id).type.dtype, s.graph->value(id).type.shape});
    std::optional<pipeline::QuantIoDtypes> io;
    if (bundle.quantized()) io = quant::quant_io_dtypes(*s.graph, *bundle.encodings());
    out.emplace_back(std::move(s.graph), std::move(inputs), bundle.metadata(), std::move(io), bundle.modality_inputs(),
                     bundle.program_options(), bundle.encodings());
  }
  return out;
}

CompiledMethod join_shards(std::string_view method_name, const pipeline::GraphBundle& whole,
                           const std::vector<pipeline::GraphBundle>& bundles, std::vector<CompiledMethod> shards) {
  if (shards.empty() || shards.size() != bundles.size())
    throw_failure("compile {}: {} shards for {} shard graphs", method_name, shards.size(), bundles.size());
  CompiledMethod out;
  pte::Method& m = out.method;
  m.name = std::string(method_name);
  for (const CompiledMethod& s : shards) {
    out.planned_bytes = std::max(out.planned_bytes, s.planned_bytes);
    out.lower_bound_bytes = std::max(out.lower_bound_bytes, s.lower_bound_bytes);
  }
  out.delegate_id = shards.front().delegate_id;
  // Each shard's tensors by name: its inputs are its bundle's example inputs, its outputs its
  // graph's outputs, in order (the adapter checked the lowered I/O against them).
  struct Io {
    std::vector<std::string> in, out;
  };
  std::vector<Io> names(shards.size());
  for (size_t k = 0; k < shards.size(); ++k) {
    for (const auto& spec : bundles[k].example_inputs()) names[k].in.push_back(spec.name);
    for (const auto& o : bundles[k].graph()->outputs()) names[k].out.push_back(o.name);
  }
  auto tensor = [&](size_t k, bool input, size_t i) {
    const pte::Method& sm = shards[k].method;
    const int32_t v = input ? sm.inputs.at(i) : sm.outputs.at(i);
    return std::get<pte::TensorValue>(sm.values.at(static_cast<size_t>(v)));
  };
  std::map<std::string, int32_t> value_of;
  auto add = [&](const std::string& name, pte::TensorValue t) {
    const auto index = static_cast<int32_t>(m.values.size());
    m.values.emplace_back(std::move(t));
    value_of[name] = index;
    return index;
  };
  // The method's inputs and outputs are the whole graph's, each taken from the first shard that
  // reads (computes) it.
  auto first_shard_tensor = [&](bool input, const std::string& name) -> std::optional<pte::TensorValue> {
    for (size_t k = 0; k < shards.size(); ++k) {
      const auto& side = input ? names[k].in : names[k].out;
      for (size_t i = 0; i < side.size(); ++i)
        if (side[i] == name) return tensor(k, input, i);
    }
    return std::nullopt;
  };
  for (const auto& spec : whole.example_inputs()) {
    std::optional<pte::TensorValue> t = first_shard_tensor(true, spec.name);
    if (!t) {  // read by no op: the method still takes it, as the unsharded one does
      DType dtype = spec.dtype;
      if (const auto& io = whole.quant_io_dtypes(); io && io->inputs.count(spec.name)) dtype = io->inputs.at(spec.name);
      t = pte::make_tensor(pte::scalar_type_from_dtype(dtype), std::vector<int32_t>(spec.shape.begin(), spec.shape.end()));
    }
    m.inputs.push_back(add(spec.name, std::move(*t)));
  }
  for (const auto& o : whole.graph()->outputs()) {
    std::optional<pte::TensorValue> t = first_shard_tensor(false, o.name);
    if (!t) throw_failure("compile {}: no shard computes output {}", method_name, o.name);
    m.outputs.push_back(add(o.name, std::move(*t)));
  }
  // What one shard passes to a later one lives in the method's buffer, after every shard's arena.
  uint64_t offset = aligned(out.planned_bytes), passed_bytes = 0;
  for (size_t k = 0; k < shards.size(); ++k)
    for (size_t i = 0; i < names[k].out.size(); ++i) {
      if (value_of.count(names[k].out[i])) continue;
      pte::TensorValue t = tensor(k, false, i);
      const auto bytes = pte::tensor_nbytes(t);
      if (!bytes) throw_failure("compile {}: tensor {} has no size", method_name, names[k].out[i]);
      t.allocation = pte::Allocation{1, offset};
      add(names[k].out[i], std::move(t));
      offset += aligned(*bytes);
      passed_bytes += aligned(*bytes);
    }
  out.planned_bytes = offset;
  out.lower_bound_bytes += passed_bytes;

  pte::Chain chain;
  chain.inputs = m.inputs;
  chain.outputs = m.outputs;
  for (size_t k = 0; k < shards.size(); ++k) {
    pte::DelegateCall call;
    call.delegate_index = static_cast<int32_t>(k);
    for (const auto* side : {&names[k].in, &names[k].out})
      for (const std::string& n : *side) {
        auto it = value_of.find(n);
        if (it == value_of.end()) throw_failure("compile {}: shard {} reads {}, which no shard computes", method_name, k, n);
        call.args.push_back(it->second);
      }
    chain.instructions.emplace_back(std::move(call));
    m.delegates.push_back(std::move(shards[k].method.delegates.at(0)));
    for (pte::NamedData& d : shards[k].named_data) out.named_data.push_back(std::move(d));
  }
  m.chains.push_back(std::move(chain));
  m.non_const_buffer_sizes = {0, static_cast<int64_t>(out.planned_bytes)};
  return out;
}

}  // namespace genai::compile
