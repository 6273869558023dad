// The ONNX messages the QDQ exporter writes, as plain structs, and their protobuf wire encoding.
// Written here rather than with libonnx/libprotobuf: Debian's libsentencepiece carries its own
// protobuf 3.14 runtime under the same symbol names, and a process holding both (the CLI, every
// binary that links the tokenizer) fails inside SentencePiece. Field numbers are onnx.proto's;
// fields are written in field-number order, so equal structs give equal bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace genai::backends::qnn::wire {

// AttributeProto.AttributeType values.
enum class AttributeType : int32_t { kFloat = 1, kInt = 2, kString = 3, kFloats = 6, kInts = 7 };

struct Attribute {
  std::string name;
  AttributeType type = AttributeType::kInt;
  float f = 0.0f;              // kFloat
  int64_t i = 0;               // kInt
  std::string s;               // kString
  std::vector<float> floats;   // kFloats
  std::vector<int64_t> ints;   // kInts
};

struct Node {
  std::vector<std::string> inputs, outputs;
  std::string name, op_type;
  std::vector<Attribute> attributes;
};

// Where an initializer's bytes live when they are not in the model (TensorProto.external_data,
// data_location EXTERNAL): `length` bytes at `offset` of the file `location`, a path relative to
// the model's folder.
struct ExternalData {
  std::string location;
  uint64_t offset = 0, length = 0;
};

// A TensorProto holding its data as raw little-endian bytes, or in an external file.
struct Tensor {
  std::vector<int64_t> dims;
  int32_t data_type = 0;  // TensorProto.DataType
  std::string name;
  std::string raw_data;   // empty when `external` is set
  std::optional<ExternalData> external = std::nullopt;
};

// A ValueInfoProto of a tensor with a fully static shape.
struct ValueInfo {
  std::string name;
  int32_t elem_type = 0;
  std::vector<int64_t> shape;
};

struct Graph {
  std::vector<Node> nodes;
  std::string name;
  std::vector<Tensor> initializers;
  std::vector<ValueInfo> inputs, outputs;
};

struct OpsetId {
  std::string domain;
  int64_t version = 0;
};

struct Model {
  int64_t ir_version = 0;
  std::string producer_name;
  Graph graph;
  std::vector<OpsetId> opset_imports;
};

// Serialized onnx.ModelProto.
std::string serialize(const Model& model);

// Wire primitives (exposed for tests): base-128 varint, and a field's key (number << 3 | wire type).
void append_varint(std::string& out, uint64_t v);
void append_key(std::string& out, uint32_t field, uint32_t wire_type);

}  // namespace genai::backends::qnn::wire
