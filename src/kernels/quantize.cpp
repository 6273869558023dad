#include "kernels/quantize.h"

#include <algorithm>
#include <cmath>

#include "core/half.h"
#include "kernels/scalar_kernels.h"
#include "kernels/simd_kernels.h"
#include "kernels/requantize.h"

namespace genai::kernels {

namespace {

// x / scale rounded by `Round` (kernels/requantize.h) and clamped, plus the zero point.
template <float (*Round)(float, float, float)>
void quantize_rounded(const float* x, int64_t n, const QParams& p, ActType t, void* q) {
  const float lo = static_cast<float>(p.qmin - p.zero_point), hi = static_cast<float>(p.qmax - p.zero_point);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = static_cast<int32_t>(Round(x[i] / p.scale, lo, hi)) + p.zero_point;
    if (t == ActType::kU8) static_cast<uint8_t*>(q)[i] = static_cast<uint8_t>(v);
    else static_cast<uint16_t*>(q)[i] = static_cast<uint16_t>(v);
  }
}

}  // namespace

namespace scalar {

// quant::quantize_value: round half even of x / scale, clamped in float (no integer overflow
// for huge or infinite x), NaN -> zero point.
void quantize(const float* x, int64_t n, const QParams& p, ActType t, void* q) { quantize_rounded<requantize>(x, n, p, t, q); }

void dequantize(const void* q, ActType t, int64_t n, const QParams& p, float* x) {
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = t == ActType::kU8 ? static_cast<const uint8_t*>(q)[i] : static_cast<const uint16_t*>(q)[i];
    x[i] = static_cast<float>(v - p.zero_point) * p.scale;
  }
}

void round_to_f16(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = f16_to_f32(f32_to_f16(x[i]));
}

void widen_f16(const uint16_t* h, int64_t n, float* x) {
  for (int64_t i = 0; i < n; ++i) x[i] = f16_to_f32(h[i]);
}

void quantize_floor(const float* x, int64_t n, const QParams& p, ActType t, void* q) {
  quantize_rounded<requantize_floor>(x, n, p, t, q);
}

void shrink_errors(const float* w, int64_t n, const float* scales, int64_t m, float qmin, float qmax, float* errs) {
  for (int64_t k = 0; k < m; ++k) {
    float err = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
      const float d = requantize(w[i] / scales[k], qmin, qmax) * scales[k] - w[i];
      err += d * d;
    }
    errs[k] = err;
  }
}

}  // namespace scalar

void quantize(const float* x, int64_t n, const QParams& p, ActType t, void* q) {
  if (n <= 0) return;
  if (use_simd()) simd::quantize(x, n, p, t, q);
  else scalar::quantize(x, n, p, t, q);
}

void quantize_floor(const float* x, int64_t n, const QParams& p, ActType t, void* q) {
  if (n <= 0) return;
  if (use_simd()) simd::quantize_floor(x, n, p, t, q);
  else scalar::quantize_floor(x, n, p, t, q);
}

void dequantize(const void* q, ActType t, int64_t n, const QParams& p, float* x) {
  if (n <= 0) return;
  if (use_simd()) simd::dequantize(q, t, n, p, x);
  else scalar::dequantize(q, t, n, p, x);
}

void round_to_f16(float* x, int64_t n) {
  if (n <= 0) return;
  if (use_simd()) simd::round_to_f16(x, n);
  else scalar::round_to_f16(x, n);
}

void widen_f16(const uint16_t* h, int64_t n, float* x) {
  if (n <= 0) return;
  if (use_simd()) simd::widen_f16(h, n, x);
  else scalar::widen_f16(h, n, x);
}

void shrink_errors(const float* w, int64_t n, const float* scales, int64_t m, float qmin, float qmax, float* errs) {
  if (m <= 0) return;
  if (use_simd()) simd::shrink_errors(w, n, scales, m, qmin, qmax, errs);
  else scalar::shrink_errors(w, n, scales, m, qmin, qmax, errs);
}

}  // namespace genai::kernels
