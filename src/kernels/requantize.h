// The one requantization every quantized path computes (docs/quantization.md): round half to
// even, NaN -> 0, clamp to the encoding's integer range, all in float32. Callers pass the
// already-scaled value (x / scale, or accumulator * multiplier) and the range relative to the
// zero point; they add the zero point to the result. Clamping in float first means huge or
// infinite values never overflow the integer conversion. Vectorised kernels may compute the same
// thing in lanes, but their tails call this function and tests hold them to it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

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

// The accumulator of a product whose first operand has 16-bit codes, as the HTP forms it before
// requantizing (HTP rule 4, measured on the QNN HTP simulator, V75; docs/quantization.md "HTP
// rules"): the codes are centred on 32768, the centred sum sum (q - 32768) b is floored to a
// multiple of 256, and the zero-point correction (32768 - zp) * sum b is added rounded to a
// multiple of 256 (ties down). acc = sum (q - zp) b exactly, bsum = sum b. It applies to
// FullyConnected with 8- or 4-bit per-channel weights and to activation matmuls with an 8-bit
// second operand; htp_floors_accumulator says when.
inline int64_t htp_accumulator(int64_t acc, int64_t bsum, int32_t zp) {
  const int64_t correction = (32768 - int64_t{zp}) * bsum;
  const int64_t floored = (acc - correction) & ~int64_t{255};  // floor to a multiple of 256
  const int64_t rounded = -((128 - correction) & ~int64_t{255});  // nearest multiple, ties down
  return floored + rounded;
}

// Whether htp_accumulator applies: 16-bit codes (qmax 65535) times 8-bit or narrower integers
// (weights of at most 8 bits per channel, or an 8-bit activation). 16 x 16 bits and 8-bit
// first operands keep the exact sum.
inline bool htp_floors_accumulator(int32_t first_qmax, int second_bits) {
  return first_qmax == 65535 && second_bits <= 8;
}

}  // namespace genai::kernels
