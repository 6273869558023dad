// `genai run` and `genai bench` end to end on a synthetic checkpoint written by `genai synth`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kernels/kernel_mode.h"
#include "support/cli_runner.h"
#include "support/test_requirements.h"

namespace genai {
namespace {

using testing::run_genai;

class CliRunBench : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir;
    const auto r = run_genai({"synth", "--shape", "tiny", "--format", "gguf", "--seed", "2", "--out", model()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string model() { return dir_->file("tiny.gguf"); }
  static testing::TempDir* dir_;
};
testing::TempDir* CliRunBench::dir_ = nullptr;

TEST_F(CliRunBench, RunJsonIsGreedyReproducibleAndComplete) {
  const std::vector<std::string> args{"run",  "--checkpoint",       model(), "--prompt", "Once upon a time",
                                      "--temperature", "0", "--max_new_tokens", "6", "--json", "--threads", "1"};
  const auto a = run_genai(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto j = nlohmann::json::parse(a.out);
  for (const char* key : {"text", "tokens", "prompt_tokens", "stats", "peak_rss_mb"}) EXPECT_TRUE(j.contains(key)) << key;
  for (const char* key : {"prompt_tokens", "generated_tokens", "load_ms", "ttft_ms", "prefill_tok_s", "decode_tok_s"})
    EXPECT_TRUE(j["stats"].contains(key)) << key;
  EXPECT_GT(j["prompt_tokens"].get<int>(), 0);
  EXPECT_LE(j["tokens"].size(), 6u);
  EXPECT_EQ(j["stats"]["generated_tokens"].get<size_t>(), j["tokens"].size());
  EXPECT_GT(j["peak_rss_mb"].get<double>(), 0.0);
  // The kernels that computed: this CPU's Highway target, or the scalar build when forced.
  EXPECT_EQ(j.value("kernels", ""), std::string(kernels::simd_target_name()));
  auto scalar_args = args;
  scalar_args.push_back("--scalar_kernels");
  const auto b = run_genai(scalar_args);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto bj = nlohmann::json::parse(b.out);
  EXPECT_EQ(bj["tokens"], j["tokens"]);
  EXPECT_EQ(bj.value("kernels", ""), "scalar");
}

// The static-graph path (issue "Static decoder graphs", acceptance 3): the same text as the float
// reference, in hybrid mode with prompts shorter and longer than AR-N, and in kv mode.
TEST_F(CliRunBench, RunThroughStaticGraphsPrintsTheFloatText) {
  const std::string long_prompt = "The quick brown fox jumps over the lazy dog while the cat sleeps by the warm fire";
  for (const std::string& prompt : {std::string("Once upon a time"), long_prompt}) {
    const std::vector<std::string> base{"run", "--checkpoint", model(), "--prompt", prompt, "--temperature", "0",
                                        "--max_new_tokens", "12", "--json", "--threads", "1"};
    const auto ref = run_genai(base);
    ASSERT_EQ(ref.exit_code, 0) << ref.err;
    const auto ref_json = nlohmann::json::parse(ref.out);
    ASSERT_GT(ref_json["tokens"].size(), 0u);
    for (const std::vector<std::string>& extra :
         {std::vector<std::string>{"--model_mode", "hybrid", "--prefill_ar_len", "8", "--max_context_len", "96"},
          std::vector<std::string>{"--model_mode", "kv", "--max_context_len", "96"}}) {
      auto args = base;
      args.insert(args.end(), extra.begin(), extra.end());
      const auto g = run_genai(args);
      ASSERT_EQ(g.exit_code, 0) << g.err;
      const auto j = nlohmann::json::parse(g.out);
      EXPECT_EQ(j["tokens"], ref_json["tokens"]) << extra[1] << " prompt: " << prompt;
      EXPECT_EQ(j["text"], ref_json["text"]);
    }
  }
}

TEST_F(CliRunBench, GraphShapeOptionsWithoutModelModeAreRejected) {
  const auto r = run_genai({"run", "--checkpoint", model(), "--prompt", "x", "--prefill_ar_len", "8"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--model_mode"), std::string::npos) << r.err;
}

TEST_F(CliRunBench, RunStreamsTextWithoutJson) {
  const auto r = run_genai({"run", "--checkpoint", model(), "--prompt", "Hello", "--max_new_tokens", "4", "--seed", "9"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(r.out.empty());
  EXPECT_NE(r.err.find("prefill"), std::string::npos) << r.err;  // stats on stderr
}

TEST_F(CliRunBench, RunRejectsBadInputWithExitCode2) {
  auto r = run_genai({"run", "--checkpoint", model(), "--prompt", "x", "--temperature", "-1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--temperature"), std::string::npos) << r.err;
  r = run_genai({"run", "--checkpoint", model(), "--prompt", "x", "--top_p", "0"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_genai({"run", "--checkpoint", dir_->file("missing.gguf"), "--prompt", "x"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_genai({"run", "--checkpoint", model()});  // --prompt is required
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(CliRunBench, RunPromptLongerThanContextIsInputError) {
  std::string prompt;
  for (int i = 0; i < 3000; ++i) prompt += "word ";
  const auto r = run_genai({"run", "--checkpoint", model(), "--prompt", prompt, "--max_new_tokens", "2"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("context"), std::string::npos) << r.err;
}

TEST_F(CliRunBench, BenchPrintsLlamaBenchRows) {
  auto r = run_genai({"bench", "--checkpoint", model(), "--pp", "16", "--tg", "8", "--reps", "2", "--threads", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| model | size | params | backend | threads | test | t/s |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| pp16 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| tg8 |"), std::string::npos) << r.out;
  r = run_genai({"bench", "--checkpoint", model(), "--pp", "16", "--tg", "0", "--reps", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["test"], "pp16");
  EXPECT_GT(j["results"][0]["mean"].get<double>(), 0.0);
  r = run_genai({"bench", "--checkpoint", model(), "--pp", "100000", "--reps", "1"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

// The embedded default model answers greedily with the tokens transformers' LlamaForCausalLM
// produced from the same dequantized Q4_1 weights and the same ChatML prompt (37 tokens):
// "The capital of France is Paris." then <|im_end|>.
TEST(CliRunDefaultModel, SlowGreedyAnswerMatchesTransformers) {
  const std::string model = testing::default_model_path();
  GENAI_REQUIRE_AVAILABLE(!model.empty(), "the default model (scripts/fetch_default_model.sh)");
  const auto r = run_genai({"run", "--checkpoint", model, "--prompt", "What is the capital of France?", "--temperature",
                            "0", "--max_new_tokens", "48", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["prompt_tokens"], 37);
  EXPECT_EQ(j["tokens"], (std::vector<int>{504, 3575, 282, 4649, 314, 7042, 30}));
  EXPECT_EQ(j["text"], "The capital of France is Paris.");
  EXPECT_EQ(j["stop_reason"], "stop_token");
}

}  // namespace
}  // namespace genai
