// Bytes of float temporaries an op needs in the arena. The lowering reserves them in the memory
// plan and the executor checks the payload reserved at least this much, so both sides use this
// one rule. Quantized program: a float copy of each quantized operand of a float op, then the
// float result before it is quantized (gather: the result only). Float16 program: nothing, ops read and write float tensors directly.
#pragma once

#include <cstdint>
#include <span>

#include "backends/payload/payload_format.h"

namespace genai::backends {

struct OperandInfo {
  fb::ElementType type = fb::ElementType::F32;
  int64_t numel = 0;
};

inline bool is_quantized_type(fb::ElementType t) { return t == fb::ElementType::U8 || t == fb::ElementType::U16; }

inline uint64_t op_scratch_bytes(fb::OpKind kind, fb::Precision precision, std::span<const OperandInfo> inputs,
                                 OperandInfo output) {
  if (precision == fb::Precision::Float16) return 0;
  auto n4 = [](int64_t n) { return static_cast<uint64_t>(n) * 4; };
  switch (kind) {
    case fb::OpKind::Linear:
      return 0;
    case fb::OpKind::Gather:
      return is_quantized_type(output.type) ? n4(output.numel) : 0;
    case fb::OpKind::RmsNorm:
    case fb::OpKind::LayerNorm:
    case fb::OpKind::Add:
    case fb::OpKind::Mul:
    case fb::OpKind::Silu:
    case fb::OpKind::GeluTanh:
    case fb::OpKind::Gelu:
    case fb::OpKind::Tanh:
    case fb::OpKind::Rope:
    case fb::OpKind::Softmax: {
      uint64_t bytes = is_quantized_type(output.type) ? n4(output.numel) : 0;
      for (const auto& in : inputs)
        if (is_quantized_type(in.type)) bytes += n4(in.numel);
      return bytes;
    }
    default:
      return 0;
  }
}

}  // namespace genai::backends
