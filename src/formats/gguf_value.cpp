#include "formats/gguf_value.h"

#include <fmt/format.h>

namespace genai {

std::string_view gguf_value_type_name(GgufValueType t) {
  switch (t) {
    case GgufValueType::kUint8: return "uint8";
    case GgufValueType::kInt8: return "int8";
    case GgufValueType::kUint16: return "uint16";
    case GgufValueType::kInt16: return "int16";
    case GgufValueType::kUint32: return "uint32";
    case GgufValueType::kInt32: return "int32";
    case GgufValueType::kFloat32: return "float32";
    case GgufValueType::kBool: return "bool";
    case GgufValueType::kString: return "string";
    case GgufValueType::kArray: return "array";
    case GgufValueType::kUint64: return "uint64";
    case GgufValueType::kInt64: return "int64";
    case GgufValueType::kFloat64: return "float64";
  }
  return "invalid";
}

bool gguf_value_type_valid(uint32_t raw) { return raw <= 12; }

GgufValue GgufValue::string_array(const std::vector<std::string>& items) {
  std::vector<GgufValue> v;
  v.reserve(items.size());
  for (const auto& s : items) v.push_back(string(s));
  return array(GgufValueType::kString, std::move(v));
}

GgufValue GgufValue::f32_array(const std::vector<float>& items) {
  std::vector<GgufValue> v;
  v.reserve(items.size());
  for (float f : items) v.push_back(f32(f));
  return array(GgufValueType::kFloat32, std::move(v));
}

GgufValue GgufValue::i32_array(const std::vector<int32_t>& items) {
  std::vector<GgufValue> v;
  v.reserve(items.size());
  for (int32_t i : items) v.push_back(i32(i));
  return array(GgufValueType::kInt32, std::move(v));
}

bool GgufValue::is_integer() const {
  return std::holds_alternative<uint64_t>(data) || std::holds_alternative<int64_t>(data);
}

std::optional<int64_t> GgufValue::as_int() const {
  if (const auto* u = std::get_if<uint64_t>(&data)) {
    if (*u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(*u);
  }
  if (const auto* i = std::get_if<int64_t>(&data)) return *i;
  return std::nullopt;
}

std::optional<double> GgufValue::as_number() const {
  if (const auto* u = std::get_if<uint64_t>(&data)) return static_cast<double>(*u);
  if (const auto* i = std::get_if<int64_t>(&data)) return static_cast<double>(*i);
  if (const auto* f = std::get_if<double>(&data)) return *f;
  return std::nullopt;
}

std::optional<bool> GgufValue::as_bool() const {
  if (const auto* b = std::get_if<bool>(&data)) return *b;
  return std::nullopt;
}

std::string GgufValue::to_display_string(size_t max_items) const {
  if (const auto* u = std::get_if<uint64_t>(&data)) return fmt::format("{}", *u);
  if (const auto* i = std::get_if<int64_t>(&data)) return fmt::format("{}", *i);
  if (const auto* f = std::get_if<double>(&data)) return fmt::format("{}", *f);
  if (const auto* b = std::get_if<bool>(&data)) return *b ? "true" : "false";
  if (const auto* s = std::get_if<std::string>(&data)) {
    std::string t = s->size() > 80 ? s->substr(0, 77) + "..." : *s;
    return fmt::format("\"{}\"", t);
  }
  const auto& a = std::get<std::vector<GgufValue>>(data);
  std::string out = fmt::format("{}[{}]{{", gguf_value_type_name(array_type), a.size());
  for (size_t i = 0; i < a.size() && i < max_items; ++i) {
    if (i) out += ", ";
    out += a[i].to_display_string(max_items);
  }
  if (a.size() > max_items) out += ", ...";
  return out + "}";
}

bool operator==(const GgufValue& a, const GgufValue& b) {
  if (a.type != b.type) return false;
  if (a.type == GgufValueType::kArray && a.array_type != b.array_type) return false;
  return a.data == b.data;
}

}  // namespace genai
