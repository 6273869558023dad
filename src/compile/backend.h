// The compile-side face of a backend: what it supports on a target, and lowering one graph
// (GraphBundle) to a delegate payload. The runtime-side face (executing that payload) is
// runtime/backend_executor.h; a backend folder (src/backends/<name>) implements both and
// registers them with backends::register_builtin_backends().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"
#include "pipeline/graph_bundle.h"
#include "pte/blob.h"
#include "pte/compile_spec.h"
#include "pte/program.h"
#include "target/backend_type.h"
#include "target/soc.h"

namespace genai::compile {

// Which KV caches a quantized program reads in place (the attention matmul over concat(cache,
// new) becomes one op that reads both parts, backends/lower/kv_fusion.h) instead of copying them
// into a concatenation.
enum class KvFusion : uint8_t {
  kNone,      // every concat copied (tests compare the two lowerings)
  kEightBit,  // 8-bit caches read in place (the default)
  kAll,       // every cache read in place (--backend_fuse_kv)
};

// What a graph is lowered for.
struct LoweringTarget {
  const target::SocInfo* soc = nullptr;  // never null when passed to a backend
  target::BackendType backend_type = target::BackendType::kHtpBackend;
  std::vector<CompileSpec> compile_specs;  // recorded in the delegate
  bool use_fp16 = false;                        // htp: fp16 program instead of the quantized one
  bool shared_buffer = false;  // graph inputs/outputs are caller buffers, not planned
  KvFusion kv_fusion = KvFusion::kEightBit;
};

// One input or output of a lowered method, in graph order.
struct MethodIo {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
};

struct LoweredMethod {
  // The backend's own id; "QnnBackend" only for a payload that is a real QNN context binary
  // behind the custom-protocol header (backends/qnn).
  std::string delegate_id;
  pte::Blob payload;        // processed bytes: the backend's versioned payload format
  // Weights and tables the payload refers to by key; a key names its content, so methods of one
  // group that share weights produce equal entries and the program stores them once.
  std::vector<pte::NamedData> named_data;
  std::vector<MethodIo> inputs, outputs;
  uint64_t planned_bytes = 0;      // scratch/activation arena from the memory plan
  uint64_t lower_bound_bytes = 0;  // largest total size of tensors alive at once
};

struct GraphToLower {
  std::string method_name;
  const pipeline::GraphBundle* bundle = nullptr;
  // Which layer shard of its method this graph is (--num_sharding, compile/layer_sharding.h); -1:
  // the whole method.
  int64_t shard = -1;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // "htp", "gpu" (the --backend spelling); "qnn" for --lowering qnn (backend type htp)
  virtual std::string_view name() const = 0;
  virtual std::string_view delegate_id() const = 0;  // written into the .pte
  virtual target::BackendType backend_type() const = 0;
  // nullopt when `bundle` can be lowered for `target`; otherwise one sentence naming the
  // offending op, dtype or option and the SoC.
  virtual std::optional<std::string> check_support(const pipeline::GraphBundle& bundle,
                                                   const LoweringTarget& target) const = 0;
  // Lowers one graph; `method_name` is the graph name. Failure on internal errors; callers run
  // check_support first.
  virtual LoweredMethod lower(std::string_view method_name, const pipeline::GraphBundle& bundle,
                              const LoweringTarget& target) const = 0;
  // Lowers the graphs of one program together, in the order given (a backend whose methods share
  // one payload, e.g. one QNN context holding every graph, needs them all at once). The default
  // lowers each graph by itself.
  virtual std::vector<LoweredMethod> lower_group(std::span<const GraphToLower> graphs,
                                                 const LoweringTarget& target) const {
    std::vector<LoweredMethod> out;
    for (const GraphToLower& g : graphs) out.push_back(lower(g.method_name, *g.bundle, target));
    return out;
  }
};

// Registry (idempotent registration by name). find_backend returns null when absent.
void register_backend(std::unique_ptr<Backend> backend);
const Backend* find_backend(std::string_view name);
const Backend* find_backend(target::BackendType type);
std::vector<std::string> backend_names();

}  // namespace genai::compile
