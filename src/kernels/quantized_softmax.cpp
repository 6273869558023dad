#include "kernels/quantized_softmax.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <unordered_map>
#include <vector>

#include "kernels/float_arith.h"
#include "kernels/scalar_kernels.h"
#include "kernels/simd_kernels.h"

namespace genai::kernels {
namespace {

// e(d) = floor(2^15 exp(-d s)), in units of 2^-15: at most 2^15, which a uint16 holds.
uint16_t exp_units(int32_t d, float s) { return static_cast<uint16_t>(exp_f32(-static_cast<float>(d) * s) * 32768.0f); }

// Every d above this has e(d) = 0: 2^15 e^-11 is 0.55, far from 1 for an exp within 2 ulp.
int32_t last_nonzero_distance(float s) {
  const double d = std::ceil(11.0 / static_cast<double>(s));
  return d >= 65535.0 ? 65535 : static_cast<int32_t>(d);
}

}  // namespace

// e(d) for every d up to last_nonzero_distance(s), then a 0. The tables of the scales a thread met
// last are kept (a decoder has one softmax scale per layer), so a decode step with a row or two
// of probabilities does not rebuild one per call.
const std::vector<int32_t>& softmax_exp_table(float s) {
  thread_local std::unordered_map<float, std::vector<int32_t>> tables;
  if (const auto it = tables.find(s); it != tables.end()) return it->second;
  if (tables.size() >= 256) tables.clear();
  std::vector<int32_t>& t = tables[s];
  const int32_t last = last_nonzero_distance(s);
  t.resize(static_cast<size_t>(last) + 2);
  for (int32_t d = 0; d <= last; ++d) t[static_cast<size_t>(d)] = exp_units(d, s);
  t[static_cast<size_t>(last) + 1] = 0;
  return t;
}

SoftmaxScale softmax_scale(uint64_t sum) {
  // The reciprocal with 15 significant bits: 2^shift / sum in (2^14, 2^15], rounded (never a
  // tie: sum would have to be 2^(shift + 1)) and held below 2^15, a signed 16-bit value (why a
  // row of two equal codes gives 32767 twice and a lone maximum 65534 on the HTP).
  // 30 <= shift <= 30 + log2(n) stays below 63.
  SoftmaxScale r;
  r.shift = (63 - std::countl_zero(sum)) + 15;
  r.recip = static_cast<int64_t>(std::min<uint64_t>(((uint64_t{1} << r.shift) + sum / 2) / sum, 32767));
  return r;
}

bool htp_softmax_applies(const QParams& ex, const QParams& ey) {
  // A positive, finite input scale keeps every e in [0, 2^15] and the largest one at 2^15 (a
  // hostile payload's scale takes the float form instead).
  return std::isfinite(ex.scale) && ex.scale > 0.0f && ex.qmin == 0 && ex.qmax == 65535 && ey.qmin == 0 &&
         ey.qmax == 65535 && ey.zero_point == 0 && ey.scale == 1.0f / 65535.0f;
}

namespace scalar {

void softmax_q(const uint16_t* x, int64_t rows, int64_t n, float x_scale, uint16_t* y) {
  if (n <= 0 || rows <= 0) return;
  // e depends on the code distance alone: read from the scale's table (0 past its end).
  const std::vector<int32_t>& table = softmax_exp_table(x_scale);
  const auto past = static_cast<int32_t>(table.size()) - 1;
  thread_local std::vector<uint32_t> e;  // one row's e: no allocation per call on the decode path
  e.resize(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* xr = x + r * n;
    uint16_t* yr = y + r * n;
    const int32_t top = *std::max_element(xr, xr + n);
    // The largest code's e is exactly 2^15, so the sum is at least 2^15.
    uint64_t sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int32_t d = top - xr[i];
      e[static_cast<size_t>(i)] = static_cast<uint32_t>(table[static_cast<size_t>(std::min(d, past))]);
      sum += e[static_cast<size_t>(i)];
    }
    const SoftmaxScale sc = softmax_scale(sum);
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t p = (uint64_t{e[static_cast<size_t>(i)]} * static_cast<uint64_t>(sc.recip)) >> (sc.shift - 16);
      yr[i] = static_cast<uint16_t>(p > 65535 ? 65535 : p);
    }
  }
}

}  // namespace scalar

void softmax_q(const uint16_t* x, int64_t rows, int64_t n, float x_scale, uint16_t* y) {
  if (n <= 0 || rows <= 0) return;
  if (use_simd()) simd::softmax_q(x, rows, n, x_scale, y);
  else scalar::softmax_q(x, rows, n, x_scale, y);
}

}  // namespace genai::kernels
