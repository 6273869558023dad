#include "compile/compiler_adapter.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>

#include "compile/layer_sharding.h"
#include "core/error.h"
#include "graph/graph.h"
#include "pte/scalar_type.h"
#include "target/compile_spec.h"

namespace genai::compile {
namespace {

std::string chipset_name(target::Chipset chipset) {
  for (const auto& soc : target::soc_table()) {
    if (soc.chipset == chipset) return std::string(soc.name);
  }
  return std::string(qnn_delegate::EnumNameQcomChipset(chipset));
}

pte::TensorValue io_tensor(std::string_view method, const MethodIo& io) {
  std::vector<int32_t> sizes;
  for (int64_t d : io.shape) {
    if (d < 0 || d > std::numeric_limits<int32_t>::max()) {
      throw_failure("compile {}: tensor {} has a dimension {} a program cannot store", method, io.name, d);
    }
    sizes.push_back(static_cast<int32_t>(d));
  }
  return pte::make_tensor(pte::scalar_type_from_dtype(io.dtype), std::move(sizes));
}

// The lowered I/O must be the graph's: same names in the same order, and quantized boundary
// tensors keep the integer dtypes quantization chose, so the runner moves integers between calls.
void check_io(std::string_view method, const pipeline::GraphBundle& bundle, const LoweredMethod& lowered) {
  const auto& expected = bundle.example_inputs();
  if (lowered.inputs.size() != expected.size()) {
    throw_failure("compile {}: the backend lowered {} inputs, the graph has {}", method, lowered.inputs.size(),
                  expected.size());
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    if (lowered.inputs[i].name != expected[i].name || lowered.inputs[i].shape != expected[i].shape) {
      throw_failure("compile {}: lowered input {} is {} {}, the graph's is {} {}", method, i, lowered.inputs[i].name,
                    shape_to_string(lowered.inputs[i].shape), expected[i].name, shape_to_string(expected[i].shape));
    }
  }
  if (lowered.outputs.size() != bundle.graph()->outputs().size()) {
    throw_failure("compile {}: the backend lowered {} outputs, the graph has {}", method, lowered.outputs.size(),
                  bundle.graph()->outputs().size());
  }
  for (size_t i = 0; i < lowered.outputs.size(); ++i) {
    if (lowered.outputs[i].name != bundle.graph()->outputs()[i].name) {
      throw_failure("compile {}: lowered output {} is {}, the graph's is {}", method, i, lowered.outputs[i].name,
                    bundle.graph()->outputs()[i].name);
    }
  }
  if (const auto& io = bundle.quant_io_dtypes()) {
    auto check = [&](const std::vector<MethodIo>& side, const std::map<std::string, DType>& want, const char* what) {
      for (const MethodIo& m : side) {
        auto it = want.find(m.name);
        if (it != want.end() && it->second != m.dtype) {
          throw_failure("compile {}: {} {} lowered as {}, quantization chose {}", method, what, m.name,
                        dtype_name(m.dtype), dtype_name(it->second));
        }
      }
    };
    check(lowered.inputs, io->inputs, "input");
    check(lowered.outputs, io->outputs, "output");
  }
}

}  // namespace

void check_target_matches_specs(const LoweringTarget& target) {
  if (!target.soc) throw_failure("compile: lowering target without a SoC");
  const auto options = target::options_from_specs(target.compile_specs);
  if (!options) return;  // no QNN entry: nothing to compare with
  const std::string asked_soc(target.soc->name);
  const std::string asked_backend = target::backend_type_name(target.backend_type);
  if (options->soc_model != target.soc->chipset) {
    throw_input_error(
        "the compile specs target SoC {} but compilation was asked for --soc_model {} (backend {}); build the specs "
        "for the same SoC",
        chipset_name(options->soc_model), asked_soc, asked_backend);
  }
  if (options->backend_type != target.backend_type) {
    throw_input_error("the compile specs are for backend {} but compilation was asked for --backend {} on {}",
                      target::backend_type_name(options->backend_type), asked_backend, asked_soc);
  }
  if (target.backend_type == target::BackendType::kHtpBackend && options->htp_options) {
    const bool spec_fp16 = options->htp_options->precision == target::fb::QnnExecuTorchHtpPrecision::kHtpFp16;
    if (spec_fp16 != target.use_fp16) {
      throw_input_error("the compile specs ask for HTP precision {} but compilation was asked for {} (--use_fp16 {}) on {}",
                        spec_fp16 ? "fp16" : "quantized", target.use_fp16 ? "fp16" : "quantized",
                        target.use_fp16 ? "on" : "off", asked_soc);
    }
  }
}

void CompilerAdapter::check_before_lowering(std::string_view method_name, const pipeline::GraphBundle& bundle,
                                            const LoweringTarget& target) const {
  check_target_matches_specs(target);
  if (backend_.backend_type() != target.backend_type) {
    throw_input_error("backend {} lowers for {}, not for --backend {}", backend_.name(),
                      target::backend_type_name(backend_.backend_type()), target::backend_type_name(target.backend_type));
  }
  if (target.use_fp16 && bundle.quantized()) {
    throw_input_error("--use_fp16 compiles float graphs, but graph {} was quantized (skip quantization for fp16)",
                      method_name);
  }
  if (auto problem = backend_.check_support(bundle, target)) throw InputError(*problem);
}

CompiledMethod CompilerAdapter::compile_method(std::string_view method_name, const pipeline::GraphBundle& bundle,
                                               const LoweringTarget& target) const {
  check_before_lowering(method_name, bundle, target);
  return wrap(method_name, bundle, target, backend_.lower(method_name, bundle, target));
}

std::vector<CompiledMethod> CompilerAdapter::compile_group(std::span<const GraphToLower> graphs,
                                                           const LoweringTarget& target) const {
  for (const GraphToLower& g : graphs) check_before_lowering(g.method_name, *g.bundle, target);
  std::vector<LoweredMethod> lowered = backend_.lower_group(graphs, target);
  if (lowered.size() != graphs.size())
    throw_failure("compile: backend {} lowered {} methods for {} graphs", backend_.name(), lowered.size(), graphs.size());
  std::vector<CompiledMethod> out;
  for (size_t i = 0; i < graphs.size(); ++i)
    out.push_back(wrap(graphs[i].method_name, *graphs[i].bundle, target, std::move(lowered[i])));
  return out;
}

std::vector<CompiledMethod> CompilerAdapter::compile_sharded_group(std::span<const GraphToLower> graphs, int64_t parts,
                                                                   const LoweringTarget& target) const {
  std::vector<std::vector<pipeline::GraphBundle>> bundles;  // [graph][shard]
  for (const GraphToLower& g : graphs) bundles.push_back(shard_bundle(*g.bundle, parts));
  std::vector<std::vector<CompiledMethod>> shards(graphs.size());
  for (int64_t k = 0; k < parts; ++k) {
    std::vector<GraphToLower> part;
    for (size_t i = 0; i < graphs.size(); ++i)
      part.push_back({graphs[i].method_name, &bundles[i][static_cast<size_t>(k)], k});
    std::vector<CompiledMethod> compiled = compile_group(part, target);
    for (size_t i = 0; i < graphs.size(); ++i) shards[i].push_back(std::move(compiled[i]));
  }
  std::vector<CompiledMethod> out;
  for (size_t i = 0; i < graphs.size(); ++i)
    out.push_back(join_shards(graphs[i].method_name, *graphs[i].bundle, bundles[i], std::move(shards[i])));
  return out;
}

CompiledMethod CompilerAdapter::wrap(std::string_view method_name, const pipeline::GraphBundle& bundle,
                                     const LoweringTarget& target, LoweredMethod lowered) const {
  if (lowered.delegate_id.empty() || lowered.delegate_id != backend_.delegate_id()) {
    throw_failure("compile {}: backend {} produced delegate id '{}', expected '{}'", method_name, backend_.name(),
                  lowered.delegate_id, backend_.delegate_id());
  }
  // QnnContextCustomProtocol's magic (0x5678ABCD, little-endian) opens every real QNN payload.
  static constexpr uint8_t kQnnMagic[] = {0xcd, 0xab, 0x78, 0x56};
  const auto payload = lowered.payload.bytes();
  if (lowered.delegate_id == "QnnBackend" &&
      (payload.size() < sizeof kQnnMagic || !std::equal(std::begin(kQnnMagic), std::end(kQnnMagic), payload.begin()))) {
    throw_failure("compile {}: only a real QNN context binary may carry the delegate id QnnBackend", method_name);
  }
  if (lowered.planned_bytes < lowered.lower_bound_bytes) {
    throw_failure("compile {}: planned {} bytes, below the lower bound {}", method_name, lowered.planned_bytes,
                  lowered.lower_bound_bytes);
  }
  if (lowered.planned_bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    throw_failure("compile {}: planned size {} does not fit a program", method_name, lowered.planned_bytes);
  }
  check_io(method_name, bundle, lowered);

  CompiledMethod out;
  pte::Method& m = out.method;
  m.name = std::string(method_name);
  pte::DelegateCall call;
  call.delegate_index = 0;
  for (const MethodIo& io : lowered.inputs) {
    m.inputs.push_back(static_cast<int32_t>(m.values.size()));
    m.values.emplace_back(io_tensor(method_name, io));
  }
  for (const MethodIo& io : lowered.outputs) {
    m.outputs.push_back(static_cast<int32_t>(m.values.size()));
    m.values.emplace_back(io_tensor(method_name, io));
  }
  call.args = m.inputs;
  call.args.insert(call.args.end(), m.outputs.begin(), m.outputs.end());
  pte::Chain chain;
  chain.inputs = m.inputs;
  chain.outputs = m.outputs;
  chain.instructions.emplace_back(std::move(call));
  m.chains.push_back(std::move(chain));
  m.delegates.push_back(pte::Delegate{lowered.delegate_id, target.compile_specs, lowered.payload});
  m.non_const_buffer_sizes = {0, static_cast<int64_t>(lowered.planned_bytes)};

  // One entry per key; a key names its content, so a repeated key must repeat the bytes.
  std::map<std::string, const pte::NamedData*> seen;
  for (const pte::NamedData& d : lowered.named_data) {
    auto [it, inserted] = seen.emplace(d.key, &d);
    if (!inserted) {
      if (!(it->second->data == d.data)) {
        throw_failure("compile {}: named data key {} is used for two different blobs", method_name, d.key);
      }
      continue;
    }
    out.named_data.push_back(d);
  }
  out.delegate_id = lowered.delegate_id;
  out.planned_bytes = lowered.planned_bytes;
  out.lower_bound_bytes = lowered.lower_bound_bytes;
  return out;
}

}  // namespace genai::compile
