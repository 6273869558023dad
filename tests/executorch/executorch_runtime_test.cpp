// Our --lowering qnn programs in ExecuTorch's own runtime (the executorch wheel's QnnBackend, the
// runtime a phone runs them with) on QNN's x86 HTP simulator, through
// tests/python/executorch_reference.py: it loads each program, runs its constant methods and
// every other method, and drives a decoder as upstream's smart-mask runner does. Checked:
//   - every decoder family: the methods, signatures and constants are ours, and a greedy
//     generation gives the tokens `genai run` gives on the same program and prompt ids;
//   - the vision and audio encoders: ExecuTorch's output equals our runtime's for one input;
//   - a device build (weights shared across graphs: metadata only, the simulator cannot load it)
//     names its QNN graphs after its methods, as ExecuTorch's QnnBackend looks them up;
//   - a graph not named after its method fails in ExecuTorch (so the checks above can fail).
// The family and encoder comparisons are Slow (release tree only): under the sanitizers their time
// is the instrumented compiles, while the code they check is the Python reference's. Needs the
// venv scripts/install_deps.sh --test makes (GENAI_EXECUTORCH_PYTHON) and
// onnxruntime-qnn; the QNN 2.51 libraries are reached through the device-config shim
// (tests/support/qnn_htp_device_config_shim.c).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/qnn/qnn_graph_rename.h"
#include "backends/qnn/qnn_payload.h"
#include "backends/register_builtin.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "pte/program_reader.h"
#include "runtime/program_instance.h"
#include "support/cli_runner.h"
#include "support/test_requirements.h"

namespace genai {
namespace {

using nlohmann::json;
using testing::run_genai;
using testing::run_process;
using testing::TempDir;

constexpr int kNewTokens = 8;
constexpr size_t kQnnHeaderBytes = 256;

std::string executorch_python() {
  const char* env = std::getenv("GENAI_EXECUTORCH_PYTHON");
  return env != nullptr && *env != '\0' ? env : GENAI_EXECUTORCH_PYTHON;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// The last line of a program's output (QNN's library may print a banner of its own first).
std::string last_line(const std::string& out) {
  const std::string t = trimmed(out);
  const size_t at = t.rfind('\n');
  return at == std::string::npos ? t : t.substr(at + 1);
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

void write_bytes(const std::string& path, std::span<const uint8_t> bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// What running the reference takes: its Python, the shim, onnxruntime_qnn's package folder.
struct Environment {
  std::string python, package_dir, missing;
};

const Environment& environment() {
  static const Environment env = [] {
    Environment e;
    e.python = executorch_python();
    if (::access(e.python.c_str(), X_OK) != 0) {
      e.missing = "ExecuTorch's venv (" + e.python + "; scripts/install_deps.sh --test, or GENAI_EXECUTORCH_PYTHON)";
      return e;
    }
    if (::access(GENAI_QNN_HTP_SHIM_DIR "/libQnnHtp.so", R_OK) != 0) {
      e.missing = "the QNN device-config shim (" GENAI_QNN_HTP_SHIM_DIR "/libQnnHtp.so)";
      return e;
    }
    const auto r = run_process({e.python, "-c", "import onnxruntime_qnn, os; print(os.path.dirname(onnxruntime_qnn.__file__))"});
    if (r.exit_code != 0) {
      e.missing = "onnxruntime-qnn in " + e.python + " (" + trimmed(r.err) + ")";
      return e;
    }
    e.package_dir = trimmed(r.out);
    return e;
  }();
  return env;
}

struct DriverResult {
  std::map<std::string, json> jobs;  // by name
  std::string err;                   // the reference's stderr (ExecuTorch's and QNN's logs)
};

// One run of the reference over `jobs`: one process, one torch import.
DriverResult run_executorch(const TempDir& dir, const json& jobs) {
  const Environment& env = environment();
  const std::string in = dir.file("jobs.json"), out = dir.file("executorch.json");
  std::ofstream(in) << json{{"jobs", jobs}}.dump();
  const auto r = run_process({"env", "LD_LIBRARY_PATH=" GENAI_QNN_HTP_SHIM_DIR ":" + env.package_dir,
                              "GENAI_REAL_QNN_HTP=" + env.package_dir + "/libQnnHtp.so", env.python,
                              testing::python_script("executorch_reference.py"), in, out});
  DriverResult result;
  result.err = r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return result;
  json all;
  std::ifstream(out) >> all;
  for (const json& j : all["jobs"]) result.jobs[j["name"].get<std::string>()] = j;
  return result;
}

std::vector<std::string> compile_args(const std::string& checkpoint, const std::string& out, bool x86 = true) {
  std::vector<std::string> args{"compile", "--checkpoint", checkpoint, "--soc_model", "SM8650", "--backend", "htp",
                                "--lowering", "qnn", "--model_mode", "hybrid", "--max_seq_len", "96",
                                "--max_context_len", "96", "--prefill_ar_len", "16", "--quant_recipe", "16a8w",
                                "-a", out};
  if (x86) args.push_back("--enable_x86_64");
  return args;
}

json inspect(const std::string& pte) {
  const auto r = run_genai({"inspect", "--json", pte});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? json::parse(r.out) : json::object();
}

// ExecuTorch's ScalarType code of one of our dtype names.
int scalar_type(const std::string& dtype) {
  static const std::map<std::string, int> codes{{"uint8", 0}, {"int8", 1}, {"int16", 2}, {"int32", 3},
                                                {"int64", 4}, {"float32", 6}, {"bool", 11}, {"uint16", 27}};
  const auto it = codes.find(dtype);
  return it == codes.end() ? -1 : it->second;
}

// ExecuTorch's view of the program is ours: the same methods, each delegated method's input and
// output dtypes and shapes, and every constant method's values.
void expect_same_program(const json& ours, const json& theirs) {
  std::vector<std::string> names;
  for (const json& m : ours["methods"]) names.push_back(m["name"]);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(theirs["methods"].get<std::vector<std::string>>(), names);
  for (const json& m : ours["methods"]) {
    const std::string name = m["name"];
    SCOPED_TRACE(name);
    if (!theirs["metadata"].contains(name)) {
      ADD_FAILURE() << "ExecuTorch lists no method " << name;
      continue;
    }
    const json& meta = theirs["metadata"][name];
    if (m["kind"] == "constant") {
      ASSERT_TRUE(theirs["constants"].contains(name));
      EXPECT_EQ(theirs["constants"][name], m["values"]);
      continue;
    }
    for (const char* side : {"inputs", "outputs"}) {
      ASSERT_EQ(meta[side].size(), m[side].size()) << side;
      for (size_t i = 0; i < m[side].size(); ++i) {
        EXPECT_EQ(meta[side][i]["dtype"], scalar_type(m[side][i]["dtype"])) << side << " " << i;
        EXPECT_EQ(meta[side][i]["sizes"], m[side][i]["shape"]) << side << " " << i;
      }
    }
  }
}

std::vector<std::string> delegated_methods(const json& ours) {
  std::vector<std::string> names;
  for (const json& m : ours["methods"])
    if (m["kind"] == "delegated") names.push_back(m["name"]);
  return names;
}

double mean(const json& values) {
  double sum = 0;
  for (const json& v : values) sum += v.get<double>();
  return values.empty() ? 0.0 : sum / static_cast<double>(values.size());
}

class ExecutorchRuntime : public ::testing::Test {
 protected:
  void SetUp() override { GENAI_REQUIRE_AVAILABLE(environment().missing.empty(), environment().missing); }
};

// Every decoder family, compiled for the simulator: ExecuTorch loads it, its constants and
// signatures are ours, both methods execute, and its greedy generation gives our tokens.
TEST_F(ExecutorchRuntime, SlowEveryDecoderFamilyGeneratesOurTokens) {
  TempDir dir;
  const std::vector<std::string> families{"llama", "qwen2", "qwen3", "granite", "smollm3", "phi3",
                                          "gemma", "gemma2", "gemma3", "glm", "codegen", "gemma4"};
  std::map<std::string, json> ours, programs;
  json jobs = json::array();
  for (const std::string& arch : families) {
    SCOPED_TRACE(arch);
    const bool hf = arch == "codegen";  // no GGUF form
    const std::string model = dir.file(arch + (hf ? ".hf" : ".gguf")), art = dir.file(arch);
    ASSERT_EQ(run_genai({"synth", "--arch", arch, "--shape", "tiny", "--format", hf ? "hf" : "gguf", "--out", model}).exit_code, 0);
    const auto c = run_genai(compile_args(model, art));
    ASSERT_EQ(c.exit_code, 0) << c.err;
    const auto r = run_genai({"run", "-a", art, "--prompt", "Hello there", "--max_new_tokens", std::to_string(kNewTokens),
                              "--temperature", "0", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ours[arch] = json::parse(r.out);
    programs[arch] = inspect(art + "/text_decoder.pte");
    jobs.push_back({{"name", arch},
                    {"pte", art + "/text_decoder.pte"},
                    {"generate", {{"prompt_ids", ours[arch]["turns"][0]["prompt_ids"]}, {"max_new_tokens", kNewTokens}}}});
  }
  const DriverResult et = run_executorch(dir, jobs);
  for (const std::string& arch : families) {
    SCOPED_TRACE(arch);
    ASSERT_TRUE(et.jobs.contains(arch));
    const json& theirs = et.jobs.at(arch);
    ASSERT_TRUE(theirs["ok"].get<bool>()) << theirs["error"].get<std::string>() << "\n" << et.err;
    expect_same_program(programs[arch], theirs);
    for (const std::string& m : delegated_methods(programs[arch])) EXPECT_TRUE(theirs["executed"].contains(m)) << m;
    const json& mine = ours[arch];
    ASSERT_EQ(mine["stop_reason"], "max_new_tokens");  // all kNewTokens tokens, no stop token among them
    EXPECT_EQ(theirs["generation"]["tokens"], mine["tokens"]);
    const json& g = theirs["generation"];
    const double prompt = static_cast<double>(mine["turns"][0]["prompt_ids"].size());
    std::printf("%-8s tokens ours %s, ExecuTorch %s; ms per decode step: ours %.1f, ExecuTorch %.1f; prefill of %.0f "
                "tokens (%zu AR-16 calls), ms: ours %.1f, ExecuTorch %.1f\n",
                arch.c_str(), mine["tokens"].dump().c_str(), g["tokens"].dump().c_str(),
                1000.0 / mine["stats"]["decode_tok_s"].get<double>(), mean(g["decode_ms"]), prompt, g["prefill_ms"].size(),
                1000.0 * prompt / mine["stats"]["prefill_tok_s"].get<double>(),
                mean(g["prefill_ms"]) * static_cast<double>(g["prefill_ms"].size()));
  }
}

// --num_sharding 2: each method calls one QNN context per layer shard, the hidden state passed
// between them in the method's planned buffer. ExecuTorch runs that program, and it generates the
// tokens our runtime generates, which are the unsharded program's.
TEST_F(ExecutorchRuntime, ShardedProgramGeneratesTheUnshardedTokens) {
  TempDir dir;
  const std::string model = dir.file("tiny.gguf");
  ASSERT_EQ(run_genai({"synth", "--shape", "tiny", "--out", model}).exit_code, 0);
  std::map<int, json> ours;
  for (int parts : {1, 2}) {
    const std::string art = dir.file("art" + std::to_string(parts));
    auto args = compile_args(model, art);
    args.insert(args.end(), {"--num_sharding", std::to_string(parts)});
    const auto c = run_genai(args);
    ASSERT_EQ(c.exit_code, 0) << c.err;
    const auto r = run_genai({"run", "-a", art, "--prompt", "Hello there", "--max_new_tokens", std::to_string(kNewTokens),
                              "--temperature", "0", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ours[parts] = json::parse(r.out);
  }
  ASSERT_EQ(ours[1]["stop_reason"], "max_new_tokens");
  EXPECT_EQ(ours[2]["tokens"], ours[1]["tokens"]);
  const std::string pte = dir.file("art2") + "/text_decoder.pte";
  const json program = inspect(pte);
  for (const json& m : program["methods"]) {
    if (m["kind"] == "delegated") {
      EXPECT_EQ(m["delegates"].size(), 2u) << m["name"];
    }
  }
  const DriverResult et = run_executorch(
      dir, json::array({{{"name", "sharded"},
                         {"pte", pte},
                         {"generate", {{"prompt_ids", ours[2]["turns"][0]["prompt_ids"]}, {"max_new_tokens", kNewTokens}}}}}));
  ASSERT_TRUE(et.jobs.contains("sharded"));
  const json& theirs = et.jobs.at("sharded");
  ASSERT_TRUE(theirs["ok"].get<bool>()) << theirs["error"].get<std::string>() << "\n" << et.err;
  expect_same_program(program, theirs);
  EXPECT_EQ(theirs["generation"]["tokens"], ours[2]["tokens"]);
}

// An encoder program: ExecuTorch runs its method on the same input as our runtime and gives the
// same bytes (both run the same context binary on the simulator).
void expect_encoder_equals_ours(const std::string& arch, const std::string& key) {
  TempDir dir;
  const std::string model = dir.file(arch), art = dir.file("art");
  ASSERT_EQ(run_genai({"synth", "--arch", arch, "--format", "hf", "--seed", "0", "--out", model}).exit_code, 0);
  const auto c = run_genai(compile_args(model, art));
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const std::string pte = art + "/" + key + ".pte";
  const json program = inspect(pte);
  backends::register_builtin_backends();
  const auto ours = runtime::ProgramInstance::load(pte);
  const std::vector<std::string> methods = ours->method_names();
  ASSERT_EQ(methods, std::vector<std::string>{key});
  // One input of codes spread over each input's range (a float input: values in [-1, 1)).
  std::mt19937 rng(11);
  std::vector<std::vector<uint8_t>> in;
  std::vector<runtime::BufferRef> in_refs;
  json files = json::array();
  for (const auto& d : ours->inputs(key)) {
    const size_t n = static_cast<size_t>(shape_numel(d.shape));
    std::vector<uint8_t> b(n * dtype_size(d.dtype));
    for (size_t i = 0; i < n; ++i) {
      if (d.dtype == DType::kF32) {
        const float v = static_cast<float>(rng() % 2048) / 1024.0f - 1.0f;
        std::memcpy(&b[i * 4], &v, 4);
      } else if (d.dtype == DType::kI32) {
        const int32_t v = static_cast<int32_t>(rng() % 2);
        std::memcpy(&b[i * 4], &v, 4);
      } else {
        for (size_t k = 0; k < dtype_size(d.dtype); ++k) b[i * dtype_size(d.dtype) + k] = static_cast<uint8_t>(rng());
      }
    }
    files.push_back(dir.file(fmt::format("in{}.bin", in.size())));
    write_bytes(files.back(), b);
    in.push_back(std::move(b));
  }
  for (auto& b : in) in_refs.push_back({b.data(), b.size()});
  std::vector<std::vector<uint8_t>> out;
  std::vector<runtime::BufferRef> out_refs;
  for (const auto& d : ours->outputs(key)) out.emplace_back(static_cast<size_t>(shape_numel(d.shape)) * dtype_size(d.dtype));
  for (auto& b : out) out_refs.push_back({b.data(), b.size()});
  ours->execute(key, in_refs, out_refs);

  const DriverResult et = run_executorch(
      dir, json::array({{{"name", arch}, {"pte", pte}, {"execute", {{{"method", key}, {"inputs", files}, {"out_dir", dir.path()}}}}}}));
  ASSERT_TRUE(et.jobs.contains(arch));
  const json& theirs = et.jobs.at(arch);
  ASSERT_TRUE(theirs["ok"].get<bool>()) << theirs["error"].get<std::string>() << "\n" << et.err;
  expect_same_program(program, theirs);
  for (size_t o = 0; o < out.size(); ++o) {
    const std::vector<uint8_t> got = read_bytes(dir.file(fmt::format("{}.out{}.bin", key, o)));
    ASSERT_EQ(got.size(), out[o].size()) << "output " << o;
    size_t differ = 0;
    for (size_t i = 0; i < got.size(); ++i) differ += got[i] != out[o][i];
    EXPECT_EQ(differ, 0u) << "output " << o << ": " << differ << " of " << got.size() << " bytes differ";
  }
  std::printf("%s %s: ExecuTorch %.1f ms, output equal to ours (%zu outputs)\n", arch.c_str(), key.c_str(),
              mean(theirs["executed"][key]), out.size());
}

TEST_F(ExecutorchRuntime, SlowSmolVlmVisionEncoderEqualsOurRuntime) { expect_encoder_equals_ours("smolvlm", "vision_encoder"); }
TEST_F(ExecutorchRuntime, SlowInternVlVisionEncoderEqualsOurRuntime) { expect_encoder_equals_ours("internvl3", "vision_encoder"); }
// Fails until the audio encoder compiles with --lowering qnn (QNN refuses to finalize its graph today).
TEST_F(ExecutorchRuntime, SlowGraniteSpeechAudioEncoderEqualsOurRuntime) {
  expect_encoder_equals_ours("granite_speech", "audio_encoder");
}

// The shim forwards QNN's own HTP library and refuses, saying why, any library whose interface it
// was not written against (QNN's GPU library: backend id 4) or none at all.
TEST_F(ExecutorchRuntime, DeviceConfigShimForwardsTheHtpAndRefusesOtherLibraries) {
  const std::string script =
      "import ctypes, sys\n"
      "lib = ctypes.CDLL(sys.argv[1])\n"
      "providers, count = ctypes.c_void_p(), ctypes.c_uint32()\n"
      "rc = lib.QnnInterface_getProviders(ctypes.byref(providers), ctypes.byref(count))\n"
      "print(rc, count.value)\n";
  const std::string& dir = environment().package_dir;
  auto get_providers = [&](const std::string& real) {
    return run_process({"env", "GENAI_REAL_QNN_HTP=" + real, "LD_LIBRARY_PATH=" GENAI_QNN_HTP_SHIM_DIR, environment().python,
                        "-c", script, GENAI_QNN_HTP_SHIM_DIR "/libQnnHtp.so"});
  };
  const auto htp = get_providers(dir + "/libQnnHtp.so");
  EXPECT_EQ(last_line(htp.out), "0 1") << htp.err;
  const auto gpu = get_providers(dir + "/libQnnGpu.so");
  EXPECT_EQ(last_line(gpu.out), "1000 0");
  EXPECT_NE(gpu.err.find("backend id 4"), std::string::npos) << gpu.err;
  EXPECT_NE(gpu.err.find("refusing"), std::string::npos) << gpu.err;
  const auto none = get_providers("");  // nothing after the shim's own folder on LD_LIBRARY_PATH
  EXPECT_EQ(last_line(none.out), "1000 0");
  EXPECT_NE(none.err.find("cannot find QNN's own libQnnHtp.so"), std::string::npos) << none.err;
}

// The context binary of each QnnBackend delegate of `method`.
std::vector<std::span<const uint8_t>> context_binaries(const pte::Program& p, std::string_view method) {
  std::vector<std::span<const uint8_t>> binaries;
  for (const auto& d : p.find_method(method)->delegates) {
    EXPECT_EQ(d.id, "QnnBackend");
    EXPECT_TRUE(backends::qnn::read_qnn_payload_header(d.processed.bytes()).has_value());
    binaries.push_back(d.processed.bytes().subspan(kQnnHeaderBytes));
  }
  return binaries;
}

bool contains(std::span<const uint8_t> bytes, std::string_view text) {
  return std::search(bytes.begin(), bytes.end(), text.begin(), text.end()) != bytes.end();
}

// A device build (weights shared by the graphs of one context, which the simulator cannot load):
// ExecuTorch reads its methods, signatures and constants, and the one context binary names its
// graphs kv_forward and prefill_forward, none after ONNX Runtime.
TEST_F(ExecutorchRuntime, DeviceBuildLoadsWithGraphsNamedAfterTheirMethods) {
  TempDir dir;
  ASSERT_EQ(run_genai({"synth", "--shape", "tiny", "--out", dir.file("tiny.gguf")}).exit_code, 0);
  const auto c = run_genai(compile_args(dir.file("tiny.gguf"), dir.file("device"), false));
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const std::string pte = dir.file("device/text_decoder.pte");
  const DriverResult et =
      run_executorch(dir, json::array({{{"name", "device"}, {"pte", pte}, {"metadata_only", true}}}));
  ASSERT_TRUE(et.jobs.contains("device"));
  const json& theirs = et.jobs.at("device");
  ASSERT_TRUE(theirs["ok"].get<bool>()) << theirs["error"].get<std::string>() << "\n" << et.err;
  expect_same_program(inspect(pte), theirs);

  const auto loaded = pte::read_program(pte);
  const auto kv = context_binaries(loaded.program, "kv_forward");
  const auto prefill = context_binaries(loaded.program, "prefill_forward");
  ASSERT_EQ(kv.size(), 1u);
  ASSERT_EQ(prefill.size(), 1u);
  EXPECT_TRUE(std::equal(kv[0].begin(), kv[0].end(), prefill[0].begin(), prefill[0].end()));  // one shared context
  EXPECT_GE(backends::qnn::count_qnn_name_records(kv[0], "kv_forward"), 1u);
  EXPECT_GE(backends::qnn::count_qnn_name_records(kv[0], "prefill_forward"), 1u);
  EXPECT_FALSE(contains(kv[0], "QNNExecutionProvider_"));
}

// The same program with kv_forward's graph renamed (in place, the way compilation names it):
// ExecuTorch finds no graph for kv_forward and fails it, while prefill_forward still runs.
TEST_F(ExecutorchRuntime, GraphNotNamedAfterItsMethodFails) {
  TempDir dir;
  ASSERT_EQ(run_genai({"synth", "--shape", "tiny", "--out", dir.file("tiny.gguf")}).exit_code, 0);
  const auto c = run_genai(compile_args(dir.file("tiny.gguf"), dir.file("art")));
  ASSERT_EQ(c.exit_code, 0) << c.err;
  std::vector<uint8_t> file = read_bytes(dir.file("art/text_decoder.pte"));
  {
    const auto loaded = pte::read_program_bytes(file, "text_decoder.pte");
    const auto kv = context_binaries(loaded.program, "kv_forward");
    ASSERT_EQ(kv.size(), 1u);
    const backends::qnn::QnnGraphRename rename{"kv_forward", "kv_graph"};
    const std::vector<uint8_t> renamed = backends::qnn::rename_qnn_graphs(kv[0], std::span(&rename, 1));
    ASSERT_EQ(renamed.size(), kv[0].size());
    std::copy(renamed.begin(), renamed.end(), file.begin() + (kv[0].data() - file.data()));
  }
  const std::string pte = dir.file("renamed.pte");
  write_bytes(pte, file);
  const DriverResult et = run_executorch(dir, json::array({{{"name", "renamed"}, {"pte", pte}}}));
  ASSERT_TRUE(et.jobs.contains("renamed"));
  const json& theirs = et.jobs.at("renamed");
  EXPECT_FALSE(theirs["ok"].get<bool>());
  EXPECT_TRUE(theirs["failed"].contains("kv_forward")) << theirs.dump(2);
  EXPECT_FALSE(theirs["failed"].contains("prefill_forward")) << theirs.dump(2);
  EXPECT_TRUE(theirs["executed"].contains("prefill_forward"));
  std::printf("ExecuTorch on kv_forward's graph named kv_graph: %s\n--- its log ---\n%s\n",
              theirs["failed"].value("kv_forward", std::string("(no failure)")).c_str(), et.err.c_str());
}

}  // namespace
}  // namespace genai
