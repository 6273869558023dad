// The in-memory model of an ExecuTorch program (.pte), shared by the writer and the reader so a
// round trip compares with ==. It mirrors the schema's meaning, not its layout: where bytes are
// stored (constant segment, delegate segments, inline data, legacy constant_buffer) is the
// writer's choice and the reader's concern, so tensors and delegates hold their bytes directly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "pte/blob.h"
#include "pte/compile_spec.h"
#include "pte/scalar_type.h"

namespace genai::pte {

enum class ShapeDynamism : uint8_t { kStatic = 0, kDynamicBound = 1, kDynamicUnbound = 2 };
enum class DeviceType : uint8_t { kCpu = 0, kCuda = 1 };
enum class TensorDataLocation : uint8_t { kSegment = 0, kExternal = 1 };

// Memory planning: the tensor lives at `offset` in planned buffer `memory_id`, an index into
// Method::non_const_buffer_sizes (1-based: entry 0 is the reserved placeholder).
struct Allocation {
  uint32_t memory_id = 1;
  uint64_t offset = 0;
  bool operator==(const Allocation&) const = default;
};

struct ExtraTensorInfo {
  std::string fully_qualified_name;
  TensorDataLocation location = TensorDataLocation::kSegment;  // kExternal: bytes live in a .ptd
  DeviceType device_type = DeviceType::kCpu;
  int8_t device_index = 0;
  bool operator==(const ExtraTensorInfo&) const = default;
};

// A tensor value. Its storage is one of:
//  - constant:           data set, allocation empty (bytes stored in the program);
//  - memory-planned:     allocation set, data empty;
//  - planned with state: allocation and data set (initial contents, a mutable data segment);
//  - caller-supplied:    neither (the runtime binds memory: graph inputs/outputs);
//  - external:           extra->location == kExternal (bytes looked up by name in a .ptd).
struct TensorValue {
  ScalarType scalar_type = ScalarType::kFloat;
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dim_order;  // a permutation of 0..rank-1; 0,1,..,rank-1 = contiguous
  ShapeDynamism dynamism = ShapeDynamism::kStatic;
  bool requires_grad = false;
  int8_t layout = 0;  // torch.strided
  std::optional<Allocation> allocation;
  std::optional<Blob> data;
  std::optional<ExtraTensorInfo> extra;
  bool operator==(const TensorValue&) const = default;
};

// Contiguous tensor of the given type and shape, storage supplied by the caller at run time.
TensorValue make_tensor(ScalarType type, std::vector<int32_t> sizes);
// Bytes the tensor's data occupies (numel * element size); nullopt for negative sizes or overflow.
std::optional<uint64_t> tensor_nbytes(const TensorValue& t);

struct Null {
  bool operator==(const Null&) const = default;
};
struct Int {
  int64_t value = 0;
  bool operator==(const Int&) const = default;
};
struct Bool {
  bool value = false;
  bool operator==(const Bool&) const = default;
};
struct Double {
  double value = 0;
  bool operator==(const Double&) const = default;
};
struct String {
  std::string value;
  bool operator==(const String&) const = default;
};
struct IntList {
  std::vector<int64_t> items;
  bool operator==(const IntList&) const = default;
};
struct DoubleList {
  std::vector<double> items;
  bool operator==(const DoubleList&) const = default;
};
struct BoolList {
  std::vector<bool> items;
  bool operator==(const BoolList&) const = default;
};
struct TensorList {  // value indices
  std::vector<int32_t> items;
  bool operator==(const TensorList&) const = default;
};
struct OptionalTensorList {  // value indices, -1 = None
  std::vector<int32_t> items;
  bool operator==(const OptionalTensorList&) const = default;
};

// Alternative order = the schema's KernelTypes union order (tag = index + 1).
using Value = std::variant<Null, Int, Bool, Double, TensorValue, String, IntList, DoubleList, BoolList,
                           TensorList, OptionalTensorList>;

struct Operator {
  std::string name;      // e.g. "aten::add"
  std::string overload;  // e.g. "out"; may be empty
  bool operator==(const Operator&) const = default;
};
// "aten::add.out", or just the name when the overload is empty.
std::string operator_full_name(const Operator& op);

struct KernelCall {
  int32_t op_index = 0;       // into Method::operators
  std::vector<int32_t> args;  // value indices: inputs then outputs
  bool operator==(const KernelCall&) const = default;
};
struct DelegateCall {
  int32_t delegate_index = 0;  // into Method::delegates
  std::vector<int32_t> args;   // value indices: delegate inputs then outputs
  bool operator==(const DelegateCall&) const = default;
};
struct MoveCall {
  int32_t move_from = 0;
  int32_t move_to = 0;
  bool operator==(const MoveCall&) const = default;
};
struct JumpFalseCall {
  int32_t cond_value_index = 0;
  int32_t destination_instruction = 0;
  bool operator==(const JumpFalseCall&) const = default;
};
struct FreeCall {
  int32_t value_index = 0;
  bool operator==(const FreeCall&) const = default;
};
// Alternative order = the schema's InstructionArguments union order (tag = index + 1).
using Instruction = std::variant<KernelCall, DelegateCall, MoveCall, JumpFalseCall, FreeCall>;

struct Chain {
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  std::vector<Instruction> instructions;
  bool operator==(const Chain&) const = default;
};

// A lowered subgraph: the backend that runs it, how it was compiled, and its payload.
struct Delegate {
  std::string id;  // backend name, e.g. "QnnBackend"
  std::vector<CompileSpec> compile_specs;
  Blob processed;
  bool operator==(const Delegate&) const = default;
};

// Pytree specs of the method's inputs and outputs (the runtime's container metadata).
struct ContainerMeta {
  std::string encoded_inp_str;
  std::string encoded_out_str;
  bool operator==(const ContainerMeta&) const = default;
};

// A non-CPU planned buffer (buffer_idx uses non_const_buffer_sizes' 1-based indexing).
struct BufferDevice {
  int32_t buffer_idx = 0;
  DeviceType device_type = DeviceType::kCpu;
  int8_t device_index = 0;
  bool operator==(const BufferDevice&) const = default;
};

struct Method {
  std::string name;
  std::optional<ContainerMeta> container_meta;
  std::vector<Value> values;
  std::vector<int32_t> inputs;   // value indices
  std::vector<int32_t> outputs;  // value indices
  std::vector<Chain> chains;
  std::vector<Operator> operators;
  std::vector<Delegate> delegates;
  // Entry 0 is the reserved placeholder (0); planned buffer j has size entry j + 1.
  std::vector<int64_t> non_const_buffer_sizes{0};
  std::vector<BufferDevice> buffer_devices;
  bool operator==(const Method&) const = default;
};

enum class MethodKind { kDelegated, kKernels, kConstant };
// kConstant: no instructions; kDelegated: at least one DelegateCall; kKernels otherwise.
MethodKind method_kind(const Method& m);
std::string_view method_kind_name(MethodKind k);  // "delegated" | "kernels" | "constant"
size_t instruction_count(const Method& m);

// A method with no instructions that returns a constant (e.g. get_max_seq_len): Int, Bool,
// Double, String or a constant tensor, encoded as the upstream emitter encodes prim getters.
Method make_constant_method(std::string name, Value value);
// The same for a list value: each item is one output of the one plan (pytree type builtins.list).
Method make_constant_list_method(std::string name, std::vector<Value> items);

// A blob addressed by key (Program.named_data): several methods can share one copy of weights.
struct NamedData {
  std::string key;
  Blob data;
  bool operator==(const NamedData&) const = default;
};

struct Program {
  uint32_t version = 0;  // Program.version; the format version proper is the "ET12" identifier
  std::vector<Method> methods;
  std::vector<NamedData> named_data;
  bool operator==(const Program&) const = default;

  const Method* find_method(std::string_view name) const;
  const NamedData* find_named_data(std::string_view key) const;
  // The outputs of constant method `name` (one for a getter, several for a list method); empty
  // when the program has no constant method by that name.
  std::vector<Value> constant_values(std::string_view name) const;
};

// Checks what the schema cannot express: every index (values, operators, delegates, jump
// targets, planned buffers) in range, dim orders are permutations, planned tensors fit their
// buffer, constant data matches the tensor's size, names unique. Returns the first problem
// found, naming the method and value; nullopt when the program is consistent.
std::optional<std::string> find_program_problem(const Program& p);

}  // namespace genai::pte
