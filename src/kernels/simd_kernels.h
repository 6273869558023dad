// Internal: entry points of the vectorised build (simd_kernels.cpp, Highway dynamic dispatch).
// Arguments are validated by the public functions before they get here.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kernels/packed_linear.h"
#include "kernels/quantize.h"
#include "kernels/quantized_matmul.h"

namespace genai::kernels::simd {

// False when built with GENAI_SCALAR_ONLY or when the best target here has no usable vectors.
bool available();
std::string_view target_name();

void quantize(const float* x, int64_t n, const QParams& p, ActType t, void* q);
void dequantize(const void* q, ActType t, int64_t n, const QParams& p, float* x);
void round_to_f16(float* x, int64_t n);
// w.bits 4 or 8 with w.block_size 0 or a multiple of 4 up to 128 (int32 lanes stay exact), or
// w.bits 16 per channel.
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

}  // namespace genai::kernels::simd
