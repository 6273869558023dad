// A GGUF metadata value: one of the 13 GGUF value types, arrays (possibly nested) included.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace genai {

// Numbering as the GGUF specification defines it.
enum class GgufValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};
std::string_view gguf_value_type_name(GgufValueType t);
bool gguf_value_type_valid(uint32_t raw);

struct GgufValue {
  GgufValueType type = GgufValueType::kUint32;
  GgufValueType array_type = GgufValueType::kUint8;  // element type when type == kArray
  // Unsigned integers as uint64, signed as int64, floats as double.
  std::variant<uint64_t, int64_t, double, bool, std::string, std::vector<GgufValue>> data;

  static GgufValue u8(uint8_t v) { return {GgufValueType::kUint8, {}, uint64_t{v}}; }
  static GgufValue u32(uint32_t v) { return {GgufValueType::kUint32, {}, uint64_t{v}}; }
  static GgufValue i32(int32_t v) { return {GgufValueType::kInt32, {}, int64_t{v}}; }
  static GgufValue u64(uint64_t v) { return {GgufValueType::kUint64, {}, v}; }
  static GgufValue i64(int64_t v) { return {GgufValueType::kInt64, {}, v}; }
  static GgufValue f32(float v) { return {GgufValueType::kFloat32, {}, double{v}}; }
  static GgufValue f64(double v) { return {GgufValueType::kFloat64, {}, v}; }
  static GgufValue boolean(bool v) { return {GgufValueType::kBool, {}, v}; }
  static GgufValue string(std::string v) { return {GgufValueType::kString, {}, std::move(v)}; }
  static GgufValue array(GgufValueType element_type, std::vector<GgufValue> items) {
    return {GgufValueType::kArray, element_type, std::move(items)};
  }
  static GgufValue string_array(const std::vector<std::string>& items);
  static GgufValue f32_array(const std::vector<float>& items);
  static GgufValue i32_array(const std::vector<int32_t>& items);

  bool is_integer() const;
  bool is_float() const { return type == GgufValueType::kFloat32 || type == GgufValueType::kFloat64; }
  // Integer value (any integer type; uint64 above INT64_MAX gives nullopt).
  std::optional<int64_t> as_int() const;
  // Numeric value of any integer or float type.
  std::optional<double> as_number() const;
  std::optional<bool> as_bool() const;
  const std::string* as_string() const { return std::get_if<std::string>(&data); }
  const std::vector<GgufValue>* as_array() const { return std::get_if<std::vector<GgufValue>>(&data); }

  // Short human-readable rendering (arrays abbreviated), for `inspect` and messages.
  std::string to_display_string(size_t max_items = 8) const;
};

bool operator==(const GgufValue& a, const GgufValue& b);

}  // namespace genai
