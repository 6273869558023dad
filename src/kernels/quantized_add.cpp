#include "kernels/quantized_add.h"

#include <algorithm>
#include <cmath>

#include "kernels/scalar_kernels.h"
#include "kernels/simd_kernels.h"

namespace genai::kernels {

HtpAdd htp_add_params(const QParams& ea, const QParams& eb, const QParams& ey) {
  // float32 ratios, as measured; capped at 2^20 (any non-zero code difference then moves the
  // result past its range anyway), so a hostile payload's scales cannot overflow the products.
  constexpr float kMaxRatio = 1048576.0f;
  const float ra = std::min(ea.scale / ey.scale, kMaxRatio), rb = std::min(eb.scale / ey.scale, kMaxRatio);
  const double largest = static_cast<double>(ra > rb ? ra : rb);
  int shift = 0;
  while (shift < 16 && largest * std::ldexp(1.0, shift + 1) < 32768.0) ++shift;
  HtpAdd p;
  p.shift = shift == 0 ? 1 : shift;  // a ratio of 2^15 or more: no fraction bits left to keep
  p.ma = std::llrint(static_cast<double>(ra) * std::ldexp(1.0, p.shift));
  p.mb = std::llrint(static_cast<double>(rb) * std::ldexp(1.0, p.shift));
  p.zpa = ea.zero_point;
  p.zpb = eb.zero_point;
  p.zpy = ey.zero_point;
  p.qmin = ey.qmin;
  p.qmax = ey.qmax;
  return p;
}

namespace scalar {

void add_q(const void* a, ActType at, int64_t a_step, const void* b, ActType bt, int64_t b_step, int64_t n,
           const HtpAdd& p, ActType yt, void* y) {
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = htp_add_code(code_at(a, at, i * a_step), code_at(b, bt, i * b_step), p);
    if (yt == ActType::kU8) static_cast<uint8_t*>(y)[i] = static_cast<uint8_t>(v);
    else static_cast<uint16_t*>(y)[i] = static_cast<uint16_t>(v);
  }
}

}  // namespace scalar

void add_q(const void* a, ActType at, int64_t a_step, const void* b, ActType bt, int64_t b_step, int64_t n,
           const HtpAdd& p, ActType yt, void* y) {
  if (n <= 0) return;
  if (use_simd()) simd::add_q(a, at, a_step, b, bt, b_step, n, p, yt, y);
  else scalar::add_q(a, at, a_step, b, bt, b_step, n, p, yt, y);
}

}  // namespace genai::kernels
