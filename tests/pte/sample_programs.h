// Programs built through the model for the pte tests, covering every value kind, instruction
// kind and storage kind: a kernels method, two delegated methods sharing one payload, constant
// methods and named data with duplicates.
#pragma once

#include <cstdint>
#include <vector>

#include "pte/program.h"
#include "target/qnn_spec_builder.h"

namespace genai::pte::testing {

// Deterministic bytes (xorshift), so payloads differ by seed but files are reproducible.
inline std::vector<uint8_t> pattern_bytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> out(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : out) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<uint8_t>(x);
  }
  return out;
}

inline TensorValue constant_tensor(ScalarType type, std::vector<int32_t> sizes, uint32_t seed) {
  TensorValue t = make_tensor(type, std::move(sizes));
  t.data = Blob(pattern_bytes(*tensor_nbytes(t), seed));
  return t;
}

inline TensorValue planned_tensor(ScalarType type, std::vector<int32_t> sizes, uint64_t offset) {
  TensorValue t = make_tensor(type, std::move(sizes));
  t.allocation = Allocation{1, offset};
  return t;
}

// forward: y = x * w + b with every value kind and instruction kind present.
inline Method kernels_method() {
  Method m;
  m.name = "forward";
  m.container_meta = ContainerMeta{"T2#1#0(T1#1($),D0())", "$"};
  TensorValue bf16 = constant_tensor(ScalarType::kBFloat16, {3, 2}, 9);
  bf16.dim_order = {1, 0};  // channels-last style order
  TensorValue state = planned_tensor(ScalarType::kLong, {2}, 32);
  state.data = Blob(pattern_bytes(16, 5));  // planned with initial contents (mutable segment)
  TensorValue external = make_tensor(ScalarType::kHalf, {4});
  external.extra = ExtraTensorInfo{"model.layers.0.w", TensorDataLocation::kExternal, DeviceType::kCpu, 0};
  TensorValue dynamic = make_tensor(ScalarType::kFloat, {2, 2});
  dynamic.dynamism = ShapeDynamism::kDynamicBound;
  m.values = {
      dynamic,                                              // 0 input, caller-supplied
      constant_tensor(ScalarType::kFloat, {2, 2}, 1),       // 1 weight
      constant_tensor(ScalarType::kChar, {3}, 2),           // 2 bias (odd size: padding follows)
      planned_tensor(ScalarType::kFloat, {2, 2}, 0),        // 3 intermediate
      planned_tensor(ScalarType::kFloat, {2, 2}, 16),       // 4 output
      Int{1},                                               // 5 alpha
      DoubleList{{0.5, -1.25}},                             // 6
      BoolList{{true, false, true}},                        // 7
      IntList{{-1, 0, 1LL << 40}},                          // 8
      String{"mean"},                                       // 9
      Null{},                                               // 10
      TensorList{{1, 3}},                                   // 11
      OptionalTensorList{{-1, 4}},                          // 12
      state,                                                // 13
      external,                                             // 14
      bf16,                                                 // 15
      Bool{true},                                           // 16
      Double{3.5},                                          // 17
  };
  m.inputs = {0};
  m.outputs = {4};
  Chain c;
  c.instructions = {
      KernelCall{0, {0, 1, 3}},
      KernelCall{1, {3, 2, 5, 4}},
      JumpFalseCall{16, 4},
      MoveCall{3, 4},
      FreeCall{3},
      KernelCall{2, {11, 12, 9}},
  };
  m.chains = {c};
  m.operators = {{"aten::mul", "out"}, {"aten::add", "out"}, {"custom::mix", ""}};
  m.non_const_buffer_sizes = {0, 64};
  m.buffer_devices = {BufferDevice{1, DeviceType::kCpu, 0}};
  return m;
}

inline std::vector<CompileSpec> qnn_specs() {
  auto specs = target::QnnSpecBuilder("SM8650").x86_emulation(true).build();
  specs.push_back(CompileSpec{"other_key", {1, 2, 3}});
  return specs;
}

// A decoder method delegated whole to QNN, as kv_forward / prefill_forward are.
inline Method delegated_method(const std::string& name, int32_t seq, const Blob& payload) {
  Method m;
  m.name = name;
  m.values = {make_tensor(ScalarType::kInt, {1, seq}), make_tensor(ScalarType::kUInt16, {1, seq, 64}),
              make_tensor(ScalarType::kFloat, {1, seq, 32})};
  m.inputs = {0, 1};
  m.outputs = {2};
  Chain c;
  c.instructions = {DelegateCall{0, {0, 1, 2}}};
  m.chains = {c};
  m.delegates = {Delegate{"QnnBackend", qnn_specs(), payload}};
  m.non_const_buffer_sizes = {0, 0};
  return m;
}

inline Program sample_program(size_t payload_bytes = 3000) {
  Program p;
  const Blob payload(pattern_bytes(payload_bytes, 7));
  p.methods.push_back(kernels_method());
  p.methods.push_back(delegated_method("kv_forward", 1, payload));
  // Same payload bytes in a separate buffer: the writer must still store them once.
  p.methods.push_back(delegated_method("prefill_forward", 16, Blob(pattern_bytes(payload_bytes, 7))));
  p.methods.push_back(make_constant_method("get_max_seq_len", Int{128}));
  p.methods.push_back(make_constant_method("use_kv_cache", Bool{true}));
  p.methods.push_back(make_constant_method("get_temperature", Double{0.75}));
  p.methods.push_back(make_constant_method("get_model_name", String{"smollm2"}));
  p.methods.push_back(make_constant_list_method("get_eos_ids", {Int{2}, Int{49152}}));
  p.methods.push_back(make_constant_list_method(
      "get_quant_params", {Double{0.0125}, Int{128}, Int{0}, Int{255}, String{"torch.uint8"}}));
  const auto weights = pattern_bytes(1000, 11);
  p.named_data.push_back({"shared/weights", Blob(weights)});
  p.named_data.push_back({"shared/weights_alias", Blob(weights)});  // identical bytes: one segment
  p.named_data.push_back({"other", Blob(pattern_bytes(77, 12))});
  p.named_data.push_back({"empty", Blob()});
  return p;
}

}  // namespace genai::pte::testing
