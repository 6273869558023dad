// `genai graph` end to end on a synthesized checkpoint.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace genai {
namespace {

using testing::run_genai;

class CmdGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto r = run_genai({"synth", "--shape", "tiny", "--format", "gguf", "--seed", "1", "--out", checkpoint_});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  testing::TempDir dir_;
  std::string checkpoint_ = dir_.file("tiny.gguf");
};

TEST_F(CmdGraph, PrintsPrefillGraphAsJsonWithUpstreamSignature) {
  const auto r = run_genai({"graph", "--checkpoint", checkpoint_, "--graph", "prefill_forward", "--model_mode", "hybrid",
                            "--max_context_len", "64", "--prefill_ar_len", "16", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["name"], "prefill_forward");
  EXPECT_EQ(j["ar_len"], 16);
  EXPECT_EQ(j["inputs"][0]["name"], "tokens");
  EXPECT_EQ(j["inputs"][0]["dtype"], "int32");
  EXPECT_EQ(j["inputs"][1]["name"], "atten_mask");
  EXPECT_EQ(j["inputs"][1]["shape"][2], 16);
  EXPECT_EQ(j["inputs"][1]["shape"][3], 64);
  EXPECT_EQ(j["inputs"][3]["name"], "k_cache_0");
  EXPECT_EQ(j["inputs"][3]["shape"][3], 48);
  EXPECT_EQ(j["outputs"][0]["name"], "logits");
  EXPECT_FALSE(j["ops"].empty());
}

TEST_F(CmdGraph, TextDumpIsOneOpPerLineAndStable) {
  const std::vector<std::string> args{"graph", "--checkpoint", checkpoint_, "--model_mode", "kv", "--max_context_len", "32"};
  const auto a = run_genai(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out.rfind("graph kv_forward (", 0), 0u) << a.out.substr(0, 200);
  EXPECT_NE(a.out.find("= linear(%layers.0.input_norm.out, %model.layers.0.self_attn.q_proj.weight"), std::string::npos);
  EXPECT_NE(a.out.find("  output   logits = %lm_head.out\n"), std::string::npos);
  EXPECT_EQ(run_genai(args).out, a.out);
  const auto calib = run_genai({"graph", "--checkpoint", checkpoint_, "--graph", "calibration", "--max_context_len", "32"});
  ASSERT_EQ(calib.exit_code, 0) << calib.err;
  EXPECT_NE(calib.out.find("  input    %atten_mask : float32[1, 1, 32, 32]\n"), std::string::npos);
  EXPECT_EQ(calib.out.find("k_cache_0"), std::string::npos);
}

TEST_F(CmdGraph, BadOptionsExitTwoNamingTheChoices) {
  auto r = run_genai({"graph", "--checkpoint", checkpoint_, "--graph", "decode"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("kv_forward, prefill_forward, calibration"), std::string::npos) << r.err;
  r = run_genai({"graph", "--checkpoint", checkpoint_, "--graph", "prefill_forward", "--model_mode", "kv"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_genai({"graph", "--checkpoint", checkpoint_, "--model_mode", "lookahead"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("valid: kv, hybrid"), std::string::npos) << r.err;
  r = run_genai({"graph", "--checkpoint", checkpoint_, "--max_context_len", "16", "--prefill_ar_len", "32"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--prefill_ar_len"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace genai
