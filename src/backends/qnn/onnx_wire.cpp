#include "backends/qnn/onnx_wire.h"

#include <cstring>
#include <string>

namespace genai::backends::qnn::wire {

void append_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(static_cast<uint8_t>(v) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void append_key(std::string& out, uint32_t field, uint32_t wire_type) { append_varint(out, (uint64_t{field} << 3) | wire_type); }

namespace {

constexpr uint32_t kVarint = 0, kFixed32 = 5, kDelimited = 2;

// Messages are encoded into their own buffer first, then copied in behind their length.
class MessageWriter {
 public:
  // int32 / int64 fields: negative values are ten-byte two's complement, as protobuf writes them.
  MessageWriter& integer(uint32_t field, int64_t v) {
    append_key(out_, field, kVarint);
    append_varint(out_, static_cast<uint64_t>(v));
    return *this;
  }
  MessageWriter& real(uint32_t field, float v) {
    append_key(out_, field, kFixed32);
    char b[sizeof v];
    std::memcpy(b, &v, sizeof v);  // little-endian host (x86-64, aarch64)
    out_.append(b, sizeof b);
    return *this;
  }
  MessageWriter& bytes(uint32_t field, const std::string& v) {
    append_key(out_, field, kDelimited);
    append_varint(out_, v.size());
    out_.append(v);
    return *this;
  }
  // Repeated scalars one element per key (onnx.proto is proto2 without [packed]: what libprotobuf writes).
  MessageWriter& integers(uint32_t field, const std::vector<int64_t>& v) {
    for (int64_t x : v) integer(field, x);
    return *this;
  }
  MessageWriter& reals(uint32_t field, const std::vector<float>& v) {
    for (float x : v) real(field, x);
    return *this;
  }
  MessageWriter& strings(uint32_t field, const std::vector<std::string>& v) {
    for (const auto& x : v) bytes(field, x);
    return *this;
  }
  const std::string& str() const { return out_; }

 private:
  std::string out_;
};

std::string encode(const Attribute& a) {
  MessageWriter w;
  w.bytes(1, a.name);
  switch (a.type) {
    case AttributeType::kFloat: w.real(2, a.f); break;
    case AttributeType::kInt: w.integer(3, a.i); break;
    case AttributeType::kString: w.bytes(4, a.s); break;
    case AttributeType::kFloats: w.reals(7, a.floats); break;
    case AttributeType::kInts: w.integers(8, a.ints); break;
  }
  w.integer(20, static_cast<int32_t>(a.type));
  return w.str();
}

std::string encode(const Node& n) {
  MessageWriter w;
  w.strings(1, n.inputs).strings(2, n.outputs).bytes(3, n.name).bytes(4, n.op_type);
  for (const auto& a : n.attributes) w.bytes(5, encode(a));
  return w.str();
}

std::string encode(const Tensor& t) {
  MessageWriter w;
  w.integers(1, t.dims).integer(2, t.data_type).bytes(8, t.name);
  if (!t.external) {
    w.bytes(9, t.raw_data);
    return w.str();
  }
  // external_data: StringStringEntryProto{key = 1, value = 2} in onnx's own order; data_location
  // EXTERNAL = 1.
  const ExternalData& e = *t.external;
  auto entry = [&](const std::string& key, const std::string& value) {
    w.bytes(13, MessageWriter().bytes(1, key).bytes(2, value).str());
  };
  entry("location", e.location);
  entry("offset", std::to_string(e.offset));
  entry("length", std::to_string(e.length));
  w.integer(14, 1);
  return w.str();
}

std::string encode(const ValueInfo& v) {
  MessageWriter shape;  // TensorShapeProto: dim = 1, each Dimension's dim_value = 1
  for (int64_t d : v.shape) shape.bytes(1, MessageWriter().integer(1, d).str());
  MessageWriter tensor_type;  // TypeProto.Tensor: elem_type = 1, shape = 2
  tensor_type.integer(1, v.elem_type).bytes(2, shape.str());
  MessageWriter w;  // ValueInfoProto: name = 1, type = 2 (TypeProto: tensor_type = 1)
  w.bytes(1, v.name).bytes(2, MessageWriter().bytes(1, tensor_type.str()).str());
  return w.str();
}

std::string encode(const Graph& g) {
  MessageWriter w;
  for (const auto& n : g.nodes) w.bytes(1, encode(n));
  w.bytes(2, g.name);
  for (const auto& t : g.initializers) w.bytes(5, encode(t));
  for (const auto& v : g.inputs) w.bytes(11, encode(v));
  for (const auto& v : g.outputs) w.bytes(12, encode(v));
  return w.str();
}

}  // namespace

std::string serialize(const Model& model) {
  MessageWriter w;
  w.integer(1, model.ir_version).bytes(2, model.producer_name).bytes(7, encode(model.graph));
  for (const auto& o : model.opset_imports) w.bytes(8, MessageWriter().bytes(1, o.domain).integer(2, o.version).str());
  return w.str();
}

}  // namespace genai::backends::qnn::wire
