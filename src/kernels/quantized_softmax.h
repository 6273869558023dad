// Softmax of 16-bit codes onto probabilities on the 1/65535 grid, in the HTP's fixed-point form
// (docs/quantization.md "HTP rules", softmax): per row, e = floor(2^15 exp(-d s)) of each code's
// distance d to the row's largest code (s the input scale; the largest gets exactly 2^15), the
// sum's reciprocal rounded to 15 significant bits and held below 2^15, each e times it floored
// onto 2^-16. On the QNN HTP simulator this form matches 94-97 % of outputs where rounding the exact
// result matches 50-82 % (the rest is the HTP's own exp, not pinned down). It holds only for a
// result encoding of exactly scale 1/65535 and zero point 0 (a probability range of [0, 1], what
// calibration gives attention probabilities); other encodings keep the float form. The QDQ
// reference and the compiled programs call this one implementation.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/quantize.h"

namespace genai::kernels {

// Whether the fixed-point form applies: 16-bit codes in, 16-bit probabilities on [0, 1] out.
bool htp_softmax_applies(const QParams& ex, const QParams& ey);

// Each of `rows` rows of `n` codes (on input scale x_scale) into n probability codes. Rows are
// independent: callers may split them across threads.
void softmax_q(const uint16_t* x, int64_t rows, int64_t n, float x_scale, uint16_t* y);

// Internal (the scalar and vectorised builds): e(d) for every code distance d up to the last one
// that gives a non-zero e, then one 0: entry min(d, size - 1) is e(d) for any d >= 0.
const std::vector<int32_t>& softmax_exp_table(float x_scale);

// The reciprocal of a row's sum of e (at least 2^15) and its shift: p = (e * recip) >> (shift - 16).
struct SoftmaxScale {
  int64_t recip = 0;
  int shift = 0;
};
SoftmaxScale softmax_scale(uint64_t sum);

}  // namespace genai::kernels
