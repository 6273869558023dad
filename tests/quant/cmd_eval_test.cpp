// `genai eval` end to end on a synthesized checkpoint: JSON shape, the decode_qdq file round
// trip through --qdq, and bad input.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace genai::testing {
namespace {

class CmdEval : public ::testing::Test {
 protected:
  void SetUp() override {
    checkpoint_ = dir_.file("tiny.gguf");
    const auto r = run_genai({"synth", "--shape", "tiny", "--format", "gguf", "--seed", "3", "--out", checkpoint_});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  TempDir dir_;
  std::string checkpoint_;
};

TEST_F(CmdEval, JsonReportAndQdqFileAgree) {
  const auto r = run_genai({"eval", "--checkpoint", checkpoint_, "--quant_recipe", "16a8w", "--max_context_len", "48",
                            "--calib_len", "24", "--gen_tokens", "8", "--artifact", dir_.path(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["recipe"], "16a8w");
  // Measured on this model (tiny, seed 3, 16a8w): logits SQNR 32.3 dB, perplexity 506.6 float /
  // 506.8 quantized (a random model: about its vocabulary of 512), top-1 45 / 47, greedy 8 / 8.
  EXPECT_GT(j["sqnr_db"].get<double>(), 28.0);
  ASSERT_FALSE(j["per_layer"].empty());
  const auto& pl = j["per_layer"];
  for (size_t i = 1; i < pl.size(); ++i) EXPECT_LE(pl[i - 1]["sqnr_db"].get<double>(), pl[i]["sqnr_db"].get<double>());
  const double ppl_float = j["perplexity"]["float"].get<double>(), ppl_quant = j["perplexity"]["quantized"].get<double>();
  EXPECT_GT(ppl_float, 400.0);
  EXPECT_LT(ppl_float, 600.0);
  EXPECT_NEAR(ppl_quant, ppl_float, 0.01 * ppl_float);
  EXPECT_GE(j["top1_agreement"]["agreed"].get<double>(), 0.85 * j["top1_agreement"]["tokens"].get<double>());
  EXPECT_EQ(j["greedy_agreement"]["tokens"], 8);
  EXPECT_GE(j["greedy_agreement"]["agreed"].get<int>(), 7);
  EXPECT_LE(j["greedy_agreement"]["agreed"].get<int>(), 8);
  ASSERT_TRUE(std::filesystem::exists(dir_.file("decode_qdq.json")));
  // Evaluating the written encodings gives the same numbers (calibration is deterministic).
  const auto again = run_genai({"eval", "--checkpoint", checkpoint_, "--qdq", dir_.file("decode_qdq.json"),
                                "--max_context_len", "48", "--gen_tokens", "8", "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto k = nlohmann::json::parse(again.out);
  EXPECT_DOUBLE_EQ(k["sqnr_db"].get<double>(), j["sqnr_db"].get<double>());
  EXPECT_EQ(k["greedy_agreement"], j["greedy_agreement"]);
  // Only one method when asked.
  const auto only = run_genai({"eval", "--checkpoint", checkpoint_, "--quant_recipe", "fp16", "--max_context_len", "32",
                               "--eval_methods", "prompt_eval", "--gen_tokens", "4", "--json"});
  ASSERT_EQ(only.exit_code, 0) << only.err;
  const auto o = nlohmann::json::parse(only.out);
  EXPECT_FALSE(o.contains("sqnr_db"));
  EXPECT_EQ(o["greedy_agreement"]["agreed"], 4);  // fp16 does not change greedy tokens on this model
  // -F/--use_fp16 is upstream's spelling of the same recipe.
  const auto f = run_genai({"eval", "--checkpoint", checkpoint_, "-F", "--max_context_len", "32", "--eval_methods",
                            "prompt_eval", "--gen_tokens", "4", "--json"});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(nlohmann::json::parse(f.out)["greedy_agreement"], o["greedy_agreement"]);
  const auto clash = run_genai({"eval", "--checkpoint", checkpoint_, "-F", "--quant_recipe", "16a8w"});
  EXPECT_EQ(clash.exit_code, 2);
  EXPECT_NE(clash.err.find("--use_fp16"), std::string::npos) << clash.err;
}

TEST_F(CmdEval, BadInputIsExitCode2) {
  auto r = run_genai({"eval", "--checkpoint", checkpoint_, "--quant_recipe", "16a5w"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("16a4w_block"), std::string::npos) << r.err;
  r = run_genai({"eval", "--checkpoint", checkpoint_, "--eval_methods", "bleu"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("sqnr_eval"), std::string::npos) << r.err;
  r = run_genai({"eval", "--checkpoint", checkpoint_, "--qdq", dir_.file("missing.json")});
  EXPECT_EQ(r.exit_code, 2);
  r = run_genai({"eval", "--checkpoint", checkpoint_, "--calib_range", "p99"});
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace genai::testing
