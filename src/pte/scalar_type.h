// Element types as a .pte stores them (the schema's ScalarType, PyTorch's numbering). Wider than
// genai::DType: quantized and float8 types can appear in programs other tools wrote, so the pte
// layer keeps its own enum and maps to DType where one exists.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/dtype.h"

namespace genai::pte {

enum class ScalarType : int8_t {
  kByte = 0,  // uint8
  kChar = 1,  // int8
  kShort = 2,
  kInt = 3,
  kLong = 4,
  kHalf = 5,
  kFloat = 6,
  kDouble = 7,
  kBool = 11,
  kQInt8 = 12,
  kQUInt8 = 13,
  kQInt32 = 14,
  kBFloat16 = 15,
  kQUInt4x2 = 16,
  kQUInt2x4 = 17,
  kBits16 = 22,
  kFloat8e5m2 = 23,
  kFloat8e4m3fn = 24,
  kFloat8e5m2fnuz = 25,
  kFloat8e4m3fnuz = 26,
  kUInt16 = 27,
  kUInt32 = 28,
  kUInt64 = 29,
};

// False for numbers the schema does not define (complex and bit types are not implemented upstream).
bool is_known_scalar_type(int raw);
// Lower-case names as `genai inspect` prints them: uint8, int8, ..., float32, qint8, quint4x2.
std::string_view scalar_type_name(ScalarType t);
// Bytes per element as the runtime sizes tensor data (packed sub-byte types count one byte).
size_t scalar_type_size(ScalarType t);

ScalarType scalar_type_from_dtype(DType t);
// nullopt for types DType has no counterpart for (quantized, float8, bits16).
std::optional<DType> dtype_from_scalar_type(ScalarType t);

}  // namespace genai::pte
