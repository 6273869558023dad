// The QNN bridge against the real QNN HTP compiler and simulator (onnxruntime-qnn): a tiny QDQ
// model (uint16 activations, int8 per-channel weights) written at test time by Python's `onnx`,
// compiled to a context binary that records its target, loaded and run on the simulator within
// one output step of the same QDQ arithmetic computed here; several graphs; the QnnBackend
// executor on a binary without our graph records; and every way the bridge is misused or missing
// is an InputError naming the thing.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backends/qnn/qnn_bridge.h"
#include "backends/qnn/qnn_bridge_source.h"
#include "backends/qnn/qnn_payload.h"
#include "backends/register_builtin.h"
#include "core/error.h"
#include "pte/blob.h"
#include "runtime/backend_executor.h"
#include "runtime/subprocess.h"
#include "runtime/worker_process.h"
#include "support/cli_runner.h"
#include "support/process_checks.h"
#include "support/test_requirements.h"
#include "target/qnn_spec_builder.h"

namespace genai {
namespace {

using namespace backends::qnn;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The model's numbers, computed the same way here and in the generator below.
constexpr int kK = 64, kN = 32;
constexpr float kInScale = 2.0f / 65535.0f;
constexpr int kInZero = 32768;
constexpr float kOutScale = 0.001f;
constexpr int kOutZero = 32768;
int8_t weight(int k, int n) { return static_cast<int8_t>((k * 31 + n * 17) % 255 - 127); }
float weight_scale(int n) { return static_cast<float>(0.0005 + 0.00005 * n); }

// Every model the tests use, written by one Python run into a directory (importing onnx is slow):
// linear<rows><sfx>.onnx: input_0_x<sfx> uint16 [rows, K] -> DQ -> MatMul(DQ(int8 W, per-channel
// scales, axis 1)) -> Q -> output_0_y<sfx> uint16 [rows, N]; det.onnx: a float Det, which the HTP
// refuses; requant.onnx: uint16 [2048, 4096] -> DQ -> Q with another scale (16 MB each way).
constexpr const char* kGenerator = R"PY(
import os, sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
out = sys.argv[1]
K, N = 64, 32
def save(g, name):
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 21)])
    m.ir_version = 10
    with open(os.path.join(out, name), "wb") as f:
        f.write(m.SerializeToString())
def linear(rows, sfx):
    w = np.array([[(k * 31 + n * 17) % 255 - 127 for n in range(N)] for k in range(K)], np.int8)
    ws = np.array([0.0005 + 0.00005 * n for n in range(N)], np.float32)
    inits = [nh.from_array(w, "w_q" + sfx), nh.from_array(ws, "w_s" + sfx), nh.from_array(np.zeros(N, np.int8), "w_z" + sfx),
             nh.from_array(np.array(2 / 65535, np.float32), "x_s" + sfx), nh.from_array(np.array(32768, np.uint16), "x_z" + sfx),
             nh.from_array(np.array(0.001, np.float32), "y_s" + sfx), nh.from_array(np.array(32768, np.uint16), "y_z" + sfx)]
    x, y = "input_0_x" + sfx, "output_0_y" + sfx
    nodes = [h.make_node("DequantizeLinear", [x, "x_s" + sfx, "x_z" + sfx], ["x_dq" + sfx]),
             h.make_node("DequantizeLinear", ["w_q" + sfx, "w_s" + sfx, "w_z" + sfx], ["w_dq" + sfx], axis=1),
             h.make_node("MatMul", ["x_dq" + sfx, "w_dq" + sfx], ["mm" + sfx], name="proj" + sfx),
             h.make_node("QuantizeLinear", ["mm" + sfx, "y_s" + sfx, "y_z" + sfx], [y])]
    save(h.make_graph(nodes, "linear" + sfx, [h.make_tensor_value_info(x, T.UINT16, [rows, K])],
                      [h.make_tensor_value_info(y, T.UINT16, [rows, N])], inits), f"linear{rows}{sfx}.onnx")
linear(1, ""); linear(4, ""); linear(4, "_ar4")
# linear1_ext.onnx: linear1 with its weight in linear1_ext.bin (external data).
from onnx.external_data_helper import convert_model_to_external_data
m = onnx.load(os.path.join(out, "linear1.onnx"))
convert_model_to_external_data(m, all_tensors_to_one_file=True, location="linear1_ext.bin", size_threshold=1024)
onnx.save_model(m, os.path.join(out, "linear1_ext.onnx"))
# two.onnx: inputs a [1, K], b [1, N]; outputs sum = Q(DQ(mm) + DQ(b)), mm = the linear (made first).
w = np.array([[(k * 31 + n * 17) % 255 - 127 for n in range(N)] for k in range(K)], np.int8)
ws = np.array([0.0005 + 0.00005 * n for n in range(N)], np.float32)
inits = [nh.from_array(w, "w_q"), nh.from_array(ws, "w_s"), nh.from_array(np.zeros(N, np.int8), "w_z"),
         nh.from_array(np.array(2 / 65535, np.float32), "x_s"), nh.from_array(np.array(32768, np.uint16), "x_z"),
         nh.from_array(np.array(0.001, np.float32), "y_s"), nh.from_array(np.array(32768, np.uint16), "y_z")]
nodes = [h.make_node("DequantizeLinear", ["input_1_b", "y_s", "y_z"], ["b_dq"]),
         h.make_node("DequantizeLinear", ["input_0_a", "x_s", "x_z"], ["a_dq"]),
         h.make_node("DequantizeLinear", ["w_q", "w_s", "w_z"], ["w_dq"], axis=1),
         h.make_node("MatMul", ["a_dq", "w_dq"], ["mm"], name="proj"),
         h.make_node("QuantizeLinear", ["mm", "y_s", "y_z"], ["output_1_mm"]),
         h.make_node("DequantizeLinear", ["output_1_mm", "y_s", "y_z"], ["mm_dq"]),
         h.make_node("Add", ["mm_dq", "b_dq"], ["sum"], name="add"),
         h.make_node("QuantizeLinear", ["sum", "y_s", "y_z"], ["output_0_sum"])]
save(h.make_graph(nodes, "two", [h.make_tensor_value_info("input_0_a", T.UINT16, [1, K]), h.make_tensor_value_info("input_1_b", T.UINT16, [1, N])],
                  [h.make_tensor_value_info("output_0_sum", T.UINT16, [1, N]), h.make_tensor_value_info("output_1_mm", T.UINT16, [1, N])], inits), "two.onnx")
nodes = [h.make_node("Det", ["a"], ["d"], name="the_det"), h.make_node("Relu", ["d"], ["o"], name="relu")]
save(h.make_graph(nodes, "bad", [h.make_tensor_value_info("a", T.FLOAT, [2, 2])], [h.make_tensor_value_info("o", T.FLOAT, [])]), "det.onnx")
inits = [nh.from_array(np.array(0.001, np.float32), "s_in"), nh.from_array(np.array(32768, np.uint16), "z_in"),
         nh.from_array(np.array(0.002, np.float32), "s_out"), nh.from_array(np.array(32768, np.uint16), "z_out")]
nodes = [h.make_node("DequantizeLinear", ["input_0_x", "s_in", "z_in"], ["f"]),
         h.make_node("QuantizeLinear", ["f", "s_out", "z_out"], ["output_0_y"])]
save(h.make_graph(nodes, "requant", [h.make_tensor_value_info("input_0_x", T.UINT16, [2048, 4096])],
                  [h.make_tensor_value_info("output_0_y", T.UINT16, [2048, 4096])], inits), "requant.onnx")
)PY";

// The models, generated once per build tree (ctest runs each test in its own process) into a
// directory named after the generator's hash, published by an atomic rename.
const std::vector<uint8_t>& model(const std::string& name) {
  static const std::filesystem::path dir = [] {
    const auto d = std::filesystem::path(GENAI_BINARY_DIR) / "tests" /
                   fmt::format("qnn_models_{:016x}", std::hash<std::string_view>{}(kGenerator));
    if (std::filesystem::exists(d)) return d;
    const auto tmp = d.string() + ".tmp" + std::to_string(getpid());
    std::filesystem::create_directories(tmp);
    const auto r = runtime::run_subprocess({"python3", "-c", kGenerator, tmp});
    if (!r.ok()) throw_failure("the test's model generator failed ({}): {}", r.describe(), runtime::printable_tail(r.err));
    std::error_code ec;
    std::filesystem::rename(tmp, d, ec);  // another test process may have won the race
    std::filesystem::remove_all(tmp, ec);
    return d;
  }();
  static std::map<std::string, std::vector<uint8_t>> cache;
  auto& m = cache[name];
  if (m.empty()) {
    std::ifstream in(dir / name, std::ios::binary);
    m.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (m.empty()) throw_failure("the test's model generator wrote no {}", name);
  }
  return m;
}

// The QDQ arithmetic: integer inputs, float per-channel weights, round half to even, clamp.
std::vector<uint16_t> reference(const std::vector<uint16_t>& x, int rows) {
  std::vector<uint16_t> y(static_cast<size_t>(rows) * kN);
  for (int r = 0; r < rows; ++r)
    for (int n = 0; n < kN; ++n) {
      float acc = 0;
      for (int k = 0; k < kK; ++k) {
        const float xf = static_cast<float>(static_cast<int>(x[r * kK + k]) - kInZero) * kInScale;
        acc += xf * (static_cast<float>(weight(k, n)) * weight_scale(n));
      }
      const float q = std::nearbyint(acc / kOutScale) + kOutZero;
      y[r * kN + n] = static_cast<uint16_t>(std::clamp(q, 0.0f, 65535.0f));
    }
  return y;
}

QnnProviderOptions target(int soc_model, int htp_arch) {
  QnnProviderOptions o;
  o.soc_model = soc_model;
  o.htp_arch = htp_arch;
  return o;
}
const QnnProviderOptions kSm8650 = target(57, 75);

bool contains(const std::string& hay, std::string_view needle) { return hay.find(needle) != std::string::npos; }

std::span<const uint8_t> bytes_of(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }
template <typename T>
std::span<const uint8_t> bytes_of(const std::vector<T>& v) {
  return {reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(T)};
}
template <typename T>
std::span<uint8_t> mutable_bytes_of(std::vector<T>& v) {
  return {reinterpret_cast<uint8_t*>(v.data()), v.size() * sizeof(T)};
}

QnnMethodBinding binding_for(const std::string& method, const QnnGraphInfo& g) {
  QnnMethodBinding b;
  b.method = method;
  b.graph = g.graph;
  b.binary = g.binary;
  b.inputs = g.inputs;
  b.outputs = g.outputs;
  return b;
}

// Runs `method` on random on-grid inputs; the largest distance to the reference in output steps.
int max_step_error(QnnBridge& bridge, QnnSessionId s, const std::string& method, int rows, int trials, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(kInZero - 20000, kInZero + 20000);
  int worst = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<uint16_t> x(static_cast<size_t>(rows) * kK), y(static_cast<size_t>(rows) * kN);
    for (auto& v : x) v = static_cast<uint16_t>(dist(rng));
    const std::span<const uint8_t> ins[] = {bytes_of(x)};
    const std::span<uint8_t> outs[] = {mutable_bytes_of(y)};
    bridge.run(s, method, ins, outs);
    const auto want = reference(x, rows);
    for (size_t i = 0; i < y.size(); ++i) worst = std::max(worst, std::abs(int{y[i]} - int{want[i]}));
  }
  return worst;
}

// A skip (a failure in CI) naming what is missing.
#define REQUIRE_ONNXRUNTIME_QNN(bridge)                                             \
  do {                                                                              \
    const QnnProbe p_ = (bridge).probe();                                           \
    GENAI_REQUIRE_AVAILABLE(p_.available, "onnxruntime-qnn (" << p_.missing << ")"); \
  } while (0)

// One bridge for the tests that leave it healthy (starting one imports onnx: about 1.5 s).
QnnBridge& shared_bridge() {
  static QnnBridge bridge;
  return bridge;
}

TEST(QnnBridge, ProbeReportsTheVersions) {
  auto start = Clock::now();
  QnnBridge bridge;
  const double started = seconds_since(start);
  start = Clock::now();
  const QnnProbe p = bridge.probe();
  const double probed = seconds_since(start);
  GENAI_REQUIRE_AVAILABLE(p.available, "onnxruntime-qnn (" << p.missing << ")");
  EXPECT_FALSE(p.onnxruntime.empty());
  EXPECT_FALSE(p.onnxruntime_qnn.empty());
  EXPECT_FALSE(p.python.empty());
  std::printf("bridge start %.3f s, probe %.3f s: Python %s, onnxruntime %s, onnxruntime-qnn %s, QNN SDK %s\n", started,
              probed, p.python.c_str(), p.onnxruntime.c_str(), p.onnxruntime_qnn.c_str(), p.qnn_sdk.c_str());
}

// A bridge killed mid-request leaves its work folder behind; the next bridge removes the folders
// of bridges that are gone and keeps a live process's and any other name.
TEST(QnnBridge, WorkFoldersOfGoneBridgesAreRemoved) {
  testing::TempDir tmp;
  const pid_t child = genai::testing::pid_of_a_gone_process();
  const std::filesystem::path t(tmp.path());
  const auto gone_load = t / fmt::format("genai_qnn_load_{}_abc123", child);
  const auto gone_compile = t / fmt::format("genai_qnn_compile_{}_def456", child);
  const auto live = t / fmt::format("genai_qnn_load_{}_ghi789", getpid());
  const auto other = t / "genai_qnn_load_notapid";
  for (const auto& d : {gone_load, gone_compile, live, other}) {
    std::filesystem::create_directories(d);
    std::ofstream(d / "model.onnx") << "x";
  }
  {
    const genai::testing::ScopedTmpdir scoped(tmp.path());
    QnnBridge bridge;
    (void)bridge.probe();  // answered after the start-up clean-up
  }
  EXPECT_FALSE(std::filesystem::exists(gone_load));
  EXPECT_FALSE(std::filesystem::exists(gone_compile));
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_TRUE(std::filesystem::exists(other));
}

TEST(QnnBridge, CompilesARecordedTargetAndRunsWithinOneStepOnTheSimulator) {
  QnnBridge& bridge = shared_bridge();
  REQUIRE_ONNXRUNTIME_QNN(bridge);
  const auto& linear1 = model("linear1.onnx");
  const QnnModel models[] = {{"kv_forward", linear1}};
  auto start = Clock::now();
  const QnnCompileResult c = bridge.compile(models, kSm8650, false);
  const double compiled = seconds_since(start);
  ASSERT_EQ(c.binaries.size(), 1u);
  ASSERT_EQ(c.graphs.size(), 1u);
  const std::string& bin = c.binaries[0];
  ASSERT_GE(bin.size(), 8u);
  EXPECT_EQ(bin.substr(0, 8), std::string("\0\0\0\2\0\0\0\3", 8));
  EXPECT_TRUE(contains(bin, "soc_type=SM8650;arch=75"));
  EXPECT_TRUE(contains(c.ep_sdk_version, "2.")) << c.ep_sdk_version;
  const QnnGraphInfo& g = c.graphs[0];
  EXPECT_EQ(g.model_name, "kv_forward");
  EXPECT_TRUE(contains(bin, g.graph)) << g.graph;
  ASSERT_EQ(g.inputs.size(), 1u);
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.inputs[0].name, "input_0_x");
  EXPECT_EQ(g.inputs[0].dtype, DType::kU16);
  EXPECT_EQ(g.inputs[0].shape, (Shape{1, kK}));
  ASSERT_TRUE(g.inputs[0].scale && g.inputs[0].offset);
  EXPECT_NEAR(*g.inputs[0].scale, kInScale, 1e-9);
  EXPECT_EQ(*g.inputs[0].offset, -kInZero);
  EXPECT_EQ(g.outputs[0].name, "output_0_y");
  EXPECT_EQ(g.outputs[0].shape, (Shape{1, kN}));

  // Another target records another target.
  const QnnCompileResult v73 = bridge.compile(models, target(43, 73), false);
  EXPECT_TRUE(contains(v73.binaries[0], "soc_type=SM8550;arch=73"));
  EXPECT_FALSE(contains(v73.binaries[0], "soc_type=SM8650"));
  // The same model and options give the same bytes, whatever was compiled before.
  EXPECT_TRUE(bridge.compile(models, kSm8650, false).binaries.at(0) == bin);

  start = Clock::now();
  const std::span<const uint8_t> bins[] = {bytes_of(bin)};
  const QnnMethodBinding methods[] = {binding_for("kv_forward", g)};
  const QnnSessionId s = bridge.load(bins, methods, kSm8650);
  const double loaded = seconds_since(start);
  start = Clock::now();
  EXPECT_LE(max_step_error(bridge, s, "kv_forward", 1, 10, 1), 1);
  const double ran = seconds_since(start) / 10;
  bridge.close(s);
  std::printf("compile %.3f s (binary %zu bytes, graph %s), load %.3f s, run %.4f s\n", compiled, bin.size(),
              g.graph.c_str(), loaded, ran);
}

// A model whose weights are external data compiles to a graph that computes what the inline
// model's does, output for output; a bad external data description is an input error.
TEST(QnnBridge, ExternalDataCompilesAsTheInlineModel) {
  QnnBridge& bridge = shared_bridge();
  REQUIRE_ONNXRUNTIME_QNN(bridge);
  const auto& ext = model("linear1_ext.onnx");
  ASSERT_LT(ext.size(), model("linear1.onnx").size());  // the weight is not in it
  const QnnModel inline_models[] = {{"kv_forward", model("linear1.onnx")}};
  const QnnModel external_models[] = {{"kv_forward", ext, model("linear1_ext.bin"), "linear1_ext.bin"}};
  const QnnCompileResult a = bridge.compile(inline_models, kSm8650, false);
  const QnnCompileResult b = bridge.compile(external_models, kSm8650, false);
  ASSERT_EQ(b.binaries.size(), 1u);
  std::vector<std::vector<uint16_t>> outputs;
  for (const QnnCompileResult* c : {&a, &b}) {
    const std::span<const uint8_t> bins[] = {bytes_of(c->binaries.at(0))};
    const QnnMethodBinding methods[] = {binding_for("kv_forward", c->graphs.at(0))};
    const QnnSessionId s = bridge.load(bins, methods, kSm8650);
    std::vector<uint16_t> x(kK), y(kN);
    for (int k = 0; k < kK; ++k) x[static_cast<size_t>(k)] = static_cast<uint16_t>(kInZero + 300 * k - 9000);
    const std::span<const uint8_t> ins[] = {bytes_of(x)};
    const std::span<uint8_t> outs[] = {mutable_bytes_of(y)};
    bridge.run(s, "kv_forward", ins, outs);
    bridge.close(s);
    outputs.push_back(y);
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  EXPECT_NE(outputs[0], std::vector<uint16_t>(kN, 0));

  const QnnModel escaping[] = {{"kv_forward", ext, model("linear1_ext.bin"), "../linear1_ext.bin"}};
  EXPECT_THROW(bridge.compile(escaping, kSm8650, false), InputError);
}

TEST(QnnBridge, TwoModelsCompileToTwoBinariesThatRunInOneSession) {
  QnnBridge& bridge = shared_bridge();
  REQUIRE_ONNXRUNTIME_QNN(bridge);
  const auto &one = model("linear1.onnx"), &four = model("linear4.onnx");
  const QnnModel models[] = {{"kv_forward", one}, {"prefill_forward", four}};
  const QnnCompileResult c = bridge.compile(models, kSm8650, false);
  ASSERT_EQ(c.binaries.size(), 2u);
  ASSERT_EQ(c.graphs.size(), 2u);
  EXPECT_EQ(c.graphs[0].binary, 0u);
  EXPECT_EQ(c.graphs[1].binary, 1u);
  EXPECT_EQ(c.graphs[1].inputs[0].shape, (Shape{4, kK}));
  const std::span<const uint8_t> bins[] = {bytes_of(c.binaries[0]), bytes_of(c.binaries[1])};
  const QnnMethodBinding methods[] = {binding_for("kv_forward", c.graphs[0]),
                                      binding_for("prefill_forward", c.graphs[1])};
  const QnnSessionId s = bridge.load(bins, methods, kSm8650);
  EXPECT_LE(max_step_error(bridge, s, "kv_forward", 1, 3, 2), 1);
  EXPECT_LE(max_step_error(bridge, s, "prefill_forward", 4, 3, 3), 1);
}

// ONNX Runtime's shared context (ep.share_ep_contexts) holds both graphs in one binary, but it
// always enables HTP weight sharing, which the x86 simulator cannot load ("Shared weights buffer
// isn't supported on this platform"; ONNX Runtime then crashes). The crash stays in the bridge:
// the caller gets a Failure naming the method. Graph I/O names must differ between the graphs.
TEST(QnnBridge, ASharedContextHoldsBothGraphsButTheSimulatorCannotLoadIt) {
  QnnBridge bridge;
  REQUIRE_ONNXRUNTIME_QNN(bridge);
  const auto &one = model("linear1.onnx"), &four = model("linear4_ar4.onnx");
  const QnnModel models[] = {{"kv_forward", one}, {"prefill_forward", four}};
  const QnnCompileResult c = bridge.compile(models, kSm8650, true);
  ASSERT_EQ(c.binaries.size(), 1u);
  ASSERT_EQ(c.graphs.size(), 2u);
  EXPECT_NE(c.graphs[0].graph, c.graphs[1].graph);
  for (const auto& g : c.graphs) {
    EXPECT_EQ(g.binary, 0u);
    EXPECT_TRUE(contains(c.binaries[0], g.graph));
    EXPECT_TRUE(contains(c.binaries[0], g.inputs.at(0).name));
  }
  EXPECT_TRUE(contains(c.binaries[0], "soc_type=SM8650;arch=75"));
  EXPECT_EQ(c.graphs[1].inputs[0].name, "input_0_x_ar4");

  // The same I/O names in both graphs of one shared context: refused, saying why.
  const QnnModel same[] = {{"kv_forward", one}, {"prefill_forward", model("linear4.onnx")}};
  try {
    bridge.compile(same, kSm8650, true);
    ADD_FAILURE() << "compiled two graphs with the same I/O names into one context";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "prefill_forward")) << e.what();
    EXPECT_TRUE(contains(e.what(), "names must all differ")) << e.what();
  }

  const std::span<const uint8_t> bins[] = {bytes_of(c.binaries[0])};
  const QnnMethodBinding methods[] = {binding_for("kv_forward", c.graphs[0])};
  try {
    bridge.load(bins, methods, kSm8650);
    ADD_FAILURE() << "the simulator loaded a weight-shared context: ONNX Runtime changed, update the docs";
  } catch (const Error& e) {  // ONNX Runtime refuses it, or crashes the bridge
    EXPECT_TRUE(contains(e.what(), "kv_forward")) << e.what();
  }
}

TEST(QnnBridge, ANodeTheHtpRefusesIsAnInputErrorNamingIt) {
  QnnBridge& bridge = shared_bridge();
  REQUIRE_ONNXRUNTIME_QNN(bridge);
  const auto& bad = model("det.onnx");
  const QnnModel models[] = {{"kv_forward", bad}};
  try {
    bridge.compile(models, kSm8650, false);
    ADD_FAILURE() << "compiled a Det";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "kv_forward")) << e.what();
    EXPECT_TRUE(contains(e.what(), "the_det")) << e.what();
    EXPECT_TRUE(contains(e.what(), "Det")) << e.what();
  }
  QnnProviderOptions no_arch = kSm8650;
  no_arch.htp_arch = 0;
  EXPECT_THROW(bridge.compile(models, no_arch, false), InputError);
}

TEST(QnnBridge, BadPayloadsMissingGraphsAndWrongTensorsAreInputErrors) {
  QnnBridge& bridge = shared_bridge();
  REQUIRE_ONNXRUNTIME_QNN(bridge);
  const auto& linear1 = model("linear1.onnx");
  const QnnModel models[] = {{"kv_forward", linear1}};
  const QnnCompileResult c = bridge.compile(models, kSm8650, false);
  auto load_error = [&](const std::string& binary, QnnMethodBinding b) -> std::string {
    const std::span<const uint8_t> bins[] = {bytes_of(binary)};
    try {
      bridge.load(bins, std::span(&b, 1), kSm8650);
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no InputError)";
  };
  const QnnMethodBinding good = binding_for("kv_forward", c.graphs[0]);
  EXPECT_TRUE(contains(load_error(std::string(4096, 'x'), good), "not a QNN context binary"));
  QnnMethodBinding b = good;
  b.graph = "prefill_forward";
  EXPECT_TRUE(contains(load_error(c.binaries[0], b), "no graph named 'prefill_forward'"));
  b = good;
  b.inputs[0].name = "input_0_tokens";
  EXPECT_TRUE(contains(load_error(c.binaries[0], b), "no tensor named 'input_0_tokens'"));

  // By position, any names bind in the graph's order (a binary from another toolchain).
  b = good;
  b.bind = QnnMethodBinding::Bind::kByPosition;
  b.inputs[0].name = "tokens";
  b.outputs[0].name = "logits";
  const std::span<const uint8_t> bins[] = {bytes_of(c.binaries[0])};
  const QnnSessionId s = bridge.load(bins, std::span(&b, 1), kSm8650);
  EXPECT_LE(max_step_error(bridge, s, "kv_forward", 1, 2, 4), 1);

  std::vector<uint16_t> small(3), y(kN);
  const std::span<const uint8_t> ins[] = {bytes_of(small)};
  const std::span<uint8_t> outs[] = {mutable_bytes_of(y)};
  EXPECT_THROW(bridge.run(s, "kv_forward", ins, outs), InputError);
  EXPECT_THROW(bridge.run(s, "prefill_forward", ins, outs), InputError);
}

// The order compile reports is the QNN graph's own: binding by position in that order gives what
// binding by name gives, whatever order the names are listed in.
TEST(QnnBridge, GraphOrderBindsByPositionAsNamesBindByName) {
  QnnBridge& bridge = shared_bridge();
  REQUIRE_ONNXRUNTIME_QNN(bridge);
  const QnnModel models[] = {{"two", model("two.onnx")}};
  const QnnCompileResult c = bridge.compile(models, kSm8650, false);
  const QnnGraphInfo& g = c.graphs.at(0);
  ASSERT_EQ(g.inputs.size(), 2u);
  ASSERT_EQ(g.outputs.size(), 2u);
  EXPECT_EQ(g.inputs[0].name, "input_0_a");
  EXPECT_EQ(g.inputs[1].name, "input_1_b");
  EXPECT_EQ(g.outputs[0].name, "output_0_sum");
  EXPECT_EQ(g.outputs[1].name, "output_1_mm");
  QnnMethodBinding by_name = binding_for("by_name", g);
  std::swap(by_name.inputs[0], by_name.inputs[1]);  // b, a
  std::swap(by_name.outputs[0], by_name.outputs[1]);  // mm, sum
  QnnMethodBinding by_position = binding_for("by_position", g);
  by_position.bind = QnnMethodBinding::Bind::kByPosition;
  const char* names[] = {"tokens", "cache", "logits", "new_cache"};
  by_position.inputs[0].name = names[0];
  by_position.inputs[1].name = names[1];
  by_position.outputs[0].name = names[2];
  by_position.outputs[1].name = names[3];
  const std::span<const uint8_t> bins[] = {bytes_of(c.binaries[0])};
  const QnnMethodBinding methods[] = {by_name, by_position};
  const QnnSessionId s = bridge.load(bins, methods, kSm8650);
  std::vector<uint16_t> a(kK), b(kN), sum1(kN), mm1(kN), sum2(kN), mm2(kN);
  for (int i = 0; i < kK; ++i) a[i] = static_cast<uint16_t>(kInZero - 9000 + 277 * i);
  for (int i = 0; i < kN; ++i) b[i] = static_cast<uint16_t>(kOutZero - 300 + 19 * i);
  const std::span<const uint8_t> in_by_name[] = {bytes_of(b), bytes_of(a)};
  const std::span<uint8_t> out_by_name[] = {mutable_bytes_of(mm1), mutable_bytes_of(sum1)};
  bridge.run(s, "by_name", in_by_name, out_by_name);
  const std::span<const uint8_t> in_by_position[] = {bytes_of(a), bytes_of(b)};
  const std::span<uint8_t> out_by_position[] = {mutable_bytes_of(sum2), mutable_bytes_of(mm2)};
  bridge.run(s, "by_position", in_by_position, out_by_position);
  EXPECT_EQ(mm1, mm2);
  EXPECT_EQ(sum1, sum2);
  const auto want = reference(a, 1);
  for (int n = 0; n < kN; ++n) {
    EXPECT_LE(std::abs(int{mm1[n]} - int{want[n]}), 1) << n;
    EXPECT_LE(std::abs(int{sum1[n]} - (int{want[n]} + int{b[n]} - kOutZero)), 1) << n;
  }
  bridge.close(s);
}

// The QnnBackend executor on a program from another toolchain, which records no method -> graph
// map (no qnn_graph_<method> named data): a method runs the graph named after it, bound by
// position with the method's signature; a method whose graph the binary lacks is an InputError
// naming the method and the graph looked for (the bridge cannot list a binary's graphs).
TEST(QnnExecutor, WithoutAGraphRecordAMethodRunsTheGraphNamedAfterIt) {
  QnnBridge& bridge = shared_bridge();
  REQUIRE_ONNXRUNTIME_QNN(bridge);
  const QnnModel models[] = {{"linear", model("linear1.onnx")}};
  const QnnCompileResult c = bridge.compile(models, kSm8650, false);
  backends::register_builtin_backends();
  const runtime::BackendExecutor* executor = runtime::find_backend_executor(kQnnDelegateId);
  ASSERT_NE(executor, nullptr);
  const pte::Blob payload(make_qnn_payload(bytes_of(c.binaries.at(0))));
  const auto specs = target::QnnSpecBuilder("SM8650").x86_emulation(true).build();
  const runtime::NamedDataLookup no_records = [](std::string_view) { return std::span<const uint8_t>{}; };
  runtime::MethodDesc method;
  method.name = c.graphs.at(0).graph;  // ONNX Runtime names the graph; here the method is named after it
  method.label = "foreign.pte: method " + method.name;
  method.inputs = {{"tokens", DType::kU16, {1, kK}}};
  method.outputs = {{"", DType::kU16, {1, kN}}};
  const auto m = executor->init(payload, specs, no_records, method);
  ASSERT_EQ(m->inputs().size(), 1u);
  ASSERT_EQ(m->outputs().size(), 1u);
  EXPECT_EQ(m->inputs()[0].name, "tokens");
  EXPECT_EQ(m->outputs()[0].name, "output_0");  // a signature without names gets positional ones
  std::vector<uint16_t> x(kK), y(kN);
  for (int k = 0; k < kK; ++k) x[k] = static_cast<uint16_t>(kInZero - 9000 + 277 * k);
  const runtime::BufferRef in[] = {{x.data(), x.size() * 2}};
  const runtime::BufferRef out[] = {{y.data(), y.size() * 2}};
  m->execute(in, out, {});
  const auto want = reference(x, 1);
  for (int n = 0; n < kN; ++n) EXPECT_LE(std::abs(int{y[n]} - int{want[n]}), 1) << n;

  method.name = "kv_forward";
  method.label = "foreign.pte: method kv_forward";
  try {
    executor->init(payload, specs, no_records, method);
    ADD_FAILURE() << "a method without its graph loaded";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "records no QNN graph for method kv_forward")) << e.what();
    EXPECT_TRUE(contains(e.what(), "no graph named 'kv_forward'")) << e.what();
  }
}

// GENAI_PYTHON set for the scope of one test.
struct PythonOverride {
  explicit PythonOverride(const std::string& python) { setenv("GENAI_PYTHON", python.c_str(), 1); }
  ~PythonOverride() { unsetenv("GENAI_PYTHON"); }
};

TEST(QnnBridge, WithoutOnnxruntimeQnnItIsAnInputErrorNamingThePackage) {
  const auto dir = std::filesystem::temp_directory_path() / ("genai_qnn_nopkg_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  // A Python without site-packages: the standard library only.
  const std::string bare = (dir / "python_without_site").string();
  std::ofstream(bare) << "#!/bin/sh\nexec python3 -S -I \"$@\"\n";
  chmod(bare.c_str(), 0755);
  const std::string not_python = (dir / "not_python").string();
  std::ofstream(not_python) << "#!/bin/sh\necho 'I am no Python' >&2\nexit 1\n";
  chmod(not_python.c_str(), 0755);
  for (const std::string& python : {bare, not_python, (dir / "missing").string()}) {
    PythonOverride env(python);
    try {
      QnnBridge bridge;
      bridge.require_available();
      ADD_FAILURE() << python << " passed";
    } catch (const InputError& e) {
      EXPECT_TRUE(contains(e.what(), "onnxruntime-qnn")) << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}

// Garbage either way is a Failure, never a crash: the bridge answers a garbage request with an
// error frame and stays up; a "Python" answering garbage fails the call.
TEST(QnnBridge, GarbageEitherWayIsAFailure) {
  {
    runtime::WorkerProcess w({"python3", "-c", std::string(qnn_bridge_source())}, "the QNN bridge");
    const std::string junk = "\xff\xff\xff\x7fnot json at all";
    const runtime::MessagePart part(reinterpret_cast<const uint8_t*>(junk.data()), junk.size());
    const std::string reply = w.call("junk", std::span(&part, 1), std::chrono::seconds(30));
    EXPECT_TRUE(contains(reply, "\"kind\":\"failure\"")) << reply;
    EXPECT_TRUE(contains(reply, "garbage request")) << reply;
    EXPECT_TRUE(w.running());
  }
  const auto dir = std::filesystem::temp_directory_path() / ("genai_qnn_garbage_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  // A "Python" that answers every request with the frame in a file: replies cut short or garbled
  // at each field of the reply format are Failures naming the request, never a bad-input error.
  const std::string liar = (dir / "liar").string();
  const std::string reply_file = (dir / "reply").string();
  std::ofstream(liar) << "#!/bin/sh\ncat '" << reply_file << "'\nexec cat >/dev/null\n";
  chmod(liar.c_str(), 0755);
  auto le = [](uint64_t v, int n) {
    std::string b;
    for (int i = 0; i < n; ++i) b += static_cast<char>(v >> (8 * i));
    return b;
  };
  auto reply = [&](const std::string& head, uint32_t blobs, const std::string& rest) {
    return le(head.size(), 4) + head + le(blobs, 4) + rest;
  };
  const std::pair<std::string, std::string> garbled[] = {
      {"x", "the header length"},
      {le(100, 4) + "{}", "the JSON header"},
      {le(2, 4) + "{}", "the blob count"},
      {reply("[1, 2]", 0, ""), "not a JSON object"},
      {reply("{}", 1, le(1000, 8) + "abc"), "blob 0"},
      {reply("{}", 2, le(1, 8) + "a" + le(1, 4)), "blob 1's length"},
      {reply("{}", 0, "extra"), "5 trailing bytes"},
  };
  for (const auto& [body, why] : garbled) {
    std::ofstream(reply_file, std::ios::binary) << "GWP1" << le(body.size(), 8) << body;
    PythonOverride env(liar);
    QnnBridge bridge;
    try {
      bridge.probe();
      ADD_FAILURE() << "a garbage answer passed: " << why;
    } catch (const Failure& e) {
      EXPECT_TRUE(contains(e.what(), "the QNN bridge answered garbage to probe")) << e.what();
      EXPECT_TRUE(contains(e.what(), why)) << e.what();
    } catch (const InputError& e) {
      ADD_FAILURE() << "a garbage answer is bad input: " << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}

// A 16 MB input and output through the pipe: a uint16 requantization of 8 Mi elements.
TEST(QnnBridge, SixteenMegabytesThroughTheBridge) {
  QnnBridge& bridge = shared_bridge();
  REQUIRE_ONNXRUNTIME_QNN(bridge);
  constexpr int64_t kElems = 8 << 20;
  const QnnModel models[] = {{"requant", model("requant.onnx")}};
  const QnnCompileResult c = bridge.compile(models, kSm8650, false);
  const std::span<const uint8_t> bins[] = {bytes_of(c.binaries[0])};
  const QnnMethodBinding methods[] = {binding_for("requant", c.graphs[0])};
  const QnnSessionId s = bridge.load(bins, methods, kSm8650);
  std::vector<uint16_t> x(kElems), y(kElems);
  for (int64_t i = 0; i < kElems; ++i) x[i] = static_cast<uint16_t>(32768 + (i % 2001) * 2 - 2000);
  const std::span<const uint8_t> ins[] = {bytes_of(x)};
  const std::span<uint8_t> outs[] = {mutable_bytes_of(y)};
  double best = 1e9, inside = 0;
  for (int t = 0; t < 3; ++t) {
    const auto start = Clock::now();
    bridge.run(s, "requant", ins, outs);
    const double took = seconds_since(start);
    if (took < best) best = took, inside = bridge.last_run_seconds();
  }
  for (int64_t i = 0; i < kElems; i += 4099) {
    const int want = 32768 + static_cast<int>(std::nearbyint((int{x[i]} - 32768) / 2.0));
    ASSERT_LE(std::abs(int{y[i]} - want), 1) << i;
  }
  const double mb = 2.0 * kElems * 2 / 1e6;  // in + out
  std::printf("16 MB in + 16 MB out: %.3f s per run, %.3f s of it in ONNX Runtime; transfer %.0f MB/s\n", best,
              inside, mb / std::max(best - inside, 1e-6));
}

}  // namespace
}  // namespace genai
