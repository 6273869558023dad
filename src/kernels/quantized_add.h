// Add of two 16-bit quantized tensors as the HTP adds them (HTP rule 8, measured on the QNN HTP
// simulator, V75; docs/quantization.md "HTP rules"): in integers, each operand's code difference
// times a fixed-point multiplier (its scale over the result's, as a float32 ratio, times 2^k and
// rounded half to even), the sum shifted right by k with rounding half up, plus the result's zero
// point, clamped. k is the largest shift up to 16 that keeps both multipliers below 2^15. The QDQ
// reference and the compiled programs call these, so both compute the HTP's codes; the float
// form (dequantize, add, requantize) differs from it by one step on 8-25 % of outputs.
#pragma once

#include <cstdint>

#include "kernels/quantize.h"

namespace genai::kernels {

struct HtpAdd {
  int64_t ma = 0, mb = 0;  // fixed-point multipliers of the operands
  int shift = 0;
  int32_t zpa = 0, zpb = 0, zpy = 0, qmin = 0, qmax = 65535;
};

// Whether the HTP rule applies: both operands and the result on 16-bit encodings.
inline bool htp_add_applies(const QParams& ea, const QParams& eb, const QParams& ey) {
  return ea.qmax == 65535 && eb.qmax == 65535 && ey.qmax == 65535 && ea.qmin == 0 && eb.qmin == 0 && ey.qmin == 0;
}

HtpAdd htp_add_params(const QParams& ea, const QParams& eb, const QParams& ey);

// The result code of codes qa and qb.
inline int32_t htp_add_code(int32_t qa, int32_t qb, const HtpAdd& p) {
  const int64_t s = (static_cast<int64_t>(qa - p.zpa) * p.ma + static_cast<int64_t>(qb - p.zpb) * p.mb +
                     (int64_t{1} << (p.shift - 1))) >> p.shift;
  const int64_t q = s + p.zpy;
  return static_cast<int32_t>(q < p.qmin ? p.qmin : (q > p.qmax ? p.qmax : q));
}

// y[i] = htp_add_code(a[i * a_step], b[i * b_step]) for i < n: steps 0 (a repeated scalar) or 1;
// codes of type at / bt in, codes of type yt out.
void add_q(const void* a, ActType at, int64_t a_step, const void* b, ActType bt, int64_t b_step, int64_t n,
           const HtpAdd& p, ActType yt, void* y);

}  // namespace genai::kernels
