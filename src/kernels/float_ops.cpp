#include "kernels/float_ops.h"

#include <algorithm>
#include <cmath>

#include "kernels/float_arith.h"
#include "kernels/scalar_kernels.h"
#include "kernels/simd_kernels.h"

namespace genai::kernels {

// Each scalar op is the graph interpreter's formula (src/graph/interpreter.cpp calls these), so
// scalar kernels reproduce the QDQ reference bit for bit; exp and the double sums are float_arith.h's,
// which the vectorised build repeats lane by lane.
namespace scalar {

void rms_norm(const float* x, int64_t rows, int64_t dim, const float* weight, float eps, float* y) {
  const double e = static_cast<double>(eps);
  for (int64_t r = 0; r < rows; ++r) {
    const float* src = x + r * dim;
    float* dst = y + r * dim;
    const double ss = ordered_sum(src, dim, [](float v) { return static_cast<double>(v) * v; });
    const float inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(dim) + e));
    for (int64_t i = 0; i < dim; ++i) dst[i] = weight[i] * (src[i] * inv);
  }
}

void layer_norm(const float* x, int64_t rows, int64_t dim, const float* weight, const float* bias, float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* src = x + r * dim;
    float* dst = y + r * dim;
    double sum = 0, ss = 0;
    for (int64_t i = 0; i < dim; ++i) sum += src[i];
    const double mean = sum / static_cast<double>(dim);
    for (int64_t i = 0; i < dim; ++i) ss += (src[i] - mean) * (src[i] - mean);
    const float inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(dim) + static_cast<double>(eps)));
    const float m = static_cast<float>(mean);
    for (int64_t i = 0; i < dim; ++i) dst[i] = weight[i] * ((src[i] - m) * inv) + bias[i];
  }
}

void softmax(float* x, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    float* v = x + r * n;
    float mx = v[0];
    for (int64_t i = 1; i < n; ++i) mx = std::max(mx, v[i]);
    for (int64_t i = 0; i < n; ++i) v[i] = exp_f32(v[i] - mx);
    const double sum = ordered_sum(v, n, [](float e) { return static_cast<double>(e); });
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t i = 0; i < n; ++i) v[i] *= inv;
  }
}

void silu(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + exp_f32(-x[i]));
}

void tanh_inplace(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
}

void gelu_tanh(float* x, int64_t n) {
  // PyTorch's float formula: beta = sqrt(2) * (2 / sqrt(pi)) / 2, kappa = 0.044715.
  constexpr float kBeta = 0.7978845608028654f, kKappa = 0.044715f;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    x[i] = 0.5f * v * (1.0f + std::tanh(kBeta * (v + kKappa * v * v * v)));
  }
}

void gelu(float* x, int64_t n) {
  // PyTorch's float formula: x * 0.5 * (1 + erf(x * M_SQRT1_2)).
  constexpr float kInvSqrt2 = 0.70710678118654752440f;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    x[i] = v * 0.5f * (1.0f + std::erf(v * kInvSqrt2));
  }
}

void rope(const float* x, int64_t heads, int64_t seq, int64_t head_dim, const float* cos, const float* sin, float* y) {
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t s = 0; s < seq; ++s) {
      const float* src = x + (h * seq + s) * head_dim;
      const float* c = cos + s * head_dim;
      const float* sn = sin + s * head_dim;
      float* dst = y + (h * seq + s) * head_dim;
      // Compute the rotated half before writing, so y may alias x.
      for (int64_t d = 0; d < half; ++d) {
        const float lo = src[d], hi = src[d + half];
        const float out_lo = lo * c[d] + (-hi) * sn[d];
        const float out_hi = hi * c[d + half] + lo * sn[d + half];
        dst[d] = out_lo;
        dst[d + half] = out_hi;
      }
      if (head_dim % 2 != 0) {  // odd head_dim: the last element rotates with src[d - half]
        const int64_t d = head_dim - 1;
        dst[d] = src[d] * c[d] + src[d - half] * sn[d];
      }
    }
}

void add(const float* a, const float* b, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void mul(const float* a, const float* b, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}

}  // namespace scalar

void rms_norm(const float* x, int64_t rows, int64_t dim, const float* weight, float eps, float* y) {
  if (rows <= 0 || dim <= 0) return;
  if (use_simd()) simd::rms_norm(x, rows, dim, weight, eps, y);
  else scalar::rms_norm(x, rows, dim, weight, eps, y);
}

void softmax(float* x, int64_t rows, int64_t n) {
  if (rows <= 0 || n <= 0) return;
  if (use_simd()) simd::softmax(x, rows, n);
  else scalar::softmax(x, rows, n);
}

void silu(float* x, int64_t n) {
  if (n <= 0) return;
  if (use_simd()) simd::silu(x, n);
  else scalar::silu(x, n);
}

void gelu_tanh(float* x, int64_t n) {
  if (n > 0) scalar::gelu_tanh(x, n);
}

void tanh_inplace(float* x, int64_t n) {
  if (n > 0) scalar::tanh_inplace(x, n);
}

void gelu(float* x, int64_t n) {
  if (n > 0) scalar::gelu(x, n);
}

void layer_norm(const float* x, int64_t rows, int64_t dim, const float* weight, const float* bias, float eps, float* y) {
  if (rows > 0 && dim > 0) scalar::layer_norm(x, rows, dim, weight, bias, eps, y);
}

void rope(const float* x, int64_t heads, int64_t seq, int64_t head_dim, const float* cos, const float* sin, float* y) {
  if (heads <= 0 || seq <= 0 || head_dim <= 0) return;
  if (use_simd() && head_dim % 2 == 0) simd::rope(x, heads, seq, head_dim, cos, sin, y);
  else scalar::rope(x, heads, seq, head_dim, cos, sin, y);
}

void add(const float* a, const float* b, int64_t n, float* y) {
  if (n <= 0) return;
  if (use_simd()) simd::add(a, b, n, y);
  else scalar::add(a, b, n, y);
}

void mul(const float* a, const float* b, int64_t n, float* y) {
  if (n <= 0) return;
  if (use_simd()) simd::mul(a, b, n, y);
  else scalar::mul(a, b, n, y);
}

}  // namespace genai::kernels
