// `genai compile` end to end with the built-in backends, and `genai inspect` on what it wrote.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/file_helpers.h"
#include "support/cli_runner.h"
#include "support/test_requirements.h"

extern char** environ;

namespace genai {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::run_genai;

using genai::testing::dir_entries;
using genai::testing::read_bytes;

// One tiny synthetic checkpoint for the whole suite.
const std::string& tiny_checkpoint() {
  static testing::TempDir dir;
  static const std::string path = [] {
    const std::string p = dir.file("tiny.gguf");
    const auto r = run_genai({"synth", "--shape", "tiny", "--seed", "3", "--out", p});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return p;
  }();
  return path;
}

std::vector<std::string> compile_args(const std::string& checkpoint, const std::string& out) {
  return {"compile", "--checkpoint", checkpoint, "--soc_model", "SM8650", "--lowering", "genai", "--backend", "htp", "--model_mode",
          "hybrid", "--max_seq_len", "64", "--prefill_ar_len", "16", "--quant_recipe", "16a8w", "-a", out};
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(CompileCli, TinyModelCompilesAndInspectShowsMethodsTargetPlanAndOneWeightCopy) {
  testing::TempDir dir;
  const std::string out = dir.file("art");
  const auto r = run_genai(with(compile_args(tiny_checkpoint(), out), {"--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  const std::string pte = out + "/text_decoder.pte";
  EXPECT_EQ(j["artifacts"], (json{{"text_decoder", pte}}));
  const auto methods = j["methods"]["text_decoder"].get<std::vector<std::string>>();
  EXPECT_EQ(methods.at(0), "kv_forward");
  EXPECT_EQ(methods.at(1), "prefill_forward");
  const uint64_t planned = j["planned_bytes"], lower = j["lower_bound_bytes"];
  EXPECT_GE(planned, lower);
  EXPECT_GT(lower, 0u);
  EXPECT_LE(static_cast<double>(planned), 1.10 * static_cast<double>(lower));
  for (const char* stage : {"prepare", "quantize", "compile"}) EXPECT_GE(j["stage_seconds"][stage], 0.0) << stage;
  EXPECT_EQ(dir_entries(out),
            (std::vector<std::string>{"manifest.json", "text_decoder.pte", "tokenizer.json", "tokenizer_config.json"}));

  const auto ins = run_genai({"inspect", pte, "--json"});
  ASSERT_EQ(ins.exit_code, 0) << ins.err;
  const json p = json::parse(ins.out);
  std::map<std::string, json> by_name;
  for (const auto& m : p["methods"]) by_name[m["name"]] = m;
  for (const char* name : {"kv_forward", "prefill_forward"}) {
    ASSERT_TRUE(by_name.count(name)) << name;
    const json& m = by_name[name];
    EXPECT_EQ(m["kind"], "delegated");
    ASSERT_EQ(m["delegates"].size(), 1u);
    EXPECT_EQ(m["delegates"][0]["id"], "GenaiHtpBackend");
    const json& qnn = m["delegates"][0]["qnn_options"];
    EXPECT_EQ(qnn["soc_model"], "SM8650");
    EXPECT_EQ(qnn["htp_arch"], "V75");
    EXPECT_EQ(qnn["backend_type"], "htp");
    EXPECT_EQ(qnn["htp_precision"], "quantized");
    EXPECT_EQ(qnn["htp_max_sf_buf_size"], planned);  // the group's scratch
    EXPECT_EQ(m["non_const_buffer_sizes"], (json{0, planned}));
    EXPECT_EQ(m["inputs"][0]["dtype"], "int32");    // tokens
    EXPECT_EQ(m["inputs"][1]["dtype"], "uint16");   // atten_mask
    EXPECT_EQ(m["outputs"][0]["dtype"], "uint16");  // logits
  }
  EXPECT_EQ(by_name["kv_forward"]["inputs"][0]["shape"], (json{1, 1}));
  EXPECT_EQ(by_name["prefill_forward"]["inputs"][0]["shape"], (json{1, 16}));
  const std::map<std::string, json> constants{{"get_max_seq_len", 64}, {"get_max_context_len", 64},
                                              {"get_ar_len", 1},       {"get_n_layers", 2},
                                              {"get_use_kv_cache", true}, {"get_kv_io_bit_width", 8},
                                              {"get_max_batch_size", 1}};
  for (const auto& [name, value] : constants) {
    ASSERT_TRUE(by_name.count(name)) << name;
    EXPECT_EQ(by_name[name]["kind"], "constant");
    EXPECT_EQ(by_name[name]["values"][0], value) << name;
  }
  for (const char* name : {"get_vocab_size", "get_n_kv_heads", "get_head_dim", "get_dim", "get_bos_id", "get_eos_id",
                           "get_n_bos", "get_n_eos", "get_logits_scale", "get_logits_zero_point",
                           "get_kv_output_0_quant_attr", "get_kv_output_3_quant_attr"}) {
    EXPECT_TRUE(by_name.count(name)) << name;
  }
  EXPECT_EQ(by_name["get_kv_output_0_quant_attr"]["values"].size(), 5u);
  EXPECT_EQ(by_name["get_kv_output_0_quant_attr"]["values"][4], "torch.uint8");
  EXPECT_EQ(by_name["get_kv_output_0_quant_attr"]["values"][1], 128);  // symmetric 8-bit KV
  EXPECT_FALSE(by_name.count("get_kv_output_4_quant_attr"));  // 2 layers: k_out_0..1, v_out_0..1

  // One stored copy of the weights: unique keys, and the file holds less than two copies.
  std::set<std::string> keys;
  uint64_t named_bytes = 0, payload_bytes = 0;
  for (const auto& n : p["named_data"]) {
    EXPECT_TRUE(keys.insert(n["key"].get<std::string>()).second) << n["key"];
    named_bytes += n["size"].get<uint64_t>();
  }
  for (const char* name : {"kv_forward", "prefill_forward"}) payload_bytes += by_name[name]["delegates"][0]["processed_size"].get<uint64_t>();
  EXPECT_GT(named_bytes, 100000u);  // the tiny model's weights
  EXPECT_EQ(p["named_data_bytes"], named_bytes);
  EXPECT_EQ(p["named_data_stored_bytes"], named_bytes);  // no key stored twice
  const uint64_t file_size = p["file_size"];
  EXPECT_GE(file_size, named_bytes + payload_bytes);
  EXPECT_LT(file_size, named_bytes + named_bytes / 2);

  const json manifest = json::parse(read_bytes(out + "/manifest.json"));
  EXPECT_EQ(manifest["artifacts"], (json{{"text_decoder", "text_decoder.pte"}}));
  EXPECT_EQ(manifest["tokenizer"], "tokenizer.json");
  EXPECT_EQ(manifest["soc_model"], "SM8650");
  EXPECT_EQ(manifest["backend"], "htp");
  EXPECT_EQ(manifest["options"]["quant_recipe"], "16a8w");
  EXPECT_EQ(manifest["source"]["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(manifest["planned_bytes"], planned);
}

TEST(CompileCli, TwoRunsGiveIdenticalBytesWhateverTheFolder) {
  testing::TempDir dir;
  const auto a = run_genai(compile_args(tiny_checkpoint(), dir.file("a")));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto b = run_genai(with(compile_args(tiny_checkpoint(), dir.file("b")), {"--json", "--threads", "1"}));
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(a.out.find("planned scratch:"), std::string::npos);  // the human report
  ASSERT_EQ(dir_entries(dir.file("a")), dir_entries(dir.file("b")));
  for (const auto& name : dir_entries(dir.file("a"))) {
    EXPECT_EQ(read_bytes(dir.file("a") + "/" + name), read_bytes(dir.file("b") + "/" + name)) << name;
  }
}

// --backend_fuse_kv is the lowering target's (compile::CompileRequest::kv_fusion): a 16a16w
// program's 16-bit caches are copied into their concatenations by default and read in place with
// the flag, which leaves the concatenations out of kv_forward's arena.
TEST(CompileCli, FuseKvReachesTheLoweringOf16BitCaches) {
  testing::TempDir dir;
  auto sixteen = [&](const std::string& out) {
    auto args = compile_args(tiny_checkpoint(), dir.file(out));
    args[args.size() - 3] = "16a16w";  // --quant_recipe's value
    std::replace(args.begin(), args.end(), std::string("hybrid"), std::string("kv"));  // kv_forward alone: its plan
    return with(args, {"--json"});
  };
  const auto plain = run_genai(sixteen("plain"));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto fused = run_genai(with(sixteen("fused"), {"--backend_fuse_kv"}));
  ASSERT_EQ(fused.exit_code, 0) << fused.err;
  const uint64_t plain_bytes = json::parse(plain.out)["planned_bytes"], fused_bytes = json::parse(fused.out)["planned_bytes"];
  EXPECT_LT(fused_bytes, plain_bytes);
  EXPECT_NE(read_bytes(dir.file("plain") + "/text_decoder.pte"), read_bytes(dir.file("fused") + "/text_decoder.pte"));
}

// One front door: `genai compile` is `genai pipeline --compile_only`, byte for byte, for a
// quantized and a float program.
TEST(CompileCli, CompileAndPipelineCompileOnlyWriteByteIdenticalArtifactDirs) {
  testing::TempDir dir;
  for (const std::vector<std::string>& program :
       {std::vector<std::string>{"--quant_recipe", "16a8w"}, std::vector<std::string>{"--use_fp16"}}) {
    SCOPED_TRACE(program[0]);
    const std::string a = dir.file("compile" + program[0]), b = dir.file("pipeline" + program[0]);
    std::vector<std::string> common{"--checkpoint", tiny_checkpoint(), "--soc_model", "SM8650", "--lowering", "genai", "--backend", "htp",
                                    "--model_mode", "hybrid", "--max_seq_len", "64", "--prefill_ar_len", "16"};
    common.insert(common.end(), program.begin(), program.end());
    std::vector<std::string> compile{"compile", "-a", a};
    compile.insert(compile.end(), common.begin(), common.end());
    std::vector<std::string> pipeline{"pipeline", "--compile_only", "--artifact", b};
    pipeline.insert(pipeline.end(), common.begin(), common.end());
    const auto rc = run_genai(compile);
    ASSERT_EQ(rc.exit_code, 0) << rc.err;
    const auto rp = run_genai(pipeline);
    ASSERT_EQ(rp.exit_code, 0) << rp.err;
    ASSERT_FALSE(dir_entries(a).empty());
    ASSERT_EQ(dir_entries(a), dir_entries(b));
    for (const auto& name : dir_entries(a)) EXPECT_EQ(read_bytes(a + "/" + name), read_bytes(b + "/" + name)) << name;
  }
}

TEST(CompileCli, Fp16AndGpuProgramsAreFloat) {
  testing::TempDir dir;
  for (const std::string backend : {"htp", "gpu"}) {
    const std::string out = dir.file(backend);
    std::vector<std::string> args{"compile", "--checkpoint", tiny_checkpoint(), "--soc_model", "SM8650", "--lowering", "genai", "--backend",
                                  backend,   "--model_mode", "kv",             "--max_seq_len", "32",   "-a",
                                  out,       "--json"};
    if (backend == "htp") args.push_back("--use_fp16");
    const auto r = run_genai(args);
    ASSERT_EQ(r.exit_code, 0) << backend << ": " << r.err;
    EXPECT_EQ(json::parse(r.out)["methods"]["text_decoder"][0], "kv_forward");
    const auto ins = run_genai({"inspect", out + "/text_decoder.pte", "--json"});
    ASSERT_EQ(ins.exit_code, 0) << ins.err;
    const json p = json::parse(ins.out);
    bool saw_kv = false, saw_scale = false;
    for (const auto& m : p["methods"]) {
      if (m["name"] == "kv_forward") {
        saw_kv = true;
        EXPECT_EQ(m["outputs"][0]["dtype"], "float32");
        EXPECT_EQ(m["delegates"][0]["qnn_options"]["backend_type"], backend);
        if (backend == "htp") {
          EXPECT_EQ(m["delegates"][0]["qnn_options"]["htp_precision"], "fp16");
        }
      }
      if (m["name"] == "get_kv_io_bit_width") {
        EXPECT_EQ(m["values"][0], 32);
      }
      if (m["name"] == "get_logits_scale") saw_scale = true;
    }
    EXPECT_TRUE(saw_kv);
    EXPECT_FALSE(saw_scale);  // float logits need no dequantization
  }
}

struct BadCase {
  std::vector<std::string> args;
  std::vector<std::string> named;  // words the message must contain
};

TEST(CompileCli, UnsupportedCombinationsExit2NamingSocOptionOrOp) {
  testing::TempDir dir;
  const std::vector<BadCase> cases{
      {{"--soc_model", "SM8650", "--lowering", "genai", "--backend", "lpai"}, {"lpai", "SM8650", "LPAI"}},
      {{"--soc_model", "SM8850", "--lowering", "genai", "--backend", "lpai"}, {"--backend lpai", "SM8850", "htp"}},
      {{"--soc_model", "SM8650", "--lowering", "genai", "--online_prepare"}, {"--online_prepare", "--model_mode"}},
      {{"--soc_model", "SM8350", "--lowering", "genai", "--quant_recipe", "16a4w"}, {"linear", "int4", "SM8350"}},
      {{"--soc_model", "SM8350", "--lowering", "genai", "--use_fp16"}, {"float16", "--use_fp16", "SM8350"}},
      {{"--soc_model", "SM8650", "--lowering", "genai", "--backend", "gpu", "--quant_recipe", "16a8w"}, {"--backend gpu", "--quant_recipe"}},
      {{"--soc_model", "SM9999", "--lowering", "genai"}, {"SM9999", "--soc_model", "SM8650"}},
      // The lookahead tree (next_pow2((8 + 8) * 4) = 64 rows) must leave room in the context.
      {{"--soc_model", "SM8650", "--lowering", "genai", "--model_mode", "lookahead", "--max_seq_len", "64"},
       {"--model_mode lookahead", "--max_context_len (64)", "--window", "--gcap", "--ngram"}},
  };
  for (const BadCase& c : cases) {
    const std::string out = dir.file("bad");
    std::vector<std::string> args{"compile", "--checkpoint", tiny_checkpoint(), "-a", out, "--max_seq_len", "32",
                                  "--prefill_ar_len", "8"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto r = run_genai(args);
    const std::string all = r.err + r.out;
    EXPECT_EQ(r.exit_code, 2) << c.args[1] << ": " << all;
    for (const auto& word : c.named) EXPECT_NE(all.find(word), std::string::npos) << "'" << word << "' in: " << all;
    EXPECT_FALSE(fs::exists(out + "/text_decoder.pte")) << all;
  }
}

// Acceptance: planned scratch within 10% of the lower bound on the embedded default model.
// "Slow": a minute under the sanitizers, so the release tree runs it (label nosan).
TEST(CompileCli, SlowDefaultModelPlansWithinTenPercentOfTheLowerBound) {
  const std::string model = testing::default_model_path();
  GENAI_REQUIRE_AVAILABLE(!model.empty(), "the default model (scripts/fetch_default_model.sh)");
  testing::TempDir dir;
  // A short context keeps calibration cheap; both graphs, so the group's scratch is exercised.
  const auto r = run_genai({"compile", "--checkpoint", model, "--soc_model", "SM8650", "--lowering", "genai", "--model_mode", "hybrid",
                            "--max_seq_len", "32", "--prefill_ar_len", "8", "--quant_recipe", "16a8w", "-a",
                            dir.file("art"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  const double planned = j["planned_bytes"], lower = j["lower_bound_bytes"];
  EXPECT_GT(lower, 0.0);
  EXPECT_LE(planned, 1.10 * lower) << "planned " << planned << " lower bound " << lower;
  std::printf("default model: planned %.0f bytes, lower bound %.0f, ratio %.4f; seconds prepare %.2f quantize %.2f "
              "compile %.2f\n",
              planned, lower, planned / lower, j["stage_seconds"]["prepare"].get<double>(),
              j["stage_seconds"]["quantize"].get<double>(), j["stage_seconds"]["compile"].get<double>());
}

bool has_program_temp_file(const fs::path& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().rfind(".text_decoder.pte.tmp-", 0) == 0) return true;
  }
  return false;
}

// Slow: a 25 MB program written by an instrumented compiler takes a minute; the release tree runs it.
TEST(CompileCli, SlowKillWhileWritingLeavesNoPartialProgramAndTheNextRunCleansUp) {
  testing::TempDir dir;
  // A model whose program takes a moment to write (stories15m: ~25 MB at 16a8w).
  const std::string checkpoint = dir.file("s15.gguf");
  ASSERT_EQ(run_genai({"synth", "--shape", "stories15m", "--weight_type", "q8_0", "--out", checkpoint}).exit_code, 0);
  const std::string out = dir.file("art");
  const std::vector<std::string> args{"compile", "--checkpoint", checkpoint, "--soc_model", "SM8650", "--lowering", "genai", "--model_mode",
                                      "kv", "--max_seq_len", "32", "--quant_recipe", "16a8w", "-a", out};
  bool killed = false;
  for (int attempt = 0; attempt < 3 && !killed; ++attempt) {
    fs::remove_all(out);
    const pid_t pid = testing::spawn_genai(args);
    ASSERT_GT(pid, 0);
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::chrono::steady_clock::now() < deadline) {
      if (has_program_temp_file(out)) {
        ::kill(pid, SIGKILL);
        killed = true;
        break;
      }
      if (::waitpid(pid, &status, WNOHANG) == pid) break;  // finished before we caught it writing
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (killed) ::waitpid(pid, &status, 0);
  }
  ASSERT_TRUE(killed) << "never observed the program being written";
  // No program and no manifest: only the hidden temp file of the interrupted writer.
  for (const auto& name : dir_entries(out)) {
    EXPECT_TRUE(name.rfind(".", 0) == 0 && name.find(".tmp-") != std::string::npos) << name;
  }
  EXPECT_TRUE(has_program_temp_file(out));

  const auto again = run_genai(args);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  for (const auto& name : dir_entries(out)) EXPECT_EQ(name.find(".tmp-"), std::string::npos) << name;
  EXPECT_TRUE(fs::exists(out + "/text_decoder.pte"));
  EXPECT_TRUE(fs::exists(out + "/manifest.json"));
}

}  // namespace
}  // namespace genai
