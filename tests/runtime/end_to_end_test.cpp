// `genai compile` then `genai run -a` / `genai bench -a` on a synthetic model: the greedy tokens
// of the 16a16w program equal the QDQ reference (quant::QdqExecutor behind the decoder scheduler,
// same model and options) token for token, and bad artifact dirs are exit code 2 with a message.
// The same parity on the default model (SmolLM2-135M) runs in the release tree (label nosan).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "backends/register_builtin.h"
#include "llm/compiled_session.h"
#include "llm/generation.h"
#include "llm/graph_decoder.h"
#include "model/model.h"
#include "options/option_values.h"
#include "options/quant_recipe_option.h"
#include "orchestrator/option_readers.h"
#include "pte/program_reader.h"
#include "pte/program_writer.h"
#include "quant/qdq_executor.h"
#include "quant/quantize.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"
#include "support/test_requirements.h"
#include "tokenizer/synthetic_vocab.h"
#include "tokenizer/tokenizer_json.h"

namespace genai {
namespace {

namespace fs = std::filesystem;
using testing::run_genai;

// Options shared by `genai compile` and the in-process reference (same option table readers).
struct CompileCase {
  std::string recipe;
  int64_t max_seq_len;
  int64_t prefill_ar_len;
  std::vector<std::string> args(const std::string& checkpoint, const std::string& dir) const {
    return {"compile",        "--checkpoint", checkpoint, "-a", dir, "--soc_model", "SM8650", "--lowering", "genai", "--quant_recipe", recipe,
            "--max_seq_len",  std::to_string(max_seq_len), "--prefill_ar_len", std::to_string(prefill_ar_len),
            "--threads", "2"};
  }
};

// The scheduler over the QDQ executor of the model quantized exactly as `genai compile` does.
std::unique_ptr<DecoderScheduler> qdq_reference(std::shared_ptr<const Model> model, const CompileCase& c,
                                                const std::string& checkpoint) {
  options::OptionValues v(options::kCompileScope);
  v.set("checkpoint", checkpoint);
  v.set("max_seq_len", c.max_seq_len);
  v.set("prefill_ar_len", c.prefill_ar_len);
  v.set("quant_recipe", c.recipe);
  const auto go = orchestrator::decoder_graph_options(v);
  quant::QuantizeOptions qo;
  qo.mode = go.mode;
  qo.max_context_len = go.max_context_len;
  qo.prefill_ar_len = go.prefill_ar_len;
  qo.recipe = quant::recipe_from_choice(*options::resolve_quant_recipe(v));
  qo.calibration = orchestrator::calibration_options(v);
  auto q = quant::quantize_model(model, qo);
  return make_graph_session(std::make_unique<quant::QdqExecutor>(q.graphs, q.encodings));
}

std::vector<int32_t> greedy_tokens(DecoderSession& s, const Model& m, const std::string& prompt, int64_t n) {
  GenerationOptions o;
  o.prompts = {prompt};
  o.max_new_tokens = n;
  o.sampler.temperature = 0.0f;
  return generate(s, *m.tokenizer, m.chat_format, o).tokens;
}

nlohmann::json run_json(const std::string& dir, const std::string& prompt, int64_t n) {
  const auto r = run_genai({"run", "-a", dir, "--prompt", prompt, "--temperature", "0", "--max_new_tokens",
                            std::to_string(n), "--json", "--threads", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

class CompiledEndToEnd : public ::testing::Test {
 protected:
  static constexpr CompileCase k16a16w{"16a16w", 96, 16};
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir;
    auto r = run_genai({"synth", "--shape", "tiny", "--format", "gguf", "--seed", "3", "--out", checkpoint()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_genai(k16a16w.args(checkpoint(), art()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string checkpoint() { return dir_->file("tiny.gguf"); }
  static std::string art() { return dir_->file("art16"); }
  static testing::TempDir* dir_;
};
testing::TempDir* CompiledEndToEnd::dir_ = nullptr;

TEST_F(CompiledEndToEnd, GreedyTokensOf16a16wEqualTheQdqReference) {
  const auto model = std::make_shared<const Model>(load_model(checkpoint()));
  auto reference = qdq_reference(model, k16a16w, checkpoint());
  // Shorter than AR-N, and several AR-N chunks (the chat template adds its own tokens).
  const std::string long_prompt =
      "The quick brown fox jumps over the lazy dog while the cat sleeps by the warm fire and the rain falls";
  for (const std::string& prompt : {std::string("Hi"), long_prompt}) {
    reference->reset();
    const auto want = greedy_tokens(*reference, *model, prompt, 24);
    const auto j = run_json(art(), prompt, 24);
    ASSERT_TRUE(j.contains("tokens"));
    EXPECT_EQ(j["tokens"].get<std::vector<int32_t>>(), want) << prompt;
    EXPECT_GT(j["prompt_tokens"].get<int64_t>(), 0);
    for (const char* key : {"load_ms", "ttft_ms", "prefill_tok_s", "decode_tok_s"}) EXPECT_TRUE(j["stats"].contains(key));
    EXPECT_GT(j["peak_rss_mb"].get<double>(), 0.0);
  }
}

TEST_F(CompiledEndToEnd, LogitsStayWithinAFewStepsOfTheQdqReference) {
  backends::register_builtin_backends();
  const auto model = std::make_shared<const Model>(load_model(checkpoint()));
  auto reference = qdq_reference(model, k16a16w, checkpoint());
  DecoderScheduler compiled(std::make_unique<ProgramMethodRunner>(runtime::ProgramInstance::load(art() + "/text_decoder.pte")));
  const double step = *compiled.runner().constant_double("get_logits_scale");
  std::vector<int32_t> prompt;
  for (int i = 0; i < 40; ++i) prompt.push_back((i * 37 + 11) % model->config.vocab_size);
  const auto got = compiled.forward_all(prompt);
  const auto want = reference->forward_all(prompt);
  ASSERT_EQ(got.size(), want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]) / step);
  std::printf("[ info ] 16a16w logits vs QDQ reference: max difference %.1f steps of the logits encoding\n", worst);
  EXPECT_LE(worst, 8.0);
}

TEST_F(CompiledEndToEnd, BenchReportsRowsTtftAndMemory) {
  const auto r = run_genai({"bench", "-a", art(), "--pp", "32", "--tg", "16", "--reps", "1", "--threads", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 2u);
  EXPECT_EQ(j["results"][0]["test"], "pp32");
  EXPECT_EQ(j["results"][1]["test"], "tg16");
  EXPECT_GT(j["results"][1]["mean"].get<double>(), 0.0);
  EXPECT_NE(j["backend"].get<std::string>().find("(host runtime)"), std::string::npos) << j["backend"];
  EXPECT_EQ(j["ttft_prompt_tokens"], 96);  // min(128, context)
  EXPECT_GT(j["ttft_ms"].get<double>(), 0.0);
  EXPECT_GT(j["peak_rss_mb"].get<double>(), 0.0);
  EXPECT_EQ(j["kv_io_dtype"], "uint16");
  const auto both = run_genai({"bench", "-a", art(), "--checkpoint", checkpoint()});
  EXPECT_EQ(both.exit_code, 2);
  const auto too_long = run_genai({"bench", "-a", art(), "--pp", "200"});
  EXPECT_EQ(too_long.exit_code, 2) << too_long.err;
}

TEST_F(CompiledEndToEnd, TruncatedOrCorruptedProgramIsExitCode2) {
  testing::TempDir tmp;
  const std::string bad = tmp.file("bad");
  testing::copy_dir(art(), bad);
  const std::string pte = bad + "/text_decoder.pte";
  const auto size = fs::file_size(pte);
  fs::resize_file(pte, size / 2);
  testing::expect_exit2({"run", "-a", bad, "--prompt", "x"}, {"text_decoder.pte"});
  fs::resize_file(pte, 0);
  testing::expect_exit2({"run", "-a", bad, "--prompt", "x"}, {"text_decoder.pte"});
  // Bytes flipped in the flatbuffer header region.
  fs::remove(pte);
  fs::copy_file(art() + "/text_decoder.pte", pte);
  {
    std::fstream f(pte, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4);
    f.write("XXXX", 4);  // the file identifier "ET12"
  }
  testing::expect_exit2({"run", "-a", bad, "--prompt", "x"}, {"text_decoder.pte"});
  testing::expect_exit2({"bench", "-a", bad}, {"text_decoder.pte"});
}

TEST_F(CompiledEndToEnd, ManifestProblemsAreExitCode2) {
  testing::TempDir tmp;
  const std::string bad = tmp.file("bad");
  testing::copy_dir(art(), bad);
  fs::remove(bad + "/text_decoder.pte");
  testing::expect_exit2({"run", "-a", bad, "--prompt", "x"}, {"manifest.json", "text_decoder.pte", "does not exist"});
  fs::remove(bad + "/manifest.json");
  testing::expect_exit2({"run", "-a", bad, "--prompt", "x"}, {"manifest.json", "missing"});
  testing::expect_exit2({"run", "-a", tmp.file("nothing"), "--prompt", "x"}, {"nothing"});
}

TEST_F(CompiledEndToEnd, ATokenizerOfAnotherVocabularyIsExitCode2) {
  testing::TempDir tmp;
  const std::string bad = tmp.file("bad");
  testing::copy_dir(art(), bad);
  // A tokenizer with more tokens than the program's vocabulary of 512.
  write_tokenizer_json(make_synthetic_bpe_vocab(1000, 1), bad + "/tokenizer.json");
  // Not the tokenizer compilation wrote: manifest.json's checksum says so first ...
  testing::expect_exit2({"run", "-a", bad, "--prompt", "x"}, {"tokenizer.json", "manifest.json"});
  // ... and without that check, the vocabulary check does.
  testing::expect_exit2({"run", "-a", bad, "--prompt", "x", "--no_verify"}, {"tokenizer.json", "1000", "512", "get_vocab_size"});
  // The same through --tokenizer_model on the good dir.
  testing::expect_exit2({"run", "-a", art(), "--prompt", "x", "--tokenizer_model", bad + "/tokenizer.json"}, {"1000"});
}

TEST_F(CompiledEndToEnd, AProgramForAnotherBackendNamesItsDelegate) {
  testing::TempDir tmp;
  const std::string bad = tmp.file("qnn");
  testing::copy_dir(art(), bad);
  auto p = pte::read_program(art() + "/text_decoder.pte").program;
  for (auto& m : p.methods)
    for (auto& d : m.delegates) d.id = "QnnBackend";
  fs::remove(bad + "/text_decoder.pte");
  pte::write_program(bad + "/text_decoder.pte", p);
  testing::expect_exit2({"run", "-a", bad, "--prompt", "x"}, {"text_decoder.pte", "manifest.json"});  // not the file compiled
  // QnnBackend has an executor (--lowering qnn): our payload under that id is no QNN context.
  testing::expect_exit2({"run", "-a", bad, "--prompt", "x", "--no_verify"},
                        {"method kv_forward", "QnnBackend payload", "magic"});
}

TEST_F(CompiledEndToEnd, DeviceRunWithoutAdbSaysSo) {
  // PATH without adb: the child sees only this empty directory.
  testing::TempDir empty;
  std::string elf(64, '\0');
  elf.replace(0, 4, "\x7f" "ELF");
  elf[4] = 2;
  elf[5] = 1;
  elf[18] = 62;  // x86-64
  std::ofstream(empty.file("genai-x86"), std::ios::binary) << elf;
  const auto r = testing::run_genai_with_env({"PATH=" + empty.path()}, {"run", "-a", art(), "--prompt", "x",
                                       "--device", "R58M123", "--runner_binary", empty.file("genai-x86")});
  EXPECT_NE(r.exit_code, 0);
  // A host binary is not an aarch64 runner: that is said first, before adb is looked for.
  EXPECT_NE(r.err.find("not an aarch64"), std::string::npos) << r.err;
  elf[18] = static_cast<char>(183);
  std::ofstream(empty.file("genai-arm64"), std::ios::binary) << elf;
  const auto n = testing::run_genai_with_env({"PATH=" + empty.path()}, {"run", "-a", art(), "--prompt", "x",
                                       "--device", "R58M123", "--runner_binary", empty.file("genai-arm64")});
  EXPECT_EQ(n.exit_code, 1) << n.err;
  EXPECT_NE(n.err.find("apt-get install adb"), std::string::npos) << n.err;
  const auto h = run_genai({"run", "-a", art(), "--prompt", "x", "--host", "lab"});
  EXPECT_EQ(h.exit_code, 2);
  EXPECT_NE(h.err.find("--device"), std::string::npos) << h.err;
}

// The CLI's device path end to end against a fake adb that plays the phone: the device's JSON
// comes back on stdout unchanged with --json, and as text + a stats line without.
TEST_F(CompiledEndToEnd, DeviceRunPrintsThePulledResult) {
  testing::TempDir bin;
  std::string elf(64, '\0');
  elf.replace(0, 4, "\x7f" "ELF");
  elf[4] = 2;
  elf[5] = 1;
  elf[18] = static_cast<char>(183);
  std::ofstream(bin.file("genai-arm64"), std::ios::binary) << elf;
  const std::string log = bin.file("adb.log");
  std::ofstream(bin.file("adb")) << "#!/bin/sh\necho \"$*\" >> '" << log
                                 << "'\nwhile [ \"$1\" = -H ] || [ \"$1\" = -s ]; do shift 2; done\n"
                                    "case \"$1\" in\n"
                                    "  devices) printf 'List of devices attached\\nR58M123\\tdevice\\n';;\n"
                                    "  pull) case \"$2\" in */run.json) printf '{\"text\": \"on the phone\", \"tokens\": [4], "
                                    "\"stats\": {\"decode_tok_s\": 42.5, \"prompt_tokens\": 3}, \"peak_rss_mb\": 99.0}' > \"$3\";; "
                                    "*) : > \"$3\";; esac;;\n"
                                    "esac\nexit 0\n";
  fs::permissions(bin.file("adb"), fs::perms::owner_all);
  const std::string path = "PATH=" + bin.path() + ":/usr/bin:/bin";
  const std::vector<std::string> base{"run", "-a", art(), "--prompt", "-5 degrees", "--device",
                                      "R58M123", "--host", "lab", "--runner_binary", bin.file("genai-arm64"),
                                      "--tokenizer_model", art() + "/tokenizer.json"};
  auto args = base;
  args.push_back("--json");
  const auto j = testing::run_genai_with_env({path}, args);
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto out = nlohmann::json::parse(j.out);
  EXPECT_EQ(out["text"], "on the phone");
  EXPECT_EQ(out["stats"]["decode_tok_s"], 42.5);
  const auto t = testing::run_genai_with_env({path}, base);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.out, "on the phone\n");
  EXPECT_NE(t.err.find("decode 42.5 tok/s"), std::string::npos) << t.err;
  std::ifstream in(log);
  const std::string calls((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(calls.find("-H lab devices"), std::string::npos) << calls;
  EXPECT_NE(calls.find("push " + art() + "/text_decoder.pte /data/local/tmp/genai/art16/text_decoder.pte"),
            std::string::npos)
      << calls;
  EXPECT_NE(calls.find("push " + art() + "/tokenizer_config.json"), std::string::npos) << calls;
  EXPECT_NE(calls.find("'--prompt=-5 degrees'"), std::string::npos) << calls;
  EXPECT_NE(calls.find("'--tokenizer_model=tokenizer.json' '--json' > run.json 2> run.log"), std::string::npos) << calls;
}

// Acceptance 1 on the default model: compile with 16a16w, then greedy tokens equal the QDQ
// reference and the answer is printed. About 60 s in a release build (AMD EPYC, 2 threads: the
// compile's calibration sampling and the scalar QDQ reference), minutes under the sanitizers:
// "Slow" in its name labels it nosan (release tree only).
TEST(CompiledDefaultModel, SlowGreedyTokensOf16a16wEqualTheQdqReference) {
  const std::string checkpoint = testing::default_model_path();
  GENAI_REQUIRE_AVAILABLE(!checkpoint.empty(), "the default model (scripts/fetch_default_model.sh)");
  testing::TempDir tmp;
  const CompileCase c{"16a16w", 256, 32};
  const auto r = run_genai(c.args(checkpoint, tmp.file("art")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto model = std::make_shared<const Model>(load_model(checkpoint));
  auto reference = qdq_reference(model, c, checkpoint);
  const std::string prompt = "What is the capital of France?";
  const auto want = greedy_tokens(*reference, *model, prompt, 16);
  const auto j = run_json(tmp.file("art"), prompt, 16);
  EXPECT_EQ(j["tokens"].get<std::vector<int32_t>>(), want);
  std::printf("[ info ] default model 16a16w: %s\n", j["text"].get<std::string>().c_str());
}

}  // namespace
}  // namespace genai
