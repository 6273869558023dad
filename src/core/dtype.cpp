#include "core/dtype.h"

#include <array>
#include <utility>

namespace genai {
namespace {
struct DTypeInfo {
  DType type;
  size_t size;
  std::string_view name;
};
constexpr std::array<DTypeInfo, 13> kInfo = {{
    {DType::kF32, 4, "float32"},  {DType::kF16, 2, "float16"}, {DType::kBF16, 2, "bfloat16"},
    {DType::kF64, 8, "float64"},  {DType::kI8, 1, "int8"},     {DType::kU8, 1, "uint8"},
    {DType::kI16, 2, "int16"},    {DType::kU16, 2, "uint16"},  {DType::kI32, 4, "int32"},
    {DType::kU32, 4, "uint32"},   {DType::kI64, 8, "int64"},   {DType::kU64, 8, "uint64"},
    {DType::kBool, 1, "bool"},
}};
}  // namespace

size_t dtype_size(DType t) { return kInfo[static_cast<size_t>(t)].size; }
std::string_view dtype_name(DType t) { return kInfo[static_cast<size_t>(t)].name; }

bool dtype_from_name(std::string_view name, DType* out) {
  for (const auto& i : kInfo) {
    if (i.name == name) {
      *out = i.type;
      return true;
    }
  }
  return false;
}

}  // namespace genai
