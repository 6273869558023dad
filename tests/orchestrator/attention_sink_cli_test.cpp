// --use_attention_sink end to end: compiled into the manifest by `genai pipeline`, honoured by
// `genai run -a` far past the context with plain decoding's tokens until the first eviction, and
// tasks_eval over --max_seq_len windows; on the default model (long label) the perplexity of a
// long text with the sink against windows of the context without it.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "support/cli_json.h"
#include "support/cli_runner.h"
#include "support/test_requirements.h"

namespace genai::testing {
namespace {

TEST(AttentionSinkCli, RunsFourContextsPastTheContextWithPlainTokensUntilTheFirstEviction) {
  TempDir dir;
  const std::string model = dir.file("s.gguf"), sink = dir.file("sink"), plain = dir.file("plain");
  // Seed 4: a random model that does not sample its stop token within 256 tokens of "Once".
  ASSERT_EQ(run_genai({"synth", "--shape", "tiny", "--format", "gguf", "--seed", "4", "--out", model}).exit_code, 0);
  const std::vector<std::string> shape = {"--max_context_len", "64", "--prefill_ar_len", "16"};
  auto compile = [&](const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> a = {"pipeline", "--checkpoint", model, "--soc_model", "SM8650", "--lowering", "genai", "--compile_only", "-a", out};
    a.insert(a.end(), shape.begin(), shape.end());
    a.insert(a.end(), extra.begin(), extra.end());
    const CliResult r = run_genai(a);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  };
  compile(sink, {"--max_seq_len", "256", "--use_attention_sink", "4,16"});
  compile(plain, {"--max_seq_len", "64"});
  const std::vector<std::string> gen = {"--prompt", "Once", "--temperature", "0", "--max_new_tokens", "256", "--json"};
  std::vector<std::string> a = {"run", "-a", sink};
  a.insert(a.end(), gen.begin(), gen.end());
  const nlohmann::json long_run = run_genai_json(a);  // the sink comes from the manifest
  a = {"run", "-a", plain};
  a.insert(a.end(), gen.begin(), gen.end());
  const nlohmann::json plain_run = run_genai_json(a);
  ASSERT_TRUE(long_run.contains("tokens") && plain_run.contains("tokens"));
  EXPECT_EQ(long_run["tokens"].size(), 256u) << long_run["stop_reason"];
  EXPECT_GE(long_run["stats"]["evictions"].get<int64_t>(), 4);
  // Plain decoding stops at the context; its last call ran on a full cache, where the sink had
  // already evicted: every earlier token is the same.
  const auto& want = plain_run["tokens"];
  ASSERT_GT(want.size(), 8u);
  ASSERT_LT(want.size(), 64u);
  for (size_t i = 0; i + 1 < want.size(); ++i) EXPECT_EQ(long_run["tokens"][i], want[i]) << "token " << i;

  // tasks_eval with the sink: windows of --max_seq_len through every side.
  const nlohmann::json e = run_genai_json({"run", "-a", sink, "--checkpoint", model, "--prompt", "Hi", "--max_new_tokens", "1",
                                     "--eval_methods", "tasks_eval", "--eval_limit", "1", "--json"});
  const nlohmann::json& t = e["eval"]["tasks_eval"]["opticks"];
  EXPECT_EQ(t["attention_sink"], "4,16") << e.dump();
  EXPECT_EQ(t["window_tokens"], 256) << e.dump();
  EXPECT_TRUE(std::isfinite(t["perplexity_program"].get<double>())) << e.dump();
  EXPECT_TRUE(std::isfinite(t["perplexity_float"].get<double>())) << e.dump();

  // What the programs cannot honour is bad input naming the option.
  expect_exit2({"run", "-a", plain, "--prompt", "Hi", "--use_attention_sink", "4,8"},
               {"--use_attention_sink 4,8", "prefill_forward"});
}

// The acceptance's perplexity: 2 x 1024 tokens of the default text through a 256-token context
// with the sink, against the same tokens in windows of 256 without it. A sink whose kept keys
// sat at the wrong rotation would lose to the plain windows.
TEST(AttentionSinkCli, LongDefaultModelPerplexityWithTheSinkBeatsContextWindows) {
  const std::string model = default_model_path();
  GENAI_REQUIRE_AVAILABLE(!model.empty(), "the default model (scripts/fetch_default_model.sh)");
  TempDir dir;
  auto ppl = [&](const std::string& out, std::vector<std::string> extra, const char* limit) {
    std::vector<std::string> a = {"pipeline", "--checkpoint", model, "--soc_model", "SM8750", "--enable_x86_64",
                                  "-a", out, "--max_context_len", "256", "--prefill_ar_len", "32", "--prompt", "Hi",
                                  "--max_new_tokens", "1", "--eval_methods", "tasks_eval", "--eval_limit", limit, "--json"};
    a.insert(a.end(), extra.begin(), extra.end());
    const nlohmann::json j = run_genai_json(a);
    return j["eval"]["tasks_eval"]["opticks"];
  };
  const nlohmann::json with = ppl(dir.file("sink"), {"--max_seq_len", "1024", "--use_attention_sink", "4,32"}, "2");
  const nlohmann::json without = ppl(dir.file("plain"), {"--max_seq_len", "256"}, "8");
  EXPECT_EQ(with["window_tokens"], 1024);
  EXPECT_EQ(without["window_tokens"], 256);
  for (const char* side : {"perplexity_float", "perplexity_qdq", "perplexity_program"}) {
    EXPECT_LT(with[side].get<double>(), without[side].get<double>()) << side << "\n" << with << "\n" << without;
  }
}

}  // namespace
}  // namespace genai::testing
