// The float16 program (htp --use_fp16, gpu) against the QDQ reference with the fp16 recipe, and
// the capability checks of both backends.
#include <gtest/gtest.h>

#include <cmath>

#include "backend_test_util.h"
#include "core/error.h"
#include "kernels/kernel_mode.h"

namespace genai::backends_testing {
namespace {

// Distance in float16 steps: both values are float16-representable (each program output is
// rounded to float16), so their half bit patterns are ordered like the values.
int64_t f16_steps(float a, float b) {
  auto ordered = [](float v) {
    const int32_t h = f32_to_f16(v);
    return (h & 0x8000) ? -(h & 0x7fff) : h;
  };
  return std::abs(static_cast<int64_t>(ordered(a)) - ordered(b));
}

struct Fp16Result {
  int64_t worst_steps = 0;
  double worst_relative = 0;  // |a - b| / max|reference| of that output
  int64_t compared = 0;
};

Fp16Result compare_float_program(const char* backend_name, const quant::QuantizedModel& q, const std::string& name,
                                 bool use_fp16_flag) {
  backends::register_builtin_backends();
  const compile::Backend* backend = compile::find_backend(backend_name);
  const auto& bundle = q.bundles.at(pipeline::parse_graph_name(name));
  auto t = target_for("SM8650", true, use_fp16_flag,
                      std::string_view(backend_name) == "gpu" ? target::BackendType::kGpuBackend
                                                              : target::BackendType::kHtpBackend);
  auto l = lower_and_init(*backend, name, bundle, t);
  for (const auto& io : l->method.inputs)
    EXPECT_TRUE(io.dtype == DType::kF32 || io.dtype == DType::kI32) << io.name;
  quant::QdqExecutor qdq(q.graphs, q.encodings);
  Fp16Result r;
  for (int k = 0; k < 3; ++k) {
    Call c = make_call(*l->exec, nullptr, 89, k * 3, 40 + k);
    execute(*l, c);
    const auto ref = run_reference(qdq, name, c);
    const auto& outs = l->exec->outputs();
    for (size_t j = 0; j < outs.size(); ++j) {
      const float* p = reinterpret_cast<const float*>(c.outputs[j].data());
      const Tensor& want = ref.at(outs[j].name);
      float scale = 0;
      for (int64_t i = 0; i < want.numel(); ++i) scale = std::max(scale, std::abs(want.data<float>()[i]));
      for (int64_t i = 0; i < want.numel(); ++i) {
        const float a = p[i], b = want.data<float>()[i];
        EXPECT_EQ(a, quant::round_to_f16(a)) << "output not float16-rounded";
        r.worst_steps = std::max(r.worst_steps, f16_steps(a, b));
        r.worst_relative = std::max(r.worst_relative, static_cast<double>(std::abs(a - b)) / std::max(scale, 1e-6f));
        ++r.compared;
      }
    }
  }
  return r;
}

// Tolerance: the QDQ reference sums each float16 linear sequentially in float32, the kernels
// (vectorised, or with partial sums) in another order; that moves a float32 sum by a few ulps,
// which flips float16 rounding of a result now and then, and a flipped rounding propagates
// through later layers. Two layers of a random model keep it to a few float16 steps relative to
// each output's largest value (measured: see the report).
constexpr double kRelativeTolerance = 4e-3;

TEST(Float16Program, HtpUseFp16AndGpuMatchTheFp16Reference) {
  const auto model = block_friendly_model();
  const auto q = quantize(model, "fp16", graph::ModelMode::kHybrid);
  for (const char* backend : {"htp", "gpu"})
    for (const char* name : {"kv_forward", "prefill_forward"})
      for (auto mode : {kernels::KernelMode::kScalar, kernels::KernelMode::kSimd}) {
        const auto saved = kernels::kernel_mode();
        kernels::set_kernel_mode(mode);
        const Fp16Result r = compare_float_program(backend, q, name, false);
        kernels::set_kernel_mode(saved);
        EXPECT_GT(r.compared, 500);
        // Scalar kernels sum in the reference's order: bit-identical.
        if (mode == kernels::KernelMode::kScalar) {
          EXPECT_EQ(r.worst_steps, 0) << backend << " " << name;
        }
        EXPECT_LE(r.worst_relative, kRelativeTolerance) << backend << " " << name << " steps " << r.worst_steps;
        RecordProperty(std::string(backend) + "_" + name + (mode == kernels::KernelMode::kScalar ? "_scalar" : "_simd") +
                           "_worst_f16_steps",
                       static_cast<int>(r.worst_steps));
        RecordProperty(std::string(backend) + "_" + name + (mode == kernels::KernelMode::kScalar ? "_scalar" : "_simd") +
                           "_worst_relative",
                       fmt::format("{:.2e}", r.worst_relative));
      }
}

// --use_fp16 on a quantized bundle: the float16 program from the float weights.
TEST(Float16Program, UseFp16IgnoresIntegerEncodings) {
  backends::register_builtin_backends();
  const auto model = block_friendly_model();
  const auto q = quantize(model, "16a8w", graph::ModelMode::kKv);
  const compile::Backend* htp = compile::find_backend("htp");
  auto t = target_for("SM8650", false, true);
  const auto m = htp->lower("kv_forward", q.bundles.at(pipeline::GraphName::kKvForward), t);
  for (const auto& io : m.outputs) EXPECT_EQ(io.dtype, DType::kF32) << io.name;
  // The fp16 program of the same float weights as the fp16 recipe's: identical named data.
  const auto qf = quantize(model, "fp16", graph::ModelMode::kKv);
  const auto mf = htp->lower("kv_forward", qf.bundles.at(pipeline::GraphName::kKvForward), t);
  ASSERT_EQ(m.named_data.size(), mf.named_data.size());
  for (size_t i = 0; i < m.named_data.size(); ++i) EXPECT_EQ(m.named_data[i], mf.named_data[i]);
}

TEST(CheckSupport, NamesTheOffenderAndTheSoc) {
  backends::register_builtin_backends();
  const compile::Backend* htp = compile::find_backend("htp");
  const compile::Backend* gpu = compile::find_backend("gpu");
  ASSERT_TRUE(htp && gpu);
  EXPECT_EQ(htp->delegate_id(), "GenaiHtpBackend");
  EXPECT_EQ(gpu->delegate_id(), "GenaiGpuBackend");
  EXPECT_EQ(compile::find_backend(target::BackendType::kGpuBackend), gpu);
  const auto model = block_friendly_model();
  const auto q4 = quantize(model, "16a4w", graph::ModelMode::kKv);
  const auto q8 = quantize(model, "16a8w", graph::ModelMode::kKv);
  const auto qf = quantize(model, "fp16", graph::ModelMode::kKv);
  const auto& b4 = q4.bundles.at(pipeline::GraphName::kKvForward);
  const auto& b8 = q8.bundles.at(pipeline::GraphName::kKvForward);
  const auto& bf = qf.bundles.at(pipeline::GraphName::kKvForward);

  // int4 weights need V73+: SM8450 is V69.
  const auto why = htp->check_support(b4, target_for("SM8450", true));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("int4"), std::string::npos) << *why;
  EXPECT_NE(why->find("SM8450"), std::string::npos) << *why;
  EXPECT_NE(why->find("layers.0."), std::string::npos) << *why;
  EXPECT_FALSE(htp->check_support(b4, target_for("SM8550", true)).has_value());
  EXPECT_FALSE(htp->check_support(b8, target_for("SM8450", true)).has_value());
  EXPECT_THROW(htp->lower("kv_forward", b4, target_for("SM8450", true)), Failure);

  // float16 on the HTP needs V69+: SM8350 is V68.
  const auto fp = htp->check_support(b8, target_for("SM8350", true, /*fp16=*/true));
  ASSERT_TRUE(fp.has_value());
  EXPECT_NE(fp->find("float16"), std::string::npos) << *fp;
  EXPECT_NE(fp->find("SM8350"), std::string::npos) << *fp;
  EXPECT_NE(fp->find("--use_fp16"), std::string::npos) << *fp;
  EXPECT_TRUE(htp->check_support(bf, target_for("SM8350", true)).has_value());
  EXPECT_FALSE(htp->check_support(bf, target_for("SM8450", true)).has_value());

  // gpu: float programs only.
  const auto g8 = gpu->check_support(b8, target_for("SM8650", true, false, target::BackendType::kGpuBackend));
  ASSERT_TRUE(g8.has_value());
  EXPECT_NE(g8->find("gpu"), std::string::npos) << *g8;
  EXPECT_NE(g8->find("quantized"), std::string::npos) << *g8;
  EXPECT_NE(g8->find("SM8650"), std::string::npos) << *g8;
  EXPECT_FALSE(gpu->check_support(bf, target_for("SM8350", true, false, target::BackendType::kGpuBackend)).has_value());
}

TEST(Registry, RegistrationIsIdempotent) {
  backends::register_builtin_backends();
  backends::register_builtin_backends();
  const auto ids = runtime::backend_executor_ids();
  EXPECT_EQ(std::count(ids.begin(), ids.end(), "GenaiHtpBackend"), 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), "GenaiGpuBackend"), 1);
  const auto names = compile::backend_names();
  EXPECT_EQ(std::count(names.begin(), names.end(), "htp"), 1);
  EXPECT_EQ(std::count(names.begin(), names.end(), "gpu"), 1);
}

}  // namespace
}  // namespace genai::backends_testing
