// Element types shared by every layer (weights, graph tensors, compiled program I/O).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace genai {

enum class DType : uint8_t { kF32, kF16, kBF16, kF64, kI8, kU8, kI16, kU16, kI32, kU32, kI64, kU64, kBool };

size_t dtype_size(DType t);
// Lower-case names as `genai inspect` prints them: float32, float16, bfloat16, int8, uint16, ...
std::string_view dtype_name(DType t);
bool dtype_from_name(std::string_view name, DType* out);

}  // namespace genai
