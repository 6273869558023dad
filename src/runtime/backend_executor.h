// The runtime-side face of a backend: turns a delegate payload (pte::Delegate::processed) into a
// method that executes on caller-bound buffers. Backends register by delegate id; a program
// whose delegate nobody handles fails with a message naming the id.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"
#include "pte/blob.h"
#include "pte/compile_spec.h"

namespace genai::runtime {

// A caller-owned buffer bound to one method input or output.
struct BufferRef {
  void* data = nullptr;
  size_t bytes = 0;
};

struct IoDesc {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
};

// The method a delegate is initialised for, as the .pte declares it: what a backend needs when its
// payload does not describe the method itself (a program written by another toolchain).
struct MethodDesc {
  std::string name;  // "kv_forward"
  // The method's signature in order: dtype and shape of each tensor, its name when the .pte
  // records one (a tensor's fully qualified name), else empty.
  std::vector<IoDesc> inputs, outputs;
  std::string label;  // names the call in messages: "<file>: method <name>" (+ " (delegate call k)")
  std::string method_label;  // "<file>: method <name>", the same for every delegate call of the method
  // The delegate call's place in a method of several (a layer shard, --num_sharding); -1: the
  // method's only call.
  int64_t shard = -1;
};

// Looks up Program.named_data by key; returns an empty span when absent.
using NamedDataLookup = std::function<std::span<const uint8_t>(std::string_view key)>;

class DelegateMethod {
 public:
  virtual ~DelegateMethod() = default;
  virtual const std::vector<IoDesc>& inputs() const = 0;
  virtual const std::vector<IoDesc>& outputs() const = 0;
  // Bytes of scratch arena the method needs (its memory plan).
  virtual uint64_t scratch_bytes() const = 0;
  // Runs once. `inputs`/`outputs` in signature order, each exactly the I/O's byte size;
  // `scratch` at least scratch_bytes(), 64-byte aligned, shared by the methods of one program.
  virtual void execute(std::span<const BufferRef> inputs, std::span<const BufferRef> outputs,
                       std::span<uint8_t> scratch) = 0;
};

class BackendExecutor {
 public:
  virtual ~BackendExecutor() = default;
  virtual std::string_view delegate_id() const = 0;
  // Validates and prepares `payload` for `method` (InputError naming method.label on anything
  // malformed; the payload comes from a file). The returned method's I/O must match
  // method.inputs / outputs in dtype and shape (the caller checks). Weights are used in place from
  // `named_data`, never copied, except when repacking is unavoidable.
  virtual std::unique_ptr<DelegateMethod> init(const pte::Blob& payload, const std::vector<CompileSpec>& specs,
                                               const NamedDataLookup& named_data, const MethodDesc& method) const = 0;
};

void register_backend_executor(std::unique_ptr<BackendExecutor> executor);
// Null when no executor handles `delegate_id`.
const BackendExecutor* find_backend_executor(std::string_view delegate_id);
std::vector<std::string> backend_executor_ids();

}  // namespace genai::runtime
