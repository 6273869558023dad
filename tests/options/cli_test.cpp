// The commands derived from the option table, exercised through the genai executable.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace genai::options {
namespace {

using genai::testing::run_genai;

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (auto at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

TEST(CompileCli, UnknownSocExitsTwoNamingValidChoices) {
  const auto r = run_genai({"compile", "--soc_model", "SM9999", "--checkpoint", "m.gguf"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("SM9999"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("SM8650"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("SA8295"), std::string::npos) << r.err;
}

TEST(CompileCli, UnknownBackendExitsTwoNamingValidChoices) {
  const auto r = run_genai({"compile", "--soc_model", "SM8650", "--backend", "foo", "--checkpoint", "m.gguf"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--backend"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("htp, gpu, lpai"), std::string::npos) << r.err;
}

TEST(CompileCli, RejectedCombinationsExitTwo) {
  auto r = run_genai({"compile", "--soc_model", "SM8650", "--backend", "lpai", "--model_mode", "kv", "--checkpoint", "m.gguf"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("SM8850"), std::string::npos) << r.err;
  r = run_genai({"compile", "--soc_model", "SM8650", "--online_prepare", "--checkpoint", "m.gguf"});  // hybrid is the default mode
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--online_prepare"), std::string::npos) << r.err;
  r = run_genai({"compile", "--checkpoint", "m.gguf"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--soc_model"), std::string::npos) << r.err;
  r = run_genai({"compile", "--soc_model", "SM8650"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--checkpoint"), std::string::npos) << r.err;
}

TEST(CompileCli, PrintsResolvedOptionsThenReportsMissingStage) {
  const auto r = run_genai({"compile", "--soc_model", "sm8650", "--checkpoint", "m.gguf", "--enable_x86_64", "--max-seq-len", "128",
                            "--quant_recipe", "16a4w_block:32", "--json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("compilation stage not available in this build"), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["target"]["soc_model"], "SM8650");
  EXPECT_EQ(j["target"]["htp_arch"], "V75");
  EXPECT_EQ(j["qnn_options"]["shared_buffer"], false);
  EXPECT_EQ(j["qnn_options"]["use_weight_sharing"], false);
  EXPECT_EQ(j["qnn_options"]["use_mha2sha"], true);
  EXPECT_EQ(j["options"]["max_seq_len"], 128);
  EXPECT_EQ(j["derived"]["max_context_len"], 128);
  EXPECT_EQ(j["derived"]["quant_recipe"]["block_size"], 32);
}

TEST(CompileCli, ConfigFileAndCommandLine) {
  genai::testing::TempDir dir;
  std::ofstream(dir.file("c.json")) << R"({"soc_model": "SM8750", "checkpoint": "m.gguf", "max_seq_len": 64, "build_folder": "b"})";
  auto r = run_genai({"compile", "--config_file", dir.file("c.json"), "--max_seq_len", "96", "--build_folder", "c", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["target"]["soc_model"], "SM8750");
  EXPECT_EQ(j["options"]["max_seq_len"], 96);
  EXPECT_EQ(j["ignored_options"], nlohmann::json::array({"build_folder"}));
  // Reported once although set twice.
  EXPECT_EQ(count(r.err, "--build_folder has no native meaning"), 1u) << r.err;

  std::ofstream(dir.file("bad.json")) << R"({"soc_model": "SM8750", "frobnicate": true})";
  r = run_genai({"compile", "--config_file", dir.file("bad.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("frobnicate"), std::string::npos) << r.err;
}

TEST(CompileCli, HiddenOptionsAreAcceptedAndReported) {
  const auto r = run_genai({"compile", "--soc_model", "SM8650", "--checkpoint", "m.gguf", "--temperature", "0.5"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("--temperature has no effect for `genai compile`"), std::string::npos) << r.err;
}

TEST(PipelineCli, ListsEveryMissingField) {
  const auto r = run_genai({"pipeline", "--max_seq_len", "128"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("model_name (use .with_model()), soc_model (use .with_soc()), prompt (use .with_prompt())"),
            std::string::npos)
      << r.err;
}

TEST(PipelineCli, ValidatesThenReportsMissingStage) {
  auto r = run_genai({"pipeline", "--soc_model", "SM8650", "--checkpoint", "m.gguf", "--prompt", "Hi", "there"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("SM8650"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("compilation stage not available in this build"), std::string::npos) << r.err;
  r = run_genai({"pipeline", "--soc_model", "SM8650", "--compile_only", "--pre_gen_pte", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--pre_gen_pte"), std::string::npos) << r.err;
  r = run_genai({"pipeline", "--soc_model", "SM8650", "--prompt", "  "});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("prompt list cannot be empty"), std::string::npos) << r.err;
}

TEST(TargetsCli, ListsSocsAndBackends) {
  auto r = run_genai({"targets", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["socs"].size(), 20u);
  EXPECT_EQ(j["socs"][7]["name"], "SM8650");
  EXPECT_EQ(j["socs"][7]["chipset_id"], 57);
  EXPECT_EQ(j["socs"][7]["htp_arch"], "V75");
  EXPECT_EQ(j["socs"][9]["lpai"], "V6");
  EXPECT_EQ(j["backend_types"], nlohmann::json::array({"undefined", "gpu", "htp", "dsp", "lpai"}));
  r = run_genai({"targets"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("SM8650"), std::string::npos);
}

}  // namespace
}  // namespace genai::options
