// Upstream's DefaultCompilerAdapter, natively: one graph (GraphBundle) -> one delegated method.
// It checks the requested target against the compile specs, asks the backend whether it supports
// the graph, lowers it, and wraps the payload as an ExecuTorch method whose inputs and outputs are
// caller-supplied tensors (the runner owns the I/O buffers, as upstream's
// MemoryPlanningPass(alloc_graph_input=False, alloc_graph_output=False)).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compile/backend.h"
#include "pipeline/graph_bundle.h"
#include "pte/program.h"

namespace genai::compile {

struct CompiledMethod {
  // inputs/outputs = the lowered I/O (ScalarType from MethodIo dtype), one chain with one
  // DelegateCall, non_const_buffer_sizes {0, planned_bytes} (the strategy widens it to the
  // group's scratch).
  pte::Method method;
  std::vector<pte::NamedData> named_data;  // the payload's weights, by content-addressed key
  std::string delegate_id;
  uint64_t planned_bytes = 0;
  uint64_t lower_bound_bytes = 0;
};

// The QNN target the specs carry (target::options_from_specs) against the one asked for: SoC,
// backend type and, for HTP, the precision (fp16 vs quantized) against `use_fp16`. A disagreement
// is an InputError naming both sides; specs without a "qnn_compile_spec" entry are not checked.
void check_target_matches_specs(const LoweringTarget& target);

class CompilerAdapter {
 public:
  explicit CompilerAdapter(const Backend& backend) : backend_(backend) {}

  // InputError: target/spec disagreement, a backend of another type than the target's, or the
  // backend's check_support sentence (naming the op, dtype or option and the SoC). Failure when
  // the lowered method contradicts the bundle (I/O names or quantized dtypes).
  CompiledMethod compile_method(std::string_view method_name, const pipeline::GraphBundle& bundle,
                                const LoweringTarget& target) const;
  // The same for the graphs of one program, lowered together (Backend::lower_group); the result
  // is in the order given.
  std::vector<CompiledMethod> compile_group(std::span<const GraphToLower> graphs, const LoweringTarget& target) const;
  // The same with each graph cut into `parts` layer shards (compile/layer_sharding.h): shard k of
  // every graph is lowered together (a backend shares their weights, a QNN lowering makes them one
  // context), and each method calls its shards' delegates in order.
  std::vector<CompiledMethod> compile_sharded_group(std::span<const GraphToLower> graphs, int64_t parts,
                                                    const LoweringTarget& target) const;

 private:
  void check_before_lowering(std::string_view method_name, const pipeline::GraphBundle& bundle,
                             const LoweringTarget& target) const;
  CompiledMethod wrap(std::string_view method_name, const pipeline::GraphBundle& bundle, const LoweringTarget& target,
                      LoweredMethod lowered) const;

  const Backend& backend_;
};

}  // namespace genai::compile
