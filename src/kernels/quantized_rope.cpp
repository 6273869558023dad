#include "kernels/quantized_rope.h"

#include <algorithm>
#include <cmath>

#include "kernels/quantized_mul.h"
#include "kernels/scalar_kernels.h"
#include "kernels/simd_kernels.h"

namespace genai::kernels {

QParams htp_rope_intermediate(const QParams& x) {
  const float lo = static_cast<float>(x.qmin - x.zero_point) * x.scale;
  const float hi = static_cast<float>(x.qmax - x.zero_point) * x.scale;
  const float m = std::max(std::fabs(lo), std::fabs(hi));
  QParams s;
  s.qmin = 0;
  s.qmax = 65535;
  s.scale = std::max((m - -m) / 65535.0f, 1e-9f);
  const float zp = 0.0f - std::nearbyint(-m / s.scale);
  s.zero_point = static_cast<int32_t>(std::clamp(zp, 0.0f, 65535.0f));
  return s;
}

bool htp_rope_applies(const QParams& x, const QParams& cos, const QParams& sin, const QParams& y) {
  auto wide = [](const QParams& p) { return p.qmin == 0 && p.qmax == 65535; };
  return wide(x) && wide(cos) && wide(sin) && wide(y);
}

HtpRope htp_rope_params(const QParams& x, const QParams& cos, const QParams& sin, const QParams& y) {
  HtpRope p;
  p.x = x;
  p.cos = cos;
  p.sin = sin;
  p.sym = htp_rope_intermediate(x);
  p.rotated = product_ratio(x.scale, 1.0f, p.sym);
  p.x_cos = product_ratio(x.scale, cos.scale, p.sym);
  p.rot_sin = product_ratio(p.sym.scale, sin.scale, p.sym);
  p.add = htp_add_params(p.sym, p.sym, y);
  return p;
}

namespace scalar {

void rope_q(const uint16_t* x, const uint16_t* cos, const uint16_t* sin, int64_t seq, int64_t d, const HtpRope& p,
            uint16_t* y) {
  const int64_t half = d / 2;
  // Element i of a row rotates with element i ± D/2: the first half takes -x[i + D/2], the
  // second x[i - D/2] (sign -1 and +1), each onto sym first.
  auto span = [&](const uint16_t* xr, const uint16_t* other, int32_t sign, const uint16_t* c, const uint16_t* sn,
                  uint16_t* yr) {
    for (int64_t i = 0; i < half; ++i) yr[i] = static_cast<uint16_t>(htp_rope_code(xr[i], other[i], sign, c[i], sn[i], p));
  };
  for (int64_t s = 0; s < seq; ++s) {
    const int64_t r = s * d;
    span(x + r, x + r + half, -1, cos + r, sin + r, y + r);
    span(x + r + half, x + r, 1, cos + r + half, sin + r + half, y + r + half);
  }
}

}  // namespace scalar

void rope_q(const uint16_t* x, const uint16_t* cos, const uint16_t* sin, int64_t seq, int64_t d, const HtpRope& p,
            uint16_t* y) {
  if (seq <= 0 || d <= 0) return;
  if (use_simd()) simd::rope_q(x, cos, sin, seq, d, p, y);
  else scalar::rope_q(x, cos, sin, seq, d, p, y);
}

}  // namespace genai::kernels
