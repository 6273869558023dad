// --eval_methods tasks_eval / sqnr_eval through `genai pipeline` and `genai run -a` on a
// checkpoint written by `genai synth`: the three perplexities in one report (the compiled program
// equal to the QDQ reference), the prompt's logits SQNR, the prebuilt-program paths with and
// without the float model, and the bad combinations (exit 2 naming the options).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace genai::testing {
namespace {

constexpr const char* kOpticks = "/usr/share/go-1.19/src/testdata/Isaac.Newton-Opticks.txt";

class EvalMethods : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const auto r = run_genai({"synth", "--shape", "tiny", "--format", "gguf", "--seed", "4", "--out", model()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!std::filesystem::exists(kOpticks)) GTEST_SKIP() << kOpticks << " missing (scripts/install_deps.sh)";
  }
  static std::string model() { return dir_->file("tiny.gguf"); }
  static std::vector<std::string> pipeline(const std::string& artifact, std::vector<std::string> extra) {
    std::vector<std::string> a = {"pipeline", "--checkpoint", model(), "--soc_model", "SM8750", "--enable_x86_64",
                                  "--prompt", "Hello there, how are you", "--max_seq_len", "64", "--prefill_ar_len",
                                  "16", "--max_new_tokens", "3", "--temperature", "0", "-a", artifact};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  // The figures of the stage's "tasks_eval <task>: ..." log line (n/a: absent side).
  static std::vector<std::string> logged_perplexities(const std::string& err, const std::string& task) {
    const std::regex line("tasks_eval " + task + R"(: .*perplexity float (\S+), QDQ (\S+), program (\S+))");
    std::smatch m;
    if (!std::regex_search(err, m, line)) return {};
    return {m[1], m[2], m[3]};
  }
  static TempDir* dir_;
};
TempDir* EvalMethods::dir_ = nullptr;

// Measured (tiny, seed 4, 16a4w, 2 windows of 64 tokens of Opticks): perplexity float 521.35,
// QDQ = program 522.46 (a random model: about its vocabulary of 512); prompt SQNR 17.5 dB.
TEST_F(EvalMethods, PipelineReportsFloatQdqAndProgramPerplexityAndPromptSqnr) {
  TempDir out;
  const auto r = run_genai(pipeline(out.path(), {"--eval_methods", "prompt_eval", "tasks_eval", "sqnr_eval",
                                                 "--eval_tasks", "opticks", "--eval_limit", "2", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& t = j["eval"]["tasks_eval"]["opticks"];
  ASSERT_TRUE(t.is_object()) << j["eval"].dump();
  EXPECT_EQ(t["text"], kOpticks);
  EXPECT_EQ(t["windows"], 2);
  EXPECT_EQ(t["window_tokens"], 64);  // the programs' context (--max_seq_len 64)
  EXPECT_EQ(t["eval_tokens"], 126);
  for (const char* side : {"perplexity_float", "perplexity_qdq", "perplexity_program"}) {
    ASSERT_TRUE(t[side].is_number()) << side << ": " << t.dump();
    EXPECT_TRUE(std::isfinite(t[side].get<double>())) << side;
  }
  const double f = t["perplexity_float"].get<double>(), q = t["perplexity_qdq"].get<double>(),
               p = t["perplexity_program"].get<double>();
  EXPECT_GT(f, 300.0);
  EXPECT_LT(f, 800.0);
  EXPECT_NEAR(q, f, 0.05 * f);
  EXPECT_NE(q, f);  // the quantized side is another model
  // The compiled program equals the QDQ reference bit for bit.
  EXPECT_DOUBLE_EQ(p, q);
  EXPECT_EQ(j["eval"]["qdq_encodings"], "quantization");
  const auto& s = j["eval"]["sqnr_eval"];
  ASSERT_TRUE(s.is_object()) << j["eval"].dump();
  EXPECT_GT(s["prompt_tokens"].get<int>(), 1);
  ASSERT_TRUE(s["sqnr_db_program"].is_number()) << s.dump();
  const double db = s["sqnr_db_program"].get<double>();
  EXPECT_TRUE(std::isfinite(db));
  EXPECT_GT(db, 5.0);
  EXPECT_LT(db, 60.0);
  EXPECT_DOUBLE_EQ(db, s["sqnr_db_qdq"].get<double>());
  EXPECT_EQ(s["top1_agreed_program"], s["top1_agreed_qdq"]);
  // prompt_eval still generates; the quantization stage's short check stays next to these.
  EXPECT_FALSE(j["tokens"].empty());
  EXPECT_TRUE(j["eval"]["sqnr_db"].is_number());
  EXPECT_TRUE(j["stages"]["inference"]["eval"]["tasks_eval"].is_object());

  // The text summary says the same.
  TempDir text_out;
  const auto txt = run_genai(pipeline(text_out.path(), {"--eval_methods", "tasks_eval", "sqnr_eval", "--eval_limit", "2"}));
  ASSERT_EQ(txt.exit_code, 0) << txt.err;
  EXPECT_NE(txt.out.find("tasks_eval opticks: 2 window(s) of 64 tokens"), std::string::npos) << txt.out;
  EXPECT_NE(txt.out.find("sqnr_eval: logits SQNR vs float"), std::string::npos) << txt.out;
  const auto logged = logged_perplexities(txt.err, "opticks");
  ASSERT_EQ(logged.size(), 3u) << txt.err;
  EXPECT_EQ(logged[1], logged[2]);  // QDQ = program
}

// `genai run -a DIR`: the program's perplexity alone, or with --checkpoint the float model and the
// QDQ reference (decode_qdq.json next to the programs) too, on the same windows as the pipeline.
TEST_F(EvalMethods, RunOnPrebuiltProgramsWithAndWithoutTheFloatModel) {
  TempDir art;
  const auto built = run_genai(pipeline(art.path(), {"--eval_methods", "tasks_eval", "--eval_limit", "2", "--json"}));
  ASSERT_EQ(built.exit_code, 0) << built.err;
  const auto t = nlohmann::json::parse(built.out)["eval"]["tasks_eval"]["opticks"];
  const std::vector<std::string> run = {"run", "-a", art.path(), "--prompt", "Hello there", "--max_new_tokens", "2",
                                        "--temperature", "0", "--eval_methods", "tasks_eval", "--eval_limit", "2"};
  const auto alone = run_genai(run);
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  auto logged = logged_perplexities(alone.err, "opticks");
  ASSERT_EQ(logged.size(), 3u) << alone.err;
  EXPECT_EQ(logged[0], "n/a");
  EXPECT_EQ(logged[1], "n/a");
  EXPECT_NEAR(std::stod(logged[2]), t["perplexity_program"].get<double>(), 1e-3);

  std::vector<std::string> with = run;
  with.insert(with.end(), {"--checkpoint", model(), "--eval_methods", "tasks_eval", "sqnr_eval"});
  const auto both = run_genai(with);
  ASSERT_EQ(both.exit_code, 0) << both.err;
  logged = logged_perplexities(both.err, "opticks");
  ASSERT_EQ(logged.size(), 3u) << both.err;
  EXPECT_NEAR(std::stod(logged[0]), t["perplexity_float"].get<double>(), 1e-3);
  EXPECT_EQ(logged[1], logged[2]);
  EXPECT_NEAR(std::stod(logged[2]), t["perplexity_program"].get<double>(), 1e-3);
  EXPECT_NE(both.err.find("sqnr_eval: logits SQNR vs float"), std::string::npos) << both.err;
}

// A task given as a file: its windows, and one shorter than a window refused by name.
TEST_F(EvalMethods, TaskFilesAndTheirLength) {
  const std::string text = dir_->file("task.txt");
  {
    std::ifstream in(kOpticks);
    std::ofstream o(text);
    std::string line;
    for (int i = 0; i < 200 && std::getline(in, line); ++i) o << line << "\n";
  }
  TempDir out;
  const auto r = run_genai(pipeline(out.path(), {"--eval_methods", "tasks_eval", "--eval_tasks", text, "--eval_limit",
                                                 "1000", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& t = j["eval"]["tasks_eval"][text];
  EXPECT_GE(t["windows"].get<int>(), 1);
  EXPECT_LT(t["windows"].get<int>(), 1000);  // as many windows as the text holds
  EXPECT_NE(r.err.find("--eval_limit 1000"), std::string::npos) << r.err;
  EXPECT_DOUBLE_EQ(t["perplexity_program"].get<double>(), t["perplexity_qdq"].get<double>());

  const std::string tiny_text = dir_->file("short.txt");
  std::ofstream(tiny_text) << "Too short for a window.\n";
  TempDir out2;
  expect_exit2(pipeline(out2.path(), {"--eval_methods", "tasks_eval", "--eval_tasks", tiny_text}),
               {"--eval_tasks", "short.txt", "shorter than one window of 64 tokens"});
}

TEST_F(EvalMethods, BadCombinationsExit2NamingTheOptions) {
  TempDir out;
  expect_exit2(pipeline(out.path(), {"--eval_methods", "tasks_eval", "--eval_tasks", "wikitext"}),
               {"--eval_tasks", "wikitext", "valid names: opticks"});
  expect_exit2(pipeline(out.path(), {"--eval_methods", "tasks_eval", "--eval_limit", "0"}), {"--eval_limit", "got 0"});
  expect_exit2(pipeline(out.path(), {"--eval_methods", "tasks_eval", "--eval_limit", "-2"}), {"--eval_limit", "got -2"});
  expect_exit2(pipeline(out.path(), {"--eval_tasks", "opticks"}), {"--eval_tasks", "tasks_eval"});
  expect_exit2(pipeline(out.path(), {"--eval_limit", "3"}), {"--eval_limit", "tasks_eval"});
  expect_exit2(pipeline(out.path(), {"--eval_methods", "tasks_eval", "--compile_only"}),
               {"--eval_methods tasks_eval", "inference stage"});
  expect_exit2(pipeline(out.path(), {"--eval_methods", "bleu"}), {"--eval_methods", "tasks_eval", "sqnr_eval"});
  // Nothing was built by the refused runs.
  EXPECT_FALSE(std::filesystem::exists(out.file("text_decoder.pte")));
  // sqnr_eval on prebuilt programs needs the float model.
  TempDir art;
  ASSERT_EQ(run_genai(pipeline(art.path(), {"--compile_only"})).exit_code, 0);
  expect_exit2({"run", "-a", art.path(), "--prompt", "Hi", "--eval_methods", "sqnr_eval"},
               {"sqnr_eval", "--checkpoint"});
}

// Many windows: the figures stay equal over a long stretch of the text (label "long").
TEST_F(EvalMethods, LongManyWindowsKeepProgramEqualToTheReference) {
  TempDir out;
  const auto r = run_genai(pipeline(out.path(), {"--eval_methods", "tasks_eval", "--eval_limit", "200", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& t = j["eval"]["tasks_eval"]["opticks"];
  EXPECT_EQ(t["windows"], 200);
  EXPECT_EQ(t["eval_tokens"], 200 * 63);
  EXPECT_DOUBLE_EQ(t["perplexity_program"].get<double>(), t["perplexity_qdq"].get<double>());
  EXPECT_LT(t["perplexity_float"].get<double>(), 800.0);
}

}  // namespace
}  // namespace genai::testing
