#include "pte/scalar_type.h"

#include <array>

namespace genai::pte {
namespace {

struct TypeInfo {
  ScalarType type;
  std::string_view name;
  size_t size;
};

constexpr std::array<TypeInfo, 23> kTypes{{
    {ScalarType::kByte, "uint8", 1},
    {ScalarType::kChar, "int8", 1},
    {ScalarType::kShort, "int16", 2},
    {ScalarType::kInt, "int32", 4},
    {ScalarType::kLong, "int64", 8},
    {ScalarType::kHalf, "float16", 2},
    {ScalarType::kFloat, "float32", 4},
    {ScalarType::kDouble, "float64", 8},
    {ScalarType::kBool, "bool", 1},
    {ScalarType::kQInt8, "qint8", 1},
    {ScalarType::kQUInt8, "quint8", 1},
    {ScalarType::kQInt32, "qint32", 4},
    {ScalarType::kBFloat16, "bfloat16", 2},
    {ScalarType::kQUInt4x2, "quint4x2", 1},
    {ScalarType::kQUInt2x4, "quint2x4", 1},
    {ScalarType::kBits16, "bits16", 2},
    {ScalarType::kFloat8e5m2, "float8e5m2", 1},
    {ScalarType::kFloat8e4m3fn, "float8e4m3fn", 1},
    {ScalarType::kFloat8e5m2fnuz, "float8e5m2fnuz", 1},
    {ScalarType::kFloat8e4m3fnuz, "float8e4m3fnuz", 1},
    {ScalarType::kUInt16, "uint16", 2},
    {ScalarType::kUInt32, "uint32", 4},
    {ScalarType::kUInt64, "uint64", 8},
}};

const TypeInfo* find(int raw) {
  for (const auto& t : kTypes)
    if (static_cast<int>(t.type) == raw) return &t;
  return nullptr;
}

}  // namespace

bool is_known_scalar_type(int raw) { return find(raw) != nullptr; }

std::string_view scalar_type_name(ScalarType t) {
  const TypeInfo* info = find(static_cast<int>(t));
  return info ? info->name : std::string_view("unknown");
}

size_t scalar_type_size(ScalarType t) {
  const TypeInfo* info = find(static_cast<int>(t));
  return info ? info->size : 0;
}

ScalarType scalar_type_from_dtype(DType t) {
  switch (t) {
    case DType::kF32: return ScalarType::kFloat;
    case DType::kF16: return ScalarType::kHalf;
    case DType::kBF16: return ScalarType::kBFloat16;
    case DType::kF64: return ScalarType::kDouble;
    case DType::kI8: return ScalarType::kChar;
    case DType::kU8: return ScalarType::kByte;
    case DType::kI16: return ScalarType::kShort;
    case DType::kU16: return ScalarType::kUInt16;
    case DType::kI32: return ScalarType::kInt;
    case DType::kU32: return ScalarType::kUInt32;
    case DType::kI64: return ScalarType::kLong;
    case DType::kU64: return ScalarType::kUInt64;
    case DType::kBool: return ScalarType::kBool;
  }
  return ScalarType::kFloat;
}

std::optional<DType> dtype_from_scalar_type(ScalarType t) {
  switch (t) {
    case ScalarType::kFloat: return DType::kF32;
    case ScalarType::kHalf: return DType::kF16;
    case ScalarType::kBFloat16: return DType::kBF16;
    case ScalarType::kDouble: return DType::kF64;
    case ScalarType::kChar: return DType::kI8;
    case ScalarType::kByte: return DType::kU8;
    case ScalarType::kShort: return DType::kI16;
    case ScalarType::kUInt16: return DType::kU16;
    case ScalarType::kInt: return DType::kI32;
    case ScalarType::kUInt32: return DType::kU32;
    case ScalarType::kLong: return DType::kI64;
    case ScalarType::kUInt64: return DType::kU64;
    case ScalarType::kBool: return DType::kBool;
    default: return std::nullopt;
  }
}

}  // namespace genai::pte
