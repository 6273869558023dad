// Products and requantization of quantized values as the HTP computes them (HTP rule 9,
// docs/quantization.md "HTP rules"): the exact product of the code differences times the ratio of
// the float32 scales (sa·sb / sy, in doubles), rounded half to even onto the result's codes. On the
// QNN HTP simulator (V75) this matches 94.6-100 % of 16-bit products (the rest one step: the HTP's
// fixed-point multiplier, not pinned down); the float32 product rounded matches as often or a
// little less.
#pragma once

#include <cstdint>

#include "kernels/quantize.h"

namespace genai::kernels {

// t rounded half to even plus y's zero point, clamped to y's codes. NaN (from a corrupted
// payload's scales) gives qmin: never a float-to-int conversion out of range.
inline int32_t clamp_code(double t, const QParams& y) {
  const double lo = static_cast<double>(y.qmin - y.zero_point), hi = static_cast<double>(y.qmax - y.zero_point);
  if (!(t >= lo)) return y.qmin;
  if (t >= hi) return y.qmax;
  // Adding 1.5·2^52 leaves no fraction bits: the sum rounds half to even, as std::nearbyint does,
  // without a library call per element (|t| is below 2^17 here).
  constexpr double kRound = 6755399441055744.0;
  return static_cast<int32_t>((t + kRound) - kRound) + y.zero_point;
}

// The ratio that takes a product of code differences (or one code difference, b_scale 1) onto y.
inline double product_ratio(float a_scale, float b_scale, const QParams& y) {
  return static_cast<double>(a_scale) * static_cast<double>(b_scale) / static_cast<double>(y.scale);
}

// The code of (da·a_scale)·(db·b_scale) on y, with ratio = product_ratio(a_scale, b_scale, y).
inline int32_t mul_code(int32_t da, int32_t db, double ratio, const QParams& y) {
  return clamp_code(static_cast<double>(int64_t{da} * db) * ratio, y);
}

}  // namespace genai::kernels
