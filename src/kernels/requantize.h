// The one requantization every quantized path computes (docs/quantization.md): round half to
// even, NaN -> 0, clamp to the encoding's integer range, all in float32. Callers pass the
// already-scaled value (x / scale, or accumulator * multiplier) and the range relative to the
// zero point; they add the zero point to the result. Clamping in float first means huge or
// infinite values never overflow the integer conversion. Vectorised kernels may compute the same
// thing in lanes, but their tails call this function and tests hold them to it.
#pragma once

#include <algorithm>
#include <cmath>

namespace genai::kernels {

// Round half to even: what IEEE nearbyint does in the default rounding mode (FE_TONEAREST).
inline float round_half_even(float v) { return std::nearbyint(v); }

// clamp(round_half_even(v), lo, hi), with NaN -> 0. lo = qmin - zero_point, hi = qmax - zero_point.
inline float requantize(float v, float lo, float hi) {
  const float r = round_half_even(v);
  return std::isnan(r) ? 0.0f : std::min(std::max(r, lo), hi);
}

// clamp(floor(v), lo, hi), with NaN -> 0: how the HTP rounds the result of RmsNorm (measured on
// the QNN HTP simulator, V75: floor matches every output, round-half-even only half of them;
// docs/quantization.md, "HTP rules"). Only rms_norm results use it.
inline float requantize_floor(float v, float lo, float hi) {
  const float r = std::floor(v);
  return std::isnan(r) ? 0.0f : std::min(std::max(r, lo), hi);
}

}  // namespace genai::kernels
