// The upstream sample programs (written by ExecuTorch's Python serializer) read as what they
// contain — decoded once with `flatc --json --raw-binary` against schema/program.fbs — and
// `genai inspect --json` reports it. Also the other direction: flatc decodes what we write.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "pte/program_reader.h"
#include "pte/program_writer.h"
#include "pte/sample_programs.h"
#include "support/cli_runner.h"
#include "support/test_requirements.h"

namespace genai::pte {
namespace {

const std::string kFixtures = std::string(GENAI_SOURCE_DIR) + "/../shared/fixtures/pte";

std::vector<float> floats(const Blob& b) {
  std::vector<float> out(b.size() / 4);
  std::memcpy(out.data(), b.data(), out.size() * 4);
  return out;
}

TEST(PteUpstreamFixtures, AddProgram) {
  const std::string path = kFixtures + "/add.pte";
  GENAI_REQUIRE_AVAILABLE(std::filesystem::exists(path), "upstream fixture " << path);
  const LoadedProgram p = read_program(path);
  EXPECT_EQ(p.layout.file_size, 728u);
  EXPECT_FALSE(p.layout.header.has_value());  // no segment data: plain flatbuffer
  ASSERT_EQ(p.layout.segments.size(), 1u);     // the empty constant segment
  EXPECT_EQ(p.layout.segments[0], (SegmentInfo{0, 0}));
  ASSERT_EQ(p.program.methods.size(), 1u);
  const Method& m = p.program.methods[0];
  EXPECT_EQ(m.name, "forward");
  ASSERT_TRUE(m.container_meta.has_value());
  EXPECT_EQ(m.container_meta->encoded_inp_str, "T2#2#0(T2#1#1($,$),D0())");
  EXPECT_EQ(m.container_meta->encoded_out_str, "$");
  ASSERT_EQ(m.values.size(), 4u);
  for (size_t i = 0; i < 3; ++i) {
    const auto& t = std::get<TensorValue>(m.values[i]);
    EXPECT_EQ(t.scalar_type, ScalarType::kFloat);
    EXPECT_EQ(t.sizes, std::vector<int32_t>{1});
    EXPECT_EQ(t.dim_order, std::vector<uint8_t>{0});
    EXPECT_FALSE(t.data.has_value());
    ASSERT_TRUE(t.allocation.has_value());
    EXPECT_EQ(*t.allocation, (Allocation{1, 16 * i}));
  }
  EXPECT_EQ(std::get<Int>(m.values[3]).value, 1);  // alpha
  EXPECT_EQ(m.inputs, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(m.outputs, std::vector<int32_t>{2});
  ASSERT_EQ(m.chains.size(), 1u);
  ASSERT_EQ(m.chains[0].instructions.size(), 1u);
  EXPECT_EQ(std::get<KernelCall>(m.chains[0].instructions[0]), (KernelCall{0, {0, 1, 3, 2, 2}}));
  ASSERT_EQ(m.operators.size(), 1u);
  EXPECT_EQ(operator_full_name(m.operators[0]), "aten::add.out");
  EXPECT_TRUE(m.delegates.empty());
  EXPECT_EQ(m.non_const_buffer_sizes, (std::vector<int64_t>{0, 48}));
  EXPECT_EQ(method_kind(m), MethodKind::kKernels);
  EXPECT_TRUE(p.program.named_data.empty());
}

TEST(PteUpstreamFixtures, ModuleLinearWithLegacyConstantBuffer) {
  const std::string path = kFixtures + "/ModuleLinear-no-constant-segment.pte";
  GENAI_REQUIRE_AVAILABLE(std::filesystem::exists(path), "upstream fixture " << path);
  const LoadedProgram p = read_program(path);
  EXPECT_EQ(p.layout.file_size, 1040u);
  EXPECT_FALSE(p.layout.header.has_value());
  EXPECT_TRUE(p.layout.segments.empty());
  ASSERT_EQ(p.program.methods.size(), 1u);
  const Method& m = p.program.methods[0];
  EXPECT_EQ(m.name, "forward");
  ASSERT_EQ(m.values.size(), 6u);
  // Constants come from Program.constant_buffer entries 1 and 2 (the constant segment is empty):
  // bytes 00 00 40 40 = 3.0f and 00 00 00 40 = 2.0f.
  const auto& w = std::get<TensorValue>(m.values[0]);
  const auto& b = std::get<TensorValue>(m.values[1]);
  ASSERT_TRUE(w.data.has_value());
  ASSERT_TRUE(b.data.has_value());
  EXPECT_FALSE(w.allocation.has_value());
  EXPECT_EQ(w.sizes, (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(w.dim_order, (std::vector<uint8_t>{0, 1}));
  EXPECT_EQ(floats(*w.data), (std::vector<float>{3, 3, 3, 3}));
  EXPECT_EQ(floats(*b.data), (std::vector<float>{2, 2, 2, 2}));
  for (size_t i = 2; i < 5; ++i) {
    const auto& t = std::get<TensorValue>(m.values[i]);
    ASSERT_TRUE(t.allocation.has_value()) << i;
    EXPECT_FALSE(t.data.has_value());
  }
  EXPECT_EQ(std::get<TensorValue>(m.values[3]).allocation->offset, 16u);
  EXPECT_EQ(std::get<Int>(m.values[5]).value, 1);
  EXPECT_EQ(m.inputs, std::vector<int32_t>{2});
  EXPECT_EQ(m.outputs, std::vector<int32_t>{4});
  ASSERT_EQ(m.chains.at(0).instructions.size(), 2u);
  EXPECT_EQ(std::get<KernelCall>(m.chains[0].instructions[0]), (KernelCall{0, {0, 2, 3, 3}}));
  EXPECT_EQ(std::get<KernelCall>(m.chains[0].instructions[1]), (KernelCall{1, {3, 1, 5, 4, 4}}));
  ASSERT_EQ(m.operators.size(), 2u);
  EXPECT_EQ(operator_full_name(m.operators[0]), "aten::mul.out");
  EXPECT_EQ(operator_full_name(m.operators[1]), "aten::add.out");
  EXPECT_EQ(m.non_const_buffer_sizes, (std::vector<int64_t>{0, 32}));
}

TEST(PteUpstreamFixtures, RewrittenThroughOurWriterReadsTheSame) {
  for (const char* name : {"add.pte", "ModuleLinear-no-constant-segment.pte"}) {
    const std::string path = kFixtures + "/" + name;
    GENAI_REQUIRE_AVAILABLE(std::filesystem::exists(path), "upstream fixture " << path);
    const LoadedProgram p = read_program(path);
    const auto bytes = serialize_program(p.program);
    EXPECT_TRUE(read_program_bytes(bytes, name).program == p.program) << name;
  }
}

TEST(PteUpstreamFixtures, InspectJson) {
  const std::string path = kFixtures + "/ModuleLinear-no-constant-segment.pte";
  GENAI_REQUIRE_AVAILABLE(std::filesystem::exists(path), "upstream fixture " << path);
  const auto r = genai::testing::run_genai({"inspect", path, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["file_size"], 1040);
  EXPECT_TRUE(j["header"].is_null());
  EXPECT_EQ(j["segments"].size(), 0u);
  ASSERT_EQ(j["methods"].size(), 1u);
  const auto& m = j["methods"][0];
  EXPECT_EQ(m["name"], "forward");
  EXPECT_EQ(m["kind"], "kernels");
  EXPECT_EQ(m["instructions"], 2);
  EXPECT_EQ(m["operators"], nlohmann::json({"aten::mul.out", "aten::add.out"}));
  EXPECT_EQ(m["inputs"], nlohmann::json::parse(R"([{"type":"tensor","dtype":"float32","shape":[2,2]}])"));
  EXPECT_EQ(m["outputs"][0]["shape"], nlohmann::json({2, 2}));
  EXPECT_EQ(m["non_const_buffer_sizes"], nlohmann::json({0, 32}));
  EXPECT_EQ(m["constant_tensors"].size(), 2u);
  EXPECT_EQ(m["constant_tensors"][0]["size"], 16);
  EXPECT_EQ(m["planned_tensors"], 3);
  EXPECT_TRUE(m["delegates"].empty());

  const auto add = genai::testing::run_genai({"inspect", kFixtures + "/add.pte"});
  ASSERT_EQ(add.exit_code, 0) << add.err;
  EXPECT_NE(add.out.find("aten::add.out"), std::string::npos) << add.out;
  EXPECT_NE(add.out.find("planned buffers: [48]"), std::string::npos) << add.out;
}

// flatc (the reference flatbuffers implementation) decodes our files against the schema.
TEST(PteUpstreamFixtures, FlatcDecodesOurFiles) {
  GENAI_REQUIRE_AVAILABLE(genai::testing::run_process({"flatc", "--version"}).exit_code == 0, "flatc on PATH");
  genai::testing::TempDir dir;
  write_program(dir.file("sample.pte"), testing::sample_program());
  const auto r = genai::testing::run_process({"flatc", "--json", "--strict-json", "--raw-binary", "-o", dir.path(),
                                              std::string(GENAI_SOURCE_DIR) + "/schema/program.fbs", "--",
                                              dir.file("sample.pte")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(dir.file("sample.json"));
  const auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j["execution_plan"].size(), 9u);
  EXPECT_EQ(j["execution_plan"][1]["name"], "kv_forward");
  const auto& kv = j["execution_plan"][1]["delegates"][0]["processed"];
  const auto& prefill = j["execution_plan"][2]["delegates"][0]["processed"];
  EXPECT_EQ(kv["location"], "SEGMENT");
  EXPECT_EQ(kv, prefill);
  EXPECT_EQ(j["constant_segment"]["offsets"], nlohmann::json({0, 0, 16, 32}));
  EXPECT_EQ(j["execution_plan"][0]["values"][1]["val"]["data_buffer_idx"], 1);
  EXPECT_EQ(j["named_data"][0]["segment_index"], j["named_data"][1]["segment_index"]);
  EXPECT_EQ(j["execution_plan"][3]["values"][0]["val"]["int_val"], 128);
}

}  // namespace
}  // namespace genai::pte
