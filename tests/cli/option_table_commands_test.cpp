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

// A tiny synthetic checkpoint the compile commands below really compile.
std::string tiny_checkpoint(const genai::testing::TempDir& dir) {
  const std::string path = dir.file("tiny.gguf");
  const auto r = run_genai({"synth", "--shape", "tiny", "--format", "gguf", "--seed", "3", "--out", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return path;
}

nlohmann::json kv_forward_qnn_options(const std::string& pte) {
  const auto r = run_genai({"inspect", "--json", pte});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& m : j["methods"])
    if (m["name"] == "kv_forward") return m["delegates"][0]["qnn_options"];
  ADD_FAILURE() << "no kv_forward in " << pte << ": " << r.out.substr(0, 400);
  return {};
}

TEST(CompileCli, ResolvedOptionsReachTheCompiledProgram) {
  genai::testing::TempDir dir;
  const auto r = run_genai({"compile", "--soc_model", "sm8650", "--checkpoint", tiny_checkpoint(dir), "--enable_x86_64",
                            "--max-seq-len", "128", "--quant_recipe", "16a4w_block:32", "-a", dir.file("out"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["program"], "16a4w_block:32");
  const auto q = kv_forward_qnn_options(j["artifacts"]["text_decoder"]);
  EXPECT_EQ(q["soc_model"], "SM8650");
  EXPECT_EQ(q["htp_arch"], "V75");
  EXPECT_EQ(q["shared_buffer"], false);  // x86 emulation
  EXPECT_EQ(q["use_weight_sharing"], false);
  EXPECT_EQ(q["use_mha2sha"], true);
}

TEST(CompileCli, ConfigFileAndCommandLine) {
  genai::testing::TempDir dir;
  const std::string ckpt = tiny_checkpoint(dir);
  std::ofstream(dir.file("c.json")) << R"({"soc_model": "SM8750", "checkpoint": ")" << ckpt
                                    << R"(", "max_seq_len": 64, "build_folder": "b"})";
  auto r = run_genai({"compile", "--config_file", dir.file("c.json"), "--max_seq_len", "96", "--build_folder", "c", "-a",
                      dir.file("out"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(kv_forward_qnn_options(j["artifacts"]["text_decoder"])["soc_model"], "SM8750");
  // Reported once although set twice.
  EXPECT_EQ(count(r.err, "--build_folder has no native meaning"), 1u) << r.err;

  std::ofstream(dir.file("bad.json")) << R"({"soc_model": "SM8750", "frobnicate": true})";
  r = run_genai({"compile", "--config_file", dir.file("bad.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("frobnicate"), std::string::npos) << r.err;
}

TEST(CompileCli, HiddenOptionsAreAcceptedAndReported) {
  genai::testing::TempDir dir;
  const auto r = run_genai({"compile", "--soc_model", "SM8650", "--checkpoint", tiny_checkpoint(dir), "-a", dir.file("out"),
                            "--temperature", "0.5"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--temperature has no effect for `genai compile`"), std::string::npos) << r.err;
}

TEST(PipelineCli, ListsEveryMissingField) {
  const auto r = run_genai({"pipeline", "--max_seq_len", "128"});
  EXPECT_EQ(r.exit_code, 2);
  // By option name (issue 14: no internal API names such as .with_soc()).
  EXPECT_NE(r.err.find("missing --checkpoint"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--soc_model (valid: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(", --prompt"), std::string::npos) << r.err;
}

TEST(PipelineCli, ValidatesThenRunsTheStages) {
  // Options resolve (the target summary is printed), then the first stage finds no checkpoint.
  auto r = run_genai({"pipeline", "--soc_model", "SM8650", "--checkpoint", "m.gguf", "--prompt", "Hi", "there"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.out.find("SM8650"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("[model_preparation] stage failed (caused by InputError: m.gguf: no such file"), std::string::npos)
      << r.err;
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
