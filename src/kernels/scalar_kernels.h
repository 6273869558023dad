// Internal: the scalar build of every kernel (the definition of each result). The public
// functions call these when kernel_mode() is kScalar, when no vectorised target exists, or for
// shapes the vectorised build does not take (see the *_simd_ok checks in the .cpp files).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/packed_linear.h"
#include "kernels/quantize.h"
#include "kernels/quantized_matmul.h"

namespace genai::kernels {

// True when kernel_mode() is kSimd and a vectorised target is compiled in and supported here.
bool use_simd();

namespace scalar {
void quantize(const float* x, int64_t n, const QParams& p, ActType t, void* q);
void dequantize(const void* q, ActType t, int64_t n, const QParams& p, float* x);
void round_to_f16(float* x, int64_t n);
void linear_q(const void* x, ActType xt, int64_t rows, const QParams& ex, const PackedLinear& w, const float* bias,
              const QParams& ey, ActType yt, void* y);
void linear_f16(const float* x, int64_t rows, const uint16_t* w, int64_t out_features, int64_t in_features,
                const float* bias, float* y);
void matmul_q(const void* a, ActType at, const QParams& ea, const void* b, ActType bt, const QParams& eb, int64_t M,
              int64_t K, int64_t N, const std::vector<MatmulBatch>& batches, const QParams& ey, ActType yt, void* y);
void matmul_f32(const float* a, const float* b, int64_t M, int64_t K, int64_t N, const std::vector<MatmulBatch>& batches,
                float* y);
void rms_norm(const float* x, int64_t rows, int64_t dim, const float* weight, float eps, float* y);
void softmax(float* x, int64_t rows, int64_t n);
void silu(float* x, int64_t n);
void rope(const float* x, int64_t heads, int64_t seq, int64_t head_dim, const float* cos, const float* sin, float* y);
void add(const float* a, const float* b, int64_t n, float* y);
void mul(const float* a, const float* b, int64_t n, float* y);
}  // namespace scalar

}  // namespace genai::kernels
