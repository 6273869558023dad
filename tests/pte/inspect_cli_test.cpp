// `genai inspect` on programs our writer produced: the JSON contract (header, methods of each
// kind, delegates with decoded QNN options, constant values, segments, named data), the human
// summary, and exit 2 for bad input.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "pte/program_writer.h"
#include "pte/sample_programs.h"
#include "support/cli_runner.h"

namespace genai::pte {
namespace {

using nlohmann::json;

const json* method(const json& j, const std::string& name) {
  for (const auto& m : j["methods"])
    if (m["name"] == name) return &m;
  return nullptr;
}

TEST(PteInspectCli, JsonContract) {
  genai::testing::TempDir dir;
  const std::string path = dir.file("sample.pte");
  const ProgramLayout layout = write_program(path, testing::sample_program());
  const auto r = genai::testing::run_genai({"inspect", path, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["file_size"], layout.file_size);
  EXPECT_EQ(j["header"]["program_size"], layout.header->program_size);
  EXPECT_EQ(j["header"]["segment_base_offset"], layout.header->segment_base_offset);
  EXPECT_EQ(j["header"]["segment_data_size"], layout.header->segment_data_size);
  ASSERT_EQ(j["segments"].size(), layout.segments.size());
  for (size_t i = 0; i < layout.segments.size(); ++i) {
    EXPECT_EQ(j["segments"][i]["offset"], layout.segments[i].offset);
    EXPECT_EQ(j["segments"][i]["size"], layout.segments[i].size);
  }
  EXPECT_EQ(j["named_data"], json::parse(R"([{"key":"shared/weights","size":1000},
      {"key":"shared/weights_alias","size":1000},{"key":"other","size":77},{"key":"empty","size":0}])"));
  ASSERT_EQ(j["methods"].size(), 9u);

  const json& fwd = *method(j, "forward");
  EXPECT_EQ(fwd["kind"], "kernels");
  EXPECT_EQ(fwd["instructions"], 6);
  EXPECT_EQ(fwd["operators"], json({"aten::mul.out", "aten::add.out", "custom::mix"}));
  EXPECT_EQ(fwd["non_const_buffer_sizes"], json({0, 64}));
  EXPECT_EQ(fwd["inputs"][0]["dtype"], "float32");
  EXPECT_EQ(fwd["constant_tensors"].size(), 3u);
  EXPECT_EQ(fwd["constant_tensors"][2]["dtype"], "bfloat16");
  EXPECT_FALSE(fwd.contains("values"));

  const json& kv = *method(j, "kv_forward");
  EXPECT_EQ(kv["kind"], "delegated");
  EXPECT_EQ(kv["inputs"], json::parse(R"([{"type":"tensor","dtype":"int32","shape":[1,1]},
                                          {"type":"tensor","dtype":"uint16","shape":[1,1,64]}])"));
  ASSERT_EQ(kv["delegates"].size(), 1u);
  const json& d = kv["delegates"][0];
  EXPECT_EQ(d["id"], "QnnBackend");
  EXPECT_EQ(d["compile_specs"][0]["key"], "qnn_compile_spec");
  EXPECT_GT(d["compile_specs"][0]["size"].get<int>(), 0);
  EXPECT_EQ(d["compile_specs"][1], json::parse(R"({"key":"other_key","size":3})"));
  EXPECT_EQ(d["processed_size"], 3000);
  ASSERT_TRUE(d["qnn_options"].is_object()) << d.dump();
  EXPECT_EQ(d["qnn_options"]["soc_model"], "SM8650");
  EXPECT_EQ(d["qnn_options"]["backend_type"], "htp");

  EXPECT_EQ((*method(j, "get_max_seq_len"))["kind"], "constant");
  EXPECT_EQ((*method(j, "get_max_seq_len"))["values"], json({128}));
  EXPECT_EQ((*method(j, "get_max_seq_len"))["instructions"], 0);
  EXPECT_EQ((*method(j, "get_max_seq_len"))["outputs"][0]["type"], "int");
  EXPECT_EQ((*method(j, "use_kv_cache"))["values"], json({true}));
  EXPECT_EQ((*method(j, "get_temperature"))["values"], json({0.75}));
  EXPECT_EQ((*method(j, "get_model_name"))["values"], json({"smollm2"}));
  EXPECT_EQ((*method(j, "get_eos_ids"))["values"], json({2, 49152}));
  EXPECT_EQ((*method(j, "get_quant_params"))["values"], json::parse(R"([0.0125, 128, 0, 255, "torch.uint8"])"));
}

TEST(PteInspectCli, DelegateWithoutQnnSpecHasNullOptions) {
  genai::testing::TempDir dir;
  Program p;
  p.methods.push_back(testing::delegated_method("forward", 2, Blob(testing::pattern_bytes(64, 1))));
  p.methods[0].delegates[0].id = "XnnpackBackend";
  p.methods[0].delegates[0].compile_specs = {CompileSpec{"threads", {4}}};
  write_program(dir.file("x.pte"), p);
  const auto r = genai::testing::run_genai({"inspect", dir.file("x.pte"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json d = json::parse(r.out)["methods"][0]["delegates"][0];
  EXPECT_EQ(d["id"], "XnnpackBackend");
  EXPECT_TRUE(d["qnn_options"].is_null());
}

TEST(PteInspectCli, CorruptQnnSpecIsBadInputNamingTheDelegate) {
  genai::testing::TempDir dir;
  Program p;
  p.methods.push_back(testing::delegated_method("kv_forward", 1, Blob(testing::pattern_bytes(64, 1))));
  p.methods[0].delegates[0].compile_specs = {CompileSpec{kQnnCompileSpecKey, {1, 2, 3, 4, 5}}};
  write_program(dir.file("q.pte"), p);
  const auto r = genai::testing::run_genai({"inspect", dir.file("q.pte")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("q.pte"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kv_forward"), std::string::npos) << r.err;
}

TEST(PteInspectCli, HumanSummary) {
  genai::testing::TempDir dir;
  write_program(dir.file("s.pte"), testing::sample_program());
  const auto r = genai::testing::run_genai({"inspect", dir.file("s.pte")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* needle : {"extended header", "method kv_forward (delegated", "delegate QnnBackend: payload 3000",
                             "method get_eos_ids (constant", "values:  2, 49152", "segments: 6",
                             "shared/weights: 1000 bytes", "aten::mul.out"})
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle << "\n" << r.out;
}

TEST(PteInspectCli, BadInputExitsTwo) {
  genai::testing::TempDir dir;
  auto missing = genai::testing::run_genai({"inspect", dir.file("none.pte")});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("none.pte"), std::string::npos);
  std::ofstream(dir.file("text.pte")) << "this is not a program at all";
  auto text = genai::testing::run_genai({"inspect", dir.file("text.pte"), "--json"});
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_NE(text.err.find("file identifier"), std::string::npos) << text.err;
  EXPECT_TRUE(text.out.empty());
  EXPECT_EQ(genai::testing::run_genai({"inspect"}).exit_code, 2);
}

}  // namespace
}  // namespace genai::pte
