// Per-op parity on small hand-built graphs, covering shapes the decoder graphs do not use
// (slice, three-way concat, byte-moving transposes, general broadcasting, batched matmul
// broadcast, linear bias with int16 and int4-block weights, gathers): the program's codes equal
// the QDQ reference's with scalar and with SIMD kernels.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <random>

#include "backend_test_util.h"
#include "graph/interpreter.h"
#include "kernels/kernel_mode.h"

namespace genai::backends_testing {
namespace {

using graph::OpKind;

struct OpGraph {
  std::shared_ptr<graph::Graph> g;
  std::shared_ptr<Weights> weights = std::make_shared<Weights>();
  std::map<std::string, Tensor> inputs;  // float / int32 reference inputs
};

Tensor random_tensor(Shape shape, std::mt19937& rng, float scale = 1.0f) {
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  std::normal_distribution<float> nd(0.0f, scale);
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = nd(rng);
  return t;
}

// Encodings from the float ranges of one interpreter run (activations `act`), weights per
// `weight_dtype` / `block`; then the program vs the QDQ reference on those inputs.
int64_t max_difference(OpGraph& og, quant::QDType act, quant::QDType weight_dtype, int64_t block,
                       kernels::KernelMode mode, bool shared = true) {
  backends::register_builtin_backends();
  graph::Graph& g = *og.g;
  graph::InputMap in;
  for (auto& [k, t] : og.inputs) in[k] = &t;
  auto set = std::make_shared<quant::EncodingSet>();
  set->recipe = "test";
  graph::InterpreterOptions io;
  io.observer = [&](const graph::Value& v, const Tensor& t) {
    if (t.dtype() != DType::kF32) return;
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < t.numel(); ++i) {
      lo = std::min(lo, t.data<float>()[i]);
      hi = std::max(hi, t.data<float>()[i]);
    }
    set->activations[v.name] = quant::asymmetric_encoding(act, lo, hi);
  };
  graph::interpret(g, in, io);
  for (auto id : g.inputs()) {
    const auto& v = g.value(id);
    if (v.type.dtype != DType::kF32) continue;
    const Tensor& t = og.inputs.at(v.name);
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < t.numel(); ++i) {
      lo = std::min(lo, t.data<float>()[i]);
      hi = std::max(hi, t.data<float>()[i]);
    }
    set->activations[v.name] = quant::asymmetric_encoding(act, lo, hi);
  }
  // Passthrough results share their operand's encoding.
  for (const auto& op : g.ops())
    if (quant::is_passthrough(op.kind)) set->activations[g.value(op.result).name] = set->activations.at(g.value(op.operands[0]).name);
  for (const auto& op : g.ops()) {
    const bool linear = op.kind == OpKind::kLinear;
    const bool table = op.kind == OpKind::kGather && g.value(op.operands[0]).kind == graph::ValueKind::kWeight;
    if (!linear && !table) continue;
    const auto& wv = g.value(op.operands[linear ? 1 : 0]);
    const Tensor& w = og.weights->get(wv.name);
    set->weights[wv.name] = std::make_shared<quant::WeightEncoding>(
        quant::quantize_weight(wv.name, w.data<float>(), w.dim(0), w.dim(1), weight_dtype, linear ? block : 0));
  }
  std::vector<pipeline::InputSpec> specs;
  for (auto id : g.inputs()) specs.push_back({g.value(id).name, g.value(id).type.dtype, g.value(id).type.shape});
  const pipeline::GraphBundle bundle(og.g, specs, {}, quant::quant_io_dtypes(g, *set), {}, {}, set);

  const auto saved = kernels::kernel_mode();
  kernels::set_kernel_mode(mode);
  auto l = lower_and_init(*compile::find_backend("htp"), "kv_forward", bundle, target_for("SM8650", shared));
  Call c;
  for (const auto& io : l->exec->inputs()) {
    const Tensor& t = og.inputs.at(io.name);
    std::vector<uint8_t> bytes(static_cast<size_t>(t.numel()) * dtype_size(io.dtype));
    if (io.dtype == DType::kI32) std::memcpy(bytes.data(), t.raw(), bytes.size());
    else
      for (int64_t i = 0; i < t.numel(); ++i) {
        const int64_t q = quant::quantize_value(t.data<float>()[i], set->activations.at(io.name));
        if (io.dtype == DType::kU8) bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(q);
        else reinterpret_cast<uint16_t*>(bytes.data())[i] = static_cast<uint16_t>(q);
      }
    c.inputs.push_back(std::move(bytes));
    c.reference_inputs.emplace(io.name, t);
  }
  for (const auto& io : l->exec->outputs())
    c.outputs.emplace_back(static_cast<size_t>(shape_numel(io.shape)) * dtype_size(io.dtype), 0);
  execute(*l, c);
  graph::GraphMap graphs{{"kv_forward", og.g}};
  quant::QdqExecutor qdq(graphs, {{"kv_forward", set}});
  const auto ref = run_reference(qdq, "kv_forward", c);
  kernels::set_kernel_mode(saved);
  int64_t worst = 0;
  for (size_t j = 0; j < l->exec->outputs().size(); ++j) {
    const Codes codes = output_codes(g, *set, l->exec->outputs()[j], c.outputs[j], ref.at(l->exec->outputs()[j].name));
    for (size_t i = 0; i < codes.program.size(); ++i)
      worst = std::max(worst, std::abs(codes.program[i] - codes.reference[i]));
  }
  return worst;
}

void expect_parity(OpGraph& og, quant::QDType act, quant::QDType w = quant::QDType::kI8, int64_t block = 0) {
  for (bool shared : {true, false}) {
    EXPECT_EQ(max_difference(og, act, w, block, kernels::KernelMode::kScalar, shared), 0) << "shared " << shared;
    EXPECT_EQ(max_difference(og, act, w, block, kernels::KernelMode::kSimd, shared), 0) << "shared " << shared;
  }
}

TEST(OpParity, PassthroughMoves) {
  std::mt19937 rng(1);
  OpGraph og;
  og.g = std::make_shared<graph::Graph>("kv_forward", og.weights);
  auto& g = *og.g;
  const auto a = g.add_input("a", DType::kF32, {2, 3, 5});
  const auto b = g.add_input("b", DType::kF32, {2, 3, 2});
  og.inputs["a"] = random_tensor({2, 3, 5}, rng);
  og.inputs["b"] = random_tensor({2, 3, 2}, rng);
  // One encoding for the concat operands: route both through a silu-free add-free path by
  // concatenating `a` with slices of itself, then a byte-moving transpose and a reshape.
  const auto s1 = g.add_op(OpKind::kSlice, {a}, "s1", {{"axis", int64_t{2}}, {"start", int64_t{1}}, {"end", int64_t{4}}});
  const auto s2 = g.add_op(OpKind::kSlice, {a}, "s2", {{"axis", int64_t{-1}}, {"start", int64_t{0}}, {"end", int64_t{2}}});
  const auto cat = g.add_op(OpKind::kConcat, {s1, a, s2}, "cat", {{"axis", int64_t{2}}});
  const auto tr = g.add_op(OpKind::kTranspose, {cat}, "tr", {{"perm", std::vector<int64_t>{2, 0, 1}}});
  const auto rs = g.add_op(OpKind::kReshape, {tr}, "rs", {{"shape", std::vector<int64_t>{10, 6}}});
  const auto sm = g.add_op(OpKind::kSoftmax, {rs}, "sm");
  const auto tb = g.add_op(OpKind::kTranspose, {b}, "tb", {{"perm", std::vector<int64_t>{0, 2, 1}}});
  g.add_output("sm", sm);
  g.add_output("rs", rs);
  g.add_output("tb", tb);
  expect_parity(og, quant::QDType::kU8);
  expect_parity(og, quant::QDType::kU16);
}

TEST(OpParity, BroadcastAddMulSiluNormRope) {
  std::mt19937 rng(2);
  OpGraph og;
  og.weights->add("gamma", random_tensor({8}, rng, 0.3f));
  og.g = std::make_shared<graph::Graph>("kv_forward", og.weights);
  auto& g = *og.g;
  const auto a = g.add_input("a", DType::kF32, {2, 1, 8});
  const auto b = g.add_input("b", DType::kF32, {1, 3, 1});
  og.inputs["a"] = random_tensor({2, 1, 8}, rng);
  og.inputs["b"] = random_tensor({1, 3, 1}, rng);
  auto scalar = std::make_shared<Tensor>(Tensor::zeros(DType::kF32, {1}));
  scalar->mutable_data<float>()[0] = 0.37f;
  const auto k = g.add_constant("k", scalar);
  const auto sum = g.add_op(OpKind::kAdd, {a, b}, "sum");              // general broadcast
  const auto prod = g.add_op(OpKind::kMul, {sum, k}, "prod");          // scalar b
  const auto prod2 = g.add_op(OpKind::kMul, {k, prod}, "prod2");       // scalar a
  const auto rep = g.add_op(OpKind::kAdd, {prod2, a}, "rep");          // a repeats along axis 1
  const auto act = g.add_op(OpKind::kSilu, {rep}, "act");
  const auto norm = g.add_op(OpKind::kRmsNorm, {act, g.add_weight("gamma")}, "norm", {{"eps", 1e-5}});
  const auto x4 = g.add_op(OpKind::kReshape, {norm}, "x4", {{"shape", std::vector<int64_t>{1, 2, 3, 8}}});
  const auto cs = g.add_input("cos", DType::kF32, {1, 3, 8});
  const auto sn = g.add_input("sin", DType::kF32, {1, 3, 8});
  og.inputs["cos"] = random_tensor({1, 3, 8}, rng);
  og.inputs["sin"] = random_tensor({1, 3, 8}, rng);
  const auto rope = g.add_op(OpKind::kRope, {x4, cs, sn}, "rope");
  g.add_output("rope", rope);
  g.add_output("prod", prod);
  expect_parity(og, quant::QDType::kU16);
  expect_parity(og, quant::QDType::kU8);
}

TEST(OpParity, BatchedMatmulBroadcast) {
  std::mt19937 rng(3);
  OpGraph og;
  og.g = std::make_shared<graph::Graph>("kv_forward", og.weights);
  auto& g = *og.g;
  const auto a = g.add_input("a", DType::kF32, {2, 1, 3, 5});
  const auto b = g.add_input("b", DType::kF32, {1, 4, 5, 7});
  og.inputs["a"] = random_tensor({2, 1, 3, 5}, rng);
  og.inputs["b"] = random_tensor({1, 4, 5, 7}, rng);
  g.add_output("y", g.add_op(OpKind::kMatMul, {a, b}, "y"));
  expect_parity(og, quant::QDType::kU16);
  expect_parity(og, quant::QDType::kU8);
}

TEST(OpParity, LinearWithBiasEveryWeightWidth) {
  for (auto [wt, block] : std::vector<std::pair<quant::QDType, int64_t>>{
           {quant::QDType::kI8, 0}, {quant::QDType::kI4, 0}, {quant::QDType::kI4, 32}, {quant::QDType::kI16, 0}, {quant::QDType::kI16, 32}}) {
    std::mt19937 rng(4);
    OpGraph og;
    og.weights->add("w", random_tensor({24, 64}, rng, 0.2f));
    og.weights->add("bias", random_tensor({24}, rng, 0.5f));
    og.g = std::make_shared<graph::Graph>("kv_forward", og.weights);
    auto& g = *og.g;
    const auto x = g.add_input("x", DType::kF32, {1, 3, 64});
    og.inputs["x"] = random_tensor({1, 3, 64}, rng);
    g.add_output("y", g.add_op(OpKind::kLinear, {x, g.add_weight("w"), g.add_weight("bias")}, "y"));
    SCOPED_TRACE(fmt::format("{} block {}", quant::qdtype_name(wt), block));
    expect_parity(og, quant::QDType::kU16, wt, block);
    expect_parity(og, quant::QDType::kU8, wt, block);
  }
}

TEST(OpParity, GatherFromWeightAndConstantTables) {
  for (auto wt : {quant::QDType::kI8, quant::QDType::kI16, quant::QDType::kI4}) {
    std::mt19937 rng(5);
    OpGraph og;
    og.weights->add("table", random_tensor({11, 6}, rng));
    og.g = std::make_shared<graph::Graph>("kv_forward", og.weights);
    auto& g = *og.g;
    const auto idx = g.add_input("idx", DType::kI32, {1, 4});
    Tensor ids = Tensor::zeros(DType::kI32, {1, 4});
    for (int i = 0; i < 4; ++i) ids.mutable_data<int32_t>()[i] = (i * 7 + 3) % 11;
    og.inputs["idx"] = ids;
    const auto c = g.add_constant("ctable", std::make_shared<Tensor>(random_tensor({11, 5}, rng)));
    g.add_output("e", g.add_op(OpKind::kGather, {g.add_weight("table"), idx}, "e"));
    g.add_output("r", g.add_op(OpKind::kGather, {c, idx}, "r"));
    expect_parity(og, quant::QDType::kU16, wt);
    expect_parity(og, quant::QDType::kU8, wt);
  }
}

}  // namespace
}  // namespace genai::backends_testing
