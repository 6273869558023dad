// Float ops: the scalar build equals the graph interpreter (a one-op graph) bit for bit, and so
// does the vectorised build. exp_f32 stays within 2 ulp of the C library's exp.
// quantize / dequantize / round_to_f16 equal quant:: exactly.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <limits>
#include <memory>
#include <random>

#include <gtest/gtest.h>

#include "core/half.h"
#include "graph/graph.h"
#include "graph/interpreter.h"
#include "kernels/float_arith.h"
#include "kernels/float_ops.h"
#include "kernel_test_util.h"

namespace genai::kernels {
namespace {

using graph::OpKind;
using testing::ScopedMode;

Tensor tensor_of(const std::vector<float>& v, Shape shape) {
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  std::memcpy(t.mutable_data<float>(), v.data(), v.size() * sizeof(float));
  return t;
}

std::vector<float> values_of(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.numel()}; }

// Runs a one-op graph: operands are graph inputs named in0, in1, ...
std::vector<float> interpret_op(OpKind kind, const std::vector<std::pair<std::vector<float>, Shape>>& operands,
                                graph::Attrs attrs = {}) {
  graph::Graph g("one_op", nullptr);
  std::vector<graph::ValueId> ids;
  std::vector<Tensor> tensors;
  graph::InputMap inputs;
  for (size_t i = 0; i < operands.size(); ++i) {
    ids.push_back(g.add_input("in" + std::to_string(i), DType::kF32, operands[i].second));
    tensors.push_back(tensor_of(operands[i].first, operands[i].second));
  }
  for (size_t i = 0; i < operands.size(); ++i) inputs["in" + std::to_string(i)] = &tensors[i];
  g.add_output("out", g.add_op(kind, ids, "out", std::move(attrs)));
  return values_of(graph::interpret(g, inputs).at("out"));
}

// Largest difference in 16-bit quantization steps after quantizing both with one encoding.
int64_t max_step_difference(const std::vector<float>& a, const std::vector<float>& b) {
  float lo = 0, hi = 0;
  for (float v : a) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const auto e = quant::asymmetric_encoding(quant::QDType::kU16, lo, hi);
  int64_t worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::abs(quant::quantize_value(a[i], e) - quant::quantize_value(b[i], e)));
  return worst;
}

// The vectorised build gives the scalar build's bits (float_arith.h), so requantized codes agree.
void expect_same_bits(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0) << what << " at " << i << ": " << got[i] << " vs " << want[i];
  EXPECT_EQ(max_step_difference(want, got), 0) << what;
}

TEST(FloatOps, RmsNorm) {
  std::mt19937 rng(1);
  for (int64_t dim : {1, 7, 64, 576, 1001}) {
    const int64_t rows = 3;
    auto x = testing::random_floats(rng, static_cast<size_t>(rows * dim), -4, 4);
    const auto w = testing::random_floats(rng, static_cast<size_t>(dim), 0.5f, 1.5f);
    const float eps = 1e-5f;
    const auto want = interpret_op(OpKind::kRmsNorm, {{x, {rows, dim}}, {w, {dim}}}, {{"eps", static_cast<double>(eps)}});
    std::vector<float> y(x.size());
    {
      ScopedMode m(KernelMode::kScalar);
      rms_norm(x.data(), rows, dim, w.data(), eps, y.data());
      EXPECT_EQ(y, want) << dim;
    }
    ScopedMode m(KernelMode::kSimd);
    rms_norm(x.data(), rows, dim, w.data(), eps, y.data());
    expect_same_bits(y, want, "rms_norm");
    rms_norm(x.data(), rows, dim, w.data(), eps, x.data());  // in place
    EXPECT_EQ(x, y);
  }
}

TEST(FloatOps, Softmax) {
  std::mt19937 rng(2);
  for (int64_t n : {1, 5, 16, 64, 333, 2048}) {
    const int64_t rows = 4;
    auto x = testing::random_floats(rng, static_cast<size_t>(rows * n), -20, 10);
    if (n > 3) x[2] = -std::numeric_limits<float>::infinity();  // masked position
    const auto want = interpret_op(OpKind::kSoftmax, {{x, {rows, n}}});
    auto y = x;
    {
      ScopedMode m(KernelMode::kScalar);
      softmax(y.data(), rows, n);
      EXPECT_EQ(y, want) << n;
    }
    y = x;
    ScopedMode m(KernelMode::kSimd);
    softmax(y.data(), rows, n);
    expect_same_bits(y, want, "softmax");
  }
}

TEST(FloatOps, Silu) {
  std::mt19937 rng(3);
  for (int64_t n : {1, 3, 17, 1536, 4099}) {
    auto x = testing::random_floats(rng, static_cast<size_t>(n), -30, 30);
    if (n > 4) {
      x[0] = -100.0f;
      x[1] = 100.0f;
      x[2] = 0.0f;
      x[3] = -88.5f;
    }
    const auto want = interpret_op(OpKind::kSilu, {{x, {n}}});
    auto y = x;
    {
      ScopedMode m(KernelMode::kScalar);
      silu(y.data(), n);
      EXPECT_EQ(y, want) << n;
    }
    y = x;
    ScopedMode m(KernelMode::kSimd);
    silu(y.data(), n);
    expect_same_bits(y, want, "silu");
  }
}

// ulps between two finite floats of one sign.
int64_t ulps_apart(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  return std::abs(static_cast<int64_t>(ia) - ib);
}

TEST(FloatOps, ExpIsWithinTwoUlpOfTheLibraryAndKeepsItsLimits) {
  int64_t worst = 0;
  for (float x = -103.0f; x < 88.7f; x += 0.0137f) {
    const float want = std::exp(x);
    if (want < std::numeric_limits<float>::min()) continue;  // subnormal results: absolute check below
    worst = std::max(worst, ulps_apart(exp_f32(x), want));
  }
  EXPECT_LE(worst, 2);
  EXPECT_EQ(exp_f32(0.0f), 1.0f);
  EXPECT_NEAR(exp_f32(-100.0f), std::exp(-100.0f), 2e-45f);
  EXPECT_EQ(exp_f32(-104.5f), 0.0f);
  EXPECT_EQ(exp_f32(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(exp_f32(88.8f), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(exp_f32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_GT(exp_f32(88.72283935546875f), 3.4e38f);
}

TEST(FloatOps, RopeIsBitExactInBothBuilds) {
  std::mt19937 rng(4);
  for (auto [heads, seq, dim] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 2}, {9, 1, 64}, {3, 5, 64}, {2, 3, 18}}) {
    auto x = testing::random_floats(rng, static_cast<size_t>(heads * seq * dim), -3, 3);
    const auto c = testing::random_floats(rng, static_cast<size_t>(seq * dim), -1, 1);
    const auto s = testing::random_floats(rng, static_cast<size_t>(seq * dim), -1, 1);
    const auto want = interpret_op(OpKind::kRope, {{x, {1, heads, seq, dim}}, {c, {1, seq, dim}}, {s, {1, seq, dim}}});
    for (KernelMode mode : {KernelMode::kScalar, KernelMode::kSimd}) {
      ScopedMode m(mode);
      std::vector<float> y(x.size());
      rope(x.data(), heads, seq, dim, c.data(), s.data(), y.data());
      EXPECT_EQ(y, want);
      auto inplace = x;
      rope(inplace.data(), heads, seq, dim, c.data(), s.data(), inplace.data());
      EXPECT_EQ(inplace, want);
    }
  }
}

TEST(FloatOps, AddAndMulAreBitExactInBothBuilds) {
  std::mt19937 rng(5);
  for (int64_t n : {1, 15, 576, 1000}) {
    const auto a = testing::random_floats(rng, static_cast<size_t>(n), -5, 5);
    const auto b = testing::random_floats(rng, static_cast<size_t>(n), -5, 5);
    const auto want_add = interpret_op(OpKind::kAdd, {{a, {n}}, {b, {n}}});
    const auto want_mul = interpret_op(OpKind::kMul, {{a, {n}}, {b, {n}}});
    for (KernelMode mode : {KernelMode::kScalar, KernelMode::kSimd}) {
      ScopedMode m(mode);
      std::vector<float> y(a.size());
      add(a.data(), b.data(), n, y.data());
      EXPECT_EQ(y, want_add);
      mul(a.data(), b.data(), n, y.data());
      EXPECT_EQ(y, want_mul);
      auto alias = a;
      add(alias.data(), b.data(), n, alias.data());
      EXPECT_EQ(alias, want_add);
    }
  }
}

TEST(Quantize, EqualsQuantValueFunctionsInBothBuilds) {
  std::mt19937 rng(6);
  for (auto dt : {quant::QDType::kU8, quant::QDType::kU16})
    for (auto [lo, hi] : {std::pair<float, float>{-1.0f, 3.0f}, {0.0f, 2.0f}, {-2.0f, 0.0f}}) {
      const auto e = quant::asymmetric_encoding(dt, lo, hi);
      auto x = testing::random_floats(rng, 1003, lo * 1.3f - 0.1f, hi * 1.3f + 0.1f);
      x[0] = std::numeric_limits<float>::infinity();
      x[1] = -std::numeric_limits<float>::infinity();
      x[2] = std::numeric_limits<float>::quiet_NaN();
      x[3] = 1e30f;
      x[4] = e.scale * 2.5f;  // exact ties round to even
      x[5] = e.scale * -3.5f;
      const ActType t = testing::act_type(e);
      const QParams p = testing::qparams(e);
      for (KernelMode mode : {KernelMode::kScalar, KernelMode::kSimd}) {
        ScopedMode m(mode);
        testing::CodeBuffer q(t, x.size());
        quantize(x.data(), static_cast<int64_t>(x.size()), p, t, q.data());
        std::vector<float> back(x.size());
        dequantize(q.data(), t, static_cast<int64_t>(x.size()), p, back.data());
        for (size_t i = 0; i < x.size(); ++i) {
          ASSERT_EQ(q.at(i), quant::quantize_value(x[i], e)) << i << " x " << x[i];
          ASSERT_EQ(back[i], quant::dequantize_value(q.at(i), e)) << i;
        }
      }
    }
}

// rms_norm results floor onto their encoding (the HTP's rounding of RmsNorm): codes step down at
// every fraction, NaN goes to the zero point, the range clamps; quant:: gives the same codes.
TEST(Quantize, FloorForNormResults) {
  const auto e = quant::symmetric_encoding(quant::QDType::kU8, -1.0f, 1.0f);
  ASSERT_EQ(e.zero_point, 128);
  const std::vector<float> x{e.scale * 2.7f, e.scale * 2.2f, e.scale * -0.3f, e.scale * -3.5f, 0.0f,
                             e.scale * 5.0f, std::numeric_limits<float>::quiet_NaN(), 1e30f, -1e30f};
  const std::vector<int32_t> want{130, 130, 127, 124, 128, 133, 128, 255, 0};
  testing::CodeBuffer q(ActType::kU8, x.size());
  quantize_floor(x.data(), static_cast<int64_t>(x.size()), testing::qparams(e), ActType::kU8, q.data());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(q.at(i), want[i]) << i;
    EXPECT_EQ(quant::quantize_value(x[i], e, quant::Rounding::kFloor), want[i]) << i;
  }
  EXPECT_EQ(quant::quantize_value(e.scale * 2.7f, e), 131);  // round half to even elsewhere
}

TEST(Quantize, RoundToF16EqualsTheScalarConversion) {
  std::mt19937 rng(8);
  auto x = testing::random_floats(rng, 999, -70000, 70000);
  const auto small = testing::random_floats(rng, 200, -1e-4f, 1e-4f);  // half subnormals
  x.insert(x.end(), small.begin(), small.end());
  x.push_back(65504.0f);
  x.push_back(65520.0f);  // rounds to infinity
  x.push_back(-65519.0f);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(0.0f);
  x.push_back(-0.0f);
  for (KernelMode mode : {KernelMode::kScalar, KernelMode::kSimd}) {
    ScopedMode m(mode);
    auto y = x;
    round_to_f16(y.data(), static_cast<int64_t>(y.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = quant::round_to_f16(x[i]);
      ASSERT_EQ(std::memcmp(&y[i], &want, sizeof(float)), 0) << i << " x " << x[i] << " got " << y[i] << " want " << want;
    }
    float nan = std::numeric_limits<float>::quiet_NaN();
    round_to_f16(&nan, 1);
    EXPECT_TRUE(std::isnan(nan));
  }
}

TEST(KernelMode, SwitchesAndNamesTheTarget) {
  EXPECT_FALSE(simd_target_name().empty());
  std::printf("vectorised kernels dispatch to %s\n", std::string(simd_target_name()).c_str());
  ScopedMode m(KernelMode::kScalar);
  EXPECT_EQ(kernel_mode(), KernelMode::kScalar);
  set_kernel_mode(KernelMode::kSimd);
  EXPECT_EQ(kernel_mode(), KernelMode::kSimd);
}

}  // namespace
}  // namespace genai::kernels
