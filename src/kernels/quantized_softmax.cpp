#include "kernels/quantized_softmax.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "kernels/float_arith.h"

namespace genai::kernels {

bool htp_softmax_applies(const QParams& ex, const QParams& ey) {
  // A positive, finite input scale keeps every e in [0, 2^15] and the largest one at 2^15 (a
  // hostile payload's scale takes the float form instead).
  return std::isfinite(ex.scale) && ex.scale > 0.0f && ex.qmin == 0 && ex.qmax == 65535 && ey.qmin == 0 && ey.qmax == 65535 && ey.zero_point == 0 &&
         ey.scale == 1.0f / 65535.0f;
}

void softmax_q(const uint16_t* x, int64_t rows, int64_t n, float x_scale, uint16_t* y) {
  if (n <= 0) return;
  std::vector<int64_t> e(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* xr = x + r * n;
    uint16_t* yr = y + r * n;
    const int32_t top = *std::max_element(xr, xr + n);
    // e in units of 2^-15; the largest code's is exactly 2^15, so the sum is at least 2^15.
    uint64_t sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float d = static_cast<float>(top - xr[i]);
      e[static_cast<size_t>(i)] = static_cast<int64_t>(exp_f32(-d * x_scale) * 32768.0f);  // floor: non-negative
      sum += static_cast<uint64_t>(e[static_cast<size_t>(i)]);
    }
    // The reciprocal with 15 significant bits: 2^shift / sum in (2^14, 2^15], rounded (never a
    // tie: sum would have to be 2^(shift + 1)) and held below 2^15, a signed 16-bit value (why a
    // row of two equal codes gives 32767 twice and a lone maximum 65534 on the HTP).
    // 30 <= shift <= 30 + log2(n) stays below 63.
    const int shift = (63 - std::countl_zero(sum)) + 15;
    const uint64_t recip = std::min<uint64_t>(((uint64_t{1} << shift) + sum / 2) / sum, 32767);
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t p = (static_cast<uint64_t>(e[static_cast<size_t>(i)]) * recip) >> (shift - 16);
      yr[i] = static_cast<uint16_t>(p > 65535 ? 65535 : p);
    }
  }
}

}  // namespace genai::kernels
