// The one list of kernel signatures. Every kernel has a scalar build (scalar_kernels.h, the
// definition of its result) and a vectorised one (simd_kernels.h, Highway dynamic dispatch); their
// declarations, the Highway export tables, the dispatching wrappers and the scalar fallbacks are
// all generated from these lists, one per kernel family (one simd_<family>.cpp each).
//
// Entry: X(name, Impl, (parameters), (arguments)): kernels::scalar::name and kernels::simd::name
// take the parameters; Impl is the per-target function in simd_<family>.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/packed_linear.h"
#include "kernels/quantize.h"
#include "kernels/quantized_add.h"
#include "kernels/quantized_matmul.h"
#include "kernels/quantized_rope.h"

#define GENAI_KERNELS_QUANTIZE(X)                                                                              \
  X(quantize, QuantizeImpl, (const float* x, int64_t n, const QParams& p, ActType t, void* q), (x, n, p, t, q)) \
  X(dequantize, DequantizeImpl, (const void* q, ActType t, int64_t n, const QParams& p, float* x),             \
    (q, t, n, p, x))                                                                                             \
  X(quantize_floor, QuantizeFloorImpl, (const float* x, int64_t n, const QParams& p, ActType t, void* q),       \
    (x, n, p, t, q))                                                                                             \
  X(round_to_f16, RoundToF16Impl, (float* x, int64_t n), (x, n))                                                \
  X(widen_f16, WidenF16Impl, (const uint16_t* h, int64_t n, float* x), (h, n, x))                                \
  X(shrink_errors, ShrinkErrorsImpl,                                                                             \
    (const float* w, int64_t n, const float* scales, int64_t m, float qmin, float qmax, float* errs),           \
    (w, n, scales, m, qmin, qmax, errs))                                                                         \
  X(add_q, AddQImpl,                                                                                             \
    (const void* a, ActType at, int64_t a_step, const void* b, ActType bt, int64_t b_step, int64_t n,            \
     const HtpAdd& p, ActType yt, void* y),                                                                      \
    (a, at, a_step, b, bt, b_step, n, p, yt, y))                                                               \
  X(softmax_q, SoftmaxQImpl, (const uint16_t* x, int64_t rows, int64_t n, float x_scale, uint16_t* y),         \
    (x, rows, n, x_scale, y))                                                                                    \
  X(rope_q, RopeQImpl,                                                                                           \
    (const uint16_t* x, const uint16_t* cos, const uint16_t* sin, int64_t seq, int64_t d, const HtpRope& p,      \
     uint16_t* y),                                                                                               \
    (x, cos, sin, seq, d, p, y))

// linear_q: w.bits 4 or 8 with w.block_size 0 or a multiple of 4 up to 128 (int32 lanes stay
// exact), or w.bits 16 per channel, in the vectorised build.
#define GENAI_KERNELS_LINEAR(X)                                                                                  \
  X(linear_q, LinearQImpl,                                                                                       \
    (const void* x, ActType xt, int64_t rows, const QParams& ex, const PackedLinear& w, const float* bias,       \
     const QParams& ey, ActType yt, void* y),                                                                    \
    (x, xt, rows, ex, w, bias, ey, yt, y))                                                                       \
  X(linear_f16, LinearF16Impl,                                                                                   \
    (const float* x, int64_t rows, const uint16_t* w, int64_t out_features, int64_t in_features,                 \
     const float* bias, float* y),                                                                               \
    (x, rows, w, out_features, in_features, bias, y))                                                            \
  X(linear_f32, LinearF32Impl,                                                                                   \
    (const float* x, int64_t rows, const float* w, int64_t out_features, int64_t in_features,                    \
     const float* bias, float* y),                                                                               \
    (x, rows, w, out_features, in_features, bias, y))

#define GENAI_KERNELS_MATMUL(X)                                                                                  \
  X(matmul_q, MatmulQImpl,                                                                                       \
    (const void* a, ActType at, const QParams& ea, const void* b, ActType bt, const QParams& eb, int64_t M,      \
     int64_t K, int64_t N, const std::vector<MatmulBatch>& batches, const QParams& ey, ActType yt, void* y),     \
    (a, at, ea, b, bt, eb, M, K, N, batches, ey, yt, y))                                                         \
  X(matmul_f32, MatmulF32Impl,                                                                                   \
    (const float* a, const float* b, int64_t M, int64_t K, int64_t N, const std::vector<MatmulBatch>& batches,   \
     float* y),                                                                                                  \
    (a, b, M, K, N, batches, y))

#define GENAI_KERNELS_FLOAT_OPS(X)                                                                               \
  X(rms_norm, RmsNormImpl, (const float* x, int64_t rows, int64_t dim, const float* weight, float eps, float* y), \
    (x, rows, dim, weight, eps, y))                                                                              \
  X(softmax, SoftmaxImpl, (float* x, int64_t rows, int64_t n), (x, rows, n))                                    \
  X(silu, SiluImpl, (float* x, int64_t n), (x, n))                                                               \
  X(silu_q, SiluQImpl, (const uint16_t* x, int64_t n, const QParams& ex, const QParams& ey, uint16_t* y),       \
    (x, n, ex, ey, y))                                                                                           \
  X(rope, RopeImpl,                                                                                              \
    (const float* x, int64_t heads, int64_t seq, int64_t head_dim, const float* cos, const float* sin, float* y), \
    (x, heads, seq, head_dim, cos, sin, y))                                                                      \
  X(add, AddImpl, (const float* a, const float* b, int64_t n, float* y), (a, b, n, y))                          \
  X(mul, MulImpl, (const float* a, const float* b, int64_t n, float* y), (a, b, n, y))

#define GENAI_KERNELS(X)    \
  GENAI_KERNELS_QUANTIZE(X) \
  GENAI_KERNELS_LINEAR(X)   \
  GENAI_KERNELS_MATMUL(X)   \
  GENAI_KERNELS_FLOAT_OPS(X)

// Generators for the lists above.
#define GENAI_KERNEL_DECLARE(name, impl, params, args) void name params;
// simd::name calling scalar::name (builds without Highway).
#define GENAI_KERNEL_FORWARD_TO_SCALAR(name, impl, params, args) \
  void name params { scalar::name args; }
// Impl calling scalar::name (Highway's one-lane HWY_SCALAR target).
#define GENAI_KERNEL_IMPL_FORWARD_TO_SCALAR(name, impl, params, args) \
  void impl params { scalar::name args; }
// Export table of Impl and simd::name dispatching through it (HWY_ONCE part of a family file).
#define GENAI_KERNEL_DISPATCH(name, impl, params, args) \
  HWY_EXPORT(impl);                                     \
  void name params { HWY_DYNAMIC_DISPATCH(impl) args; }
