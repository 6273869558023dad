// `genai run --pte FILE --tokenizer FILE`: a compiled program run without its artifact dir, as
// upstream's llama runner runs a .pte. The program alone (constant methods and method signatures)
// configures the runner: the greedy tokens equal those of `genai run -a DIR` on the same program,
// --json says there was no manifest, and what the runner cannot do without is an exit 2 naming it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pte/program_reader.h"
#include "pte/program_writer.h"
#include "support/cli_runner.h"

namespace genai {
namespace {

namespace fs = std::filesystem;
using testing::run_genai;

class LoneProgramRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir;
    auto r = run_genai({"synth", "--shape", "tiny", "--format", "gguf", "--seed", "3", "--out", dir_->file("tiny.gguf")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_genai({"compile", "--checkpoint", dir_->file("tiny.gguf"), "-a", art(), "--soc_model", "SM8650", "--lowering", "genai",
                   "--quant_recipe", "16a16w", "--max_seq_len", "96", "--prefill_ar_len", "16", "--threads", "2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The program alone, in a folder without manifest.json.
    fs::create_directories(dir_->file("lone"));
    fs::copy_file(art() + "/text_decoder.pte", lone());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string art() { return dir_->file("art"); }
  static std::string lone() { return dir_->file("lone") + "/text_decoder.pte"; }
  static std::string tokenizer() { return art() + "/tokenizer.json"; }

  static nlohmann::json run_json(std::vector<std::string> source, const std::string& prompt) {
    std::vector<std::string> args{"run"};
    args.insert(args.end(), source.begin(), source.end());
    for (const char* a : {"--temperature", "0", "--max_new_tokens", "16", "--json", "--threads", "1"}) args.push_back(a);
    args.push_back("--prompt");
    args.push_back(prompt);
    const auto r = run_genai(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
  }

  static testing::TempDir* dir_;
};
testing::TempDir* LoneProgramRun::dir_ = nullptr;

TEST_F(LoneProgramRun, GreedyTokensEqualTheArtifactDirRun) {
  // Shorter than AR-N, and several AR-N chunks.
  const std::string long_prompt = "The quick brown fox jumps over the lazy dog while the cat sleeps by the warm fire";
  for (const std::string& prompt : {std::string("Hi"), long_prompt}) {
    const auto dir = run_json({"-a", art()}, prompt);
    const auto alone = run_json({"--pte", lone(), "--tokenizer", tokenizer()}, prompt);
    ASSERT_TRUE(dir.contains("tokens") && alone.contains("tokens"));
    ASSERT_FALSE(dir["tokens"].empty());
    EXPECT_EQ(alone["tokens"], dir["tokens"]) << prompt;
    EXPECT_EQ(alone["text"], dir["text"]);
    EXPECT_EQ(alone["prompt_tokens"], dir["prompt_tokens"]);
    // Where the program came from, and what its load could check.
    EXPECT_TRUE(alone["program"]["manifest"].is_null()) << alone["program"];
    EXPECT_EQ(alone["program"]["verified"], nlohmann::json::array({"structure", "named_data_hashes"}));
    EXPECT_EQ(alone["program"]["soc_model"], "SM8650");  // from the compile specs
    EXPECT_EQ(dir["program"]["manifest"], art() + "/manifest.json");
    EXPECT_EQ(dir["program"]["verified"], nlohmann::json::array({"structure", "manifest_checksums"}));
  }
}

TEST_F(LoneProgramRun, AConfigFileGivesTheSameOptions) {
  const std::string config = dir_->file("run.json");
  std::ofstream(config) << nlohmann::json{{"pte", lone()}, {"tokenizer", tokenizer()}}.dump();
  const auto from_file = run_json({"--config_file", config}, "Hi");
  const auto from_cli = run_json({"--pte", lone(), "--tokenizer", tokenizer()}, "Hi");
  ASSERT_TRUE(from_file.contains("tokens"));
  EXPECT_EQ(from_file["tokens"], from_cli["tokens"]);
  EXPECT_TRUE(from_file["program"]["manifest"].is_null());
}

TEST_F(LoneProgramRun, WithoutATokenizerItIsExitCode2SayingItIsNeeded) {
  testing::expect_exit2({"run", "--pte", lone(), "--prompt", "x"}, {"--pte", "--tokenizer", "text_decoder.pte"});
}

TEST_F(LoneProgramRun, AnArtifactDirBesideItIsExitCode2NamingBoth) {
  testing::expect_exit2({"run", "--pte", lone(), "--tokenizer", tokenizer(), "-a", art(), "--prompt", "x"},
                        {"--pte", "-a/--artifact"});
  testing::expect_exit2({"run", "--pte", lone(), "--tokenizer", tokenizer(), "--pre_gen_pte", art(), "--prompt", "x"},
                        {"--pte", "--pre_gen_pte"});
}

TEST_F(LoneProgramRun, AFileThatIsNoProgramIsExitCode2NamingIt) {
  testing::expect_exit2({"run", "--pte", dir_->file("missing.pte"), "--tokenizer", tokenizer(), "--prompt", "x"},
                        {"--pte", "missing.pte"});
  testing::expect_exit2({"run", "--pte", tokenizer(), "--tokenizer", tokenizer(), "--prompt", "x"},
                        {"--pte", "tokenizer.json"});
}

// What the runner cannot do without, all at once: the decode method and the constant methods.
TEST_F(LoneProgramRun, AProgramWithoutKvForwardIsExitCode2NamingWhatIsMissing) {
  auto p = pte::read_program(lone()).program;
  for (auto& m : p.methods)
    if (m.name == "kv_forward") m.name = "decode_step";
  p.methods.erase(std::remove_if(p.methods.begin(), p.methods.end(),
                                 [](const pte::Method& m) { return m.name == "get_max_seq_len"; }),
                  p.methods.end());
  const std::string bad = dir_->file("lone") + "/no_kv_forward.pte";
  pte::write_program(bad, p);
  testing::expect_exit2({"run", "--pte", bad, "--tokenizer", tokenizer(), "--prompt", "x"},
                        {"no_kv_forward.pte", "method kv_forward", "get_max_seq_len"});
}

}  // namespace
}  // namespace genai
