// `genai eval` end to end on a synthesized checkpoint: JSON shape, the decode_qdq file round
// trip through --qdq, and bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

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
                            "--eval_max_tokens", "480", "--calib_len", "24", "--gen_tokens", "8", "--artifact", dir_.path(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["recipe"], "16a8w");
  // Measured on this model (tiny, seed 3, 16a8w, 10 windows of 48 tokens of the default text):
  // logits SQNR 27.1 dB, perplexity 522.6 float / 522.8 quantized (a random model: about its
  // vocabulary of 512), top-1 450 / 470, greedy 8 / 8.
  EXPECT_EQ(j["eval_tokens"], 470);
  EXPECT_EQ(j["eval_windows"], 10);
  EXPECT_GT(j["sqnr_db"].get<double>(), 24.0);
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
                                "--max_context_len", "48", "--eval_max_tokens", "480", "--gen_tokens", "8", "--json"});
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

// The techniques through the CLI: the compiled program and the QDQ reference give the same
// numbers with rotation, range search and a recipe file; the sensitivity analysis ranks every
// layer and the head; the report is written; rotation keeps the float model's perplexity.
TEST_F(CmdEval, TechniquesKeepProgramsEqualToTheReference) {
  const std::string recipe = dir_.file("recipe.json");
  std::ofstream(recipe) << R"({"recipe": "16a4w_block:32", "overrides": ["layers\\.0\\..*=16a8w"]})";
  const std::vector<std::string> common{"eval", "--checkpoint", checkpoint_, "--max_context_len", "48",
                                        "--eval_max_tokens", "192", "--calib_len", "24", "--eval_methods",
                                        "sqnr_eval", "--json", "--quant_recipe_file", recipe,
                                        "--seq_mse_candidates", "8", "--rotation", "hadamard"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = common;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  const std::string report = dir_.file("report.html");
  const auto p = run_genai(with({"--eval_on", "program", "--per_layer", "--report", report}));
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const auto q = run_genai(with({"--eval_on", "qdq"}));
  ASSERT_EQ(q.exit_code, 0) << q.err;
  const auto jp = nlohmann::json::parse(p.out), jq = nlohmann::json::parse(q.out);
  EXPECT_EQ(jp["eval_tokens"], 188);  // 4 windows of 48 tokens, 47 predictions each
  EXPECT_DOUBLE_EQ(jp["sqnr_db"].get<double>(), jq["sqnr_db"].get<double>());
  EXPECT_DOUBLE_EQ(jp["perplexity"]["quantized"].get<double>(), jq["perplexity"]["quantized"].get<double>());
  EXPECT_EQ(jp["top1_agreement"], jq["top1_agreement"]);
  EXPECT_EQ(jp["overrides"].front(), "layers\\.0\\..*=16a8w");
  // One row per layer and the head, worst first.
  const auto& sens = jp["sensitivity"];
  ASSERT_EQ(sens.size(), 3u);  // the tiny model's 2 layers and lm_head
  for (size_t i = 1; i < sens.size(); ++i) EXPECT_LE(sens[i - 1]["sqnr_db"].get<double>(), sens[i]["sqnr_db"].get<double>());
  std::ifstream in(report);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_NE(page.find("id=\"sensitivity\""), std::string::npos);
  // The rotation does not change the float model's perplexity (same function, other rounding).
  const auto plain = run_genai({"eval", "--checkpoint", checkpoint_, "--max_context_len", "48", "--eval_max_tokens",
                                "192", "--calib_len", "24", "--eval_methods", "sqnr_eval", "--json"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const double f0 = nlohmann::json::parse(plain.out)["perplexity"]["float"].get<double>();
  EXPECT_NEAR(jp["perplexity"]["float"].get<double>(), f0, 1e-4 * f0);
}

TEST_F(CmdEval, BadRecipeInputNamesIt) {
  auto r = run_genai({"eval", "--checkpoint", checkpoint_, "--quant_override", "layers\\.9\\..*=16a8w",
                      "--eval_max_tokens", "96"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("layers\\.9\\..*=16a8w"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("matches no tensor"), std::string::npos) << r.err;
  const std::string bad = dir_.file("bad.json");
  std::ofstream(bad) << R"({"recipe": "16a4w", "override": []})";
  r = run_genai({"eval", "--checkpoint", checkpoint_, "--quant_recipe_file", bad});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'override'"), std::string::npos) << r.err;
  r = run_genai({"eval", "--checkpoint", checkpoint_, "--rotation", "givens"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_genai({"eval", "--checkpoint", checkpoint_, "-E", "2,32"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("valid bit widths: 4, 8"), std::string::npos) << r.err;
  r = run_genai({"eval", "--checkpoint", checkpoint_, "-E", "4,7", "--eval_max_tokens", "96"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("model.embed_tokens.weight"), std::string::npos) << r.err;
  r = run_genai({"eval", "--checkpoint", checkpoint_, "--eval_text", dir_.file("absent.txt")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("absent.txt"), std::string::npos) << r.err;
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
