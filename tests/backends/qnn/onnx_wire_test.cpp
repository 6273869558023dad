// The hand-written ONNX wire writer (backends/qnn/onnx_wire.h): its bytes equal what the onnx
// Python package serializes for the same model, and — the reason it exists — an ONNX export and
// libsentencepiece (with its built-in protobuf runtime) work in one process.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "backends/backend_test_util.h"
#include "backends/qnn/onnx_export.h"
#include "backends/qnn/onnx_wire.h"
#include "model/model.h"
#include "support/cli_runner.h"
#include "support/test_requirements.h"
#include "tokenizer/factory.h"

namespace genai::qnn_export_testing {
namespace {

namespace wire = backends::qnn::wire;

std::string varint(uint64_t v) {
  std::string s;
  wire::append_varint(s, v);
  return s;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << path;
}

TEST(OnnxWire, VarintsAndKeys) {
  EXPECT_EQ(varint(0), std::string(1, '\0'));
  EXPECT_EQ(varint(1), "\x01");
  EXPECT_EQ(varint(127), "\x7f");
  EXPECT_EQ(varint(128), "\x80\x01");
  EXPECT_EQ(varint(300), "\xac\x02");
  EXPECT_EQ(varint(static_cast<uint64_t>(int64_t{-1})), "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01");
  std::string key;
  wire::append_key(key, 20, 0);  // AttributeProto.type: two bytes
  EXPECT_EQ(key, "\xa0\x01");
}

bool have_onnx() {
  static const bool ok = testing::run_process({"python3", "-c", "import onnx"}).exit_code == 0;
  return ok;
}

// An empty model "tiny" (IR 11, opset 23, producer genai), as both sides of each comparison make it.
wire::Model tiny_model() {
  wire::Model m;
  m.ir_version = 11;
  m.producer_name = "genai";
  m.opset_imports.push_back({"", 23});
  m.graph.name = "tiny";
  return m;
}

// Writes `m` and runs `script` on its path: the script exits non-zero when onnx disagrees.
void expect_onnx_agrees(const wire::Model& m, const char* script) {
  testing::TempDir dir;
  const std::string path = dir.file("tiny.onnx");
  write_file(path, wire::serialize(m));
  const auto r = testing::run_process({"python3", "-c", script, path});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

// Y = Transpose(Add(X, C)), the Transpose carrying one attribute of every kind the writer knows
// (so not a model onnx.checker accepts: the exported models are checked in onnx_export_test),
// written by onnx_wire and by onnx.helper: equal bytes, and onnx parses it back.
TEST(OnnxWire, BytesEqualOnnxHelperSerialization) {
  GENAI_REQUIRE_AVAILABLE(have_onnx(), "python3 module onnx");
  wire::Model m = tiny_model();
  wire::Node& add = m.graph.nodes.emplace_back();
  add.op_type = "Add";
  add.name = "Add_0";
  add.inputs = {"X", "C"};
  add.outputs = {"S"};
  wire::Node& t = m.graph.nodes.emplace_back();
  t.op_type = "Transpose";
  t.name = "Transpose_1";
  t.inputs = {"S"};
  t.outputs = {"Y"};
  // Alphabetical, as onnx.helper.make_node orders keyword attributes.
  t.attributes.push_back({"a_float", wire::AttributeType::kFloat, -0.25f, 0, {}, {}, {}});
  t.attributes.push_back({"b_floats", wire::AttributeType::kFloats, 0, 0, {}, {1.5f, -2.0f}, {}});
  t.attributes.push_back({"c_int", wire::AttributeType::kInt, 0, -3, {}, {}, {}});
  t.attributes.push_back({"d_string", wire::AttributeType::kString, 0, 0, "hi", {}, {}});
  t.attributes.push_back({"perm", wire::AttributeType::kInts, 0, 0, {}, {}, {1, 0}});
  const float c[6] = {0.5f, -1.0f, 2.0f, 3.25f, 0.0f, 1e-3f};
  std::string raw(sizeof c, '\0');
  std::memcpy(raw.data(), c, sizeof c);
  m.graph.initializers.push_back({{2, 3}, 1, "C", raw});
  m.graph.inputs.push_back({"X", 1, {2, 3}});
  m.graph.outputs.push_back({"Y", 1, {3, 2}});
  const char* script = R"(
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto as T
data = open(sys.argv[1], 'rb').read()
m = onnx.load_from_string(data)
c = np.array([0.5, -1.0, 2.0, 3.25, 0.0, 1e-3], dtype=np.float32).reshape(2, 3)
g = helper.make_graph(
    [helper.make_node('Add', ['X', 'C'], ['S'], name='Add_0'),
     helper.make_node('Transpose', ['S'], ['Y'], name='Transpose_1', a_float=-0.25, b_floats=[1.5, -2.0],
                      c_int=-3, d_string='hi', perm=[1, 0])],
    'tiny', [helper.make_tensor_value_info('X', T.FLOAT, [2, 3])],
    [helper.make_tensor_value_info('Y', T.FLOAT, [3, 2])],
    [helper.make_tensor('C', T.FLOAT, [2, 3], c.tobytes(), raw=True)])
ref = helper.make_model(g, producer_name='genai', opset_imports=[helper.make_opsetid('', 23)], ir_version=11)
assert numpy_helper.to_array(m.graph.initializer[0]).tolist() == c.tolist()
if ref.SerializeToString() != data:
    print('differs:\n', m, '\nexpected:\n', ref)
    sys.exit(1)
)";
  expect_onnx_agrees(m, script);
}

// A tensor whose bytes are external data: what onnx's external_data_helper writes for it.
TEST(OnnxWire, ExternalDataEqualsOnnxHelperSerialization) {
  GENAI_REQUIRE_AVAILABLE(have_onnx(), "python3 module onnx");
  wire::Model m = tiny_model();
  wire::Node& id = m.graph.nodes.emplace_back();
  id.op_type = "Identity";
  id.name = "Identity_0";
  id.inputs = {"C"};
  id.outputs = {"Y"};
  wire::Tensor c{{4096}, 3, "C", {}, wire::ExternalData{"initializers.bin", 128, 4096}};
  m.graph.initializers.push_back(c);
  m.graph.outputs.push_back({"Y", 3, {4096}});
  const char* script = R"(
import sys, onnx
from onnx import helper, TensorProto as T
from onnx.external_data_helper import set_external_data
data = open(sys.argv[1], 'rb').read()
t = T(name='C', data_type=T.INT8, dims=[4096], raw_data=bytes(4096))
set_external_data(t, 'initializers.bin', offset=128, length=4096)  # what onnx.save does before it
t.data_location = T.EXTERNAL                                           # writes the bytes out and
t.ClearField('raw_data')                                               # drops them
g = helper.make_graph([helper.make_node('Identity', ['C'], ['Y'], name='Identity_0')], 'tiny', [],
                      [helper.make_tensor_value_info('Y', T.INT8, [4096])], [t])
ref = helper.make_model(g, producer_name='genai', opset_imports=[helper.make_opsetid('', 23)], ir_version=11)
if ref.SerializeToString() != data:
    print('differs:\n', onnx.load_from_string(data), '\nexpected:\n', ref)
    sys.exit(1)
)";
  expect_onnx_agrees(m, script);
}

// libprotobuf (what onnx_export used to link) and libsentencepiece's built-in protobuf could not
// share a process: loading a .model failed ("compiled against version 3.14.0 of the Protocol
// Buffer runtime") or crashed. Load, export, load again in one process.
TEST(OnnxWire, SentencePieceAndOnnxExportShareAProcess) {
  // ModelProto { pieces { "<unk>" UNKNOWN } pieces { "b" score -0.5 } pieces { "a" score -1 } }.
  auto piece = [](std::string_view text, char score_byte, std::string_view type) {
    std::string p = std::string("\x0a") + static_cast<char>(text.size()) + std::string(text);
    p += std::string("\x15\x00\x00", 3) + score_byte + '\xbf';
    p += type;
    return std::string("\x0a") + static_cast<char>(p.size()) + p;
  };
  testing::TempDir dir;
  const std::string model = dir.file("tiny.model");
  write_file(model, piece("<unk>", '\x00', "\x18\x02") + piece("b", '\x00', "") + piece("a", '\x80', ""));
  EXPECT_EQ(load_sentencepiece_model(model)->vocab_size(), 3);
  const auto q = backends_testing::quantize(backends_testing::block_friendly_model(), "16a8w", graph::ModelMode::kHybrid);
  const auto m = backends::qnn::export_onnx_qdq(q.bundles.at(pipeline::parse_graph_name("kv_forward")));
  EXPECT_GT(m.bytes.size(), 10000u);
  const auto tok = load_sentencepiece_model(model);
  EXPECT_EQ(tok->vocab_size(), 3);
  EXPECT_FALSE(tok->encode("ab", false, false).empty());
}

}  // namespace
}  // namespace genai::qnn_export_testing
