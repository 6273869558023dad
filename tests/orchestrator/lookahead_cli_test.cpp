// --model_mode lookahead end to end: compiled into the programs by `genai pipeline`, run by the
// pipeline and by `genai run -a`, and the same greedy tokens as plain decoding of the same
// programs; the combinations that cannot work are exit 2 naming the options.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/cli_json.h"
#include "support/cli_runner.h"
#include "support/test_requirements.h"

namespace genai::testing {
namespace {

const std::vector<std::string> kTree = {"--model_mode", "lookahead", "--ngram", "3", "--window", "2", "--gcap", "2"};

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The pipeline compiles and runs lookahead; `genai run -a` reruns its programs with lookahead (as
// compiled) and plainly (--model_mode hybrid): the same tokens, fewer decode calls.
void expect_lookahead_equals_plain(const std::string& checkpoint, const std::string& prompt, int64_t tokens,
                                   const std::vector<std::string>& shape) {
  TempDir out;
  const std::string n = std::to_string(tokens);
  const nlohmann::json piped =
      run_genai_json(concat(concat({"pipeline", "--checkpoint", checkpoint, "--soc_model", "SM8650", "--enable_x86_64", "-a",
                              out.path(), "--prompt", prompt, "--temperature", "0", "--max_new_tokens", n, "--json"},
                             shape),
                      kTree));
  ASSERT_TRUE(piped.contains("tokens")) << piped.dump();
  ASSERT_FALSE(piped["tokens"].empty());
  const std::vector<std::string> rerun = {"run", "-a", out.path(), "--prompt", prompt, "--temperature", "0",
                                          "--max_new_tokens", n, "--json"};
  const nlohmann::json again = run_genai_json(rerun);
  const nlohmann::json plain = run_genai_json(concat(rerun, {"--model_mode", "hybrid"}));
  EXPECT_EQ(again["tokens"], piped["tokens"]);
  EXPECT_EQ(plain["tokens"], piped["tokens"]);
  EXPECT_GT(again["stats"]["lookahead_calls"].get<int64_t>(), 0);
  EXPECT_EQ(plain["stats"]["lookahead_calls"].get<int64_t>(), 0);
  // One call per step; verified n-grams give the rest.
  EXPECT_EQ(again["stats"]["decode_calls"].get<int64_t>() + again["stats"]["lookahead_accepted"].get<int64_t>(),
            plain["stats"]["decode_calls"].get<int64_t>());
}

TEST(LookaheadCli, PipelineAndRunGivePlainDecodingsTokensOnASyntheticModel) {
  TempDir dir;
  const std::string model = dir.file("s.gguf");
  ASSERT_EQ(run_genai({"synth", "--shape", "tiny", "--format", "gguf", "--seed", "2", "--out", model}).exit_code, 0);
  expect_lookahead_equals_plain(model, "Once upon a time, once upon a time", 48,
                                {"--max_seq_len", "128", "--prefill_ar_len", "16"});
}

// "Slow": the default model's compilation takes a minute under the sanitizers (label nosan).
TEST(LookaheadCli, SlowDefaultModelGivesPlainDecodingsTokens) {
  const std::string model = default_model_path();
  GENAI_REQUIRE_AVAILABLE(!model.empty(), "the default model (scripts/fetch_default_model.sh)");
  expect_lookahead_equals_plain(model, "List the numbers from one to twenty in words, separated by commas.", 48,
                                {"--max_seq_len", "256", "--prefill_ar_len", "32"});
}

TEST(LookaheadCli, CombinationsThatCannotWorkExitTwoNamingTheOptions) {
  TempDir dir;
  const std::string model = dir.file("s.gguf");
  ASSERT_EQ(run_genai({"synth", "--shape", "tiny", "--format", "gguf", "--seed", "2", "--out", model}).exit_code, 0);
  // A context no longer than the tree (default 64 rows).
  expect_exit2({"pipeline", "--checkpoint", model, "--soc_model", "SM8650", "--lowering", "genai", "--compile_only", "-a", dir.file("a"),
                "--model_mode", "lookahead", "--max_seq_len", "64", "--prefill_ar_len", "16"},
               {"--model_mode lookahead", "--max_context_len (64)", "--window", "--gcap", "--ngram"});
  expect_exit2({"pipeline", "--checkpoint", model, "--soc_model", "SM8650", "--lowering", "genai", "--compile_only", "-a", dir.file("b"),
                "--model_mode", "lookahead", "--ngram", "1", "--max_seq_len", "128", "--prefill_ar_len", "16"},
               {"--ngram >= 2"});
  // Programs compiled for plain decoding have a one-row kv_forward: no tree fits.
  const std::string plain = dir.file("plain");
  ASSERT_EQ(run_genai({"pipeline", "--checkpoint", model, "--soc_model", "SM8650", "--lowering", "genai", "--compile_only", "-a", plain,
                       "--max_seq_len", "64", "--prefill_ar_len", "16"})
                .exit_code,
            0);
  expect_exit2({"run", "-a", plain, "--prompt", "Hi", "--model_mode", "lookahead"},
               {"--model_mode lookahead", "--window", "--gcap", "--ngram", "kv_forward"});
}

}  // namespace
}  // namespace genai::testing
