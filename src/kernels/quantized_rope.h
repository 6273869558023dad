// Rope of 16-bit codes as the HTP runs the QNN form that the qnn lowering exports (HTP rule 12,
// docs/quantization.md "HTP rules"): x·cos + rotate_half(x)·sin in four quantized steps, each
// the HTP's own arithmetic on codes:
//   1. rotate_half(x) = concat(-x[D/2:], x[:D/2]) requantized onto `sym`, a 16-bit encoding
//      symmetric about 0 over x's whole range (what the export quantizes the rotated x and both
//      products onto), rounding half to even;
//   2. x·cos and rotated·sin each onto `sym` (HTP rule 9: the exact product rounded half to even);
//   3. the two products added onto the result's encoding (HTP rule 8, kernels/quantized_add.h).
// Rounding the float result once instead differs from the HTP by one step on about 40 % of
// outputs. The QDQ reference and the compiled programs call this one implementation.
#pragma once

#include <cstdint>

#include "kernels/quantize.h"
#include "kernels/quantized_add.h"
#include "kernels/quantized_mul.h"

namespace genai::kernels {

struct HtpRope {
  QParams x, cos, sin, sym;
  double rotated = 0, x_cos = 0, rot_sin = 0;  // kernels::product_ratio of each step onto sym
  HtpAdd add;  // x·cos + rotated·sin, both on sym, onto the result's encoding
};

// The intermediate encoding for x's encoding: 16-bit, [-m, m] with m = x's largest magnitude,
// computed as quant::asymmetric_encoding computes it (the export takes it from here).
QParams htp_rope_intermediate(const QParams& x);

// Whether the rule applies: x, cos, sin and the result all 16-bit codes.
bool htp_rope_applies(const QParams& x, const QParams& cos, const QParams& sin, const QParams& y);

HtpRope htp_rope_params(const QParams& x, const QParams& cos, const QParams& sin, const QParams& y);

// One element: code x, the code it rotates with (`other`, taken with `sign`: -1 in the first half
// of a row, +1 in the second) and its cos and sin codes, through the four steps.
inline int32_t htp_rope_code(int32_t x, int32_t other, int32_t sign, int32_t cos, int32_t sin, const HtpRope& p) {
  const int32_t rot = mul_code(sign * (other - p.x.zero_point), 1, p.rotated, p.sym);
  const int32_t xc = mul_code(x - p.x.zero_point, cos - p.cos.zero_point, p.x_cos, p.sym);
  const int32_t rs = mul_code(rot - p.sym.zero_point, sin - p.sin.zero_point, p.rot_sin, p.sym);
  return htp_add_code(xc, rs, p.add);
}

// One head: x [seq, d] codes, cos and sin [seq, d] codes, into y [seq, d] codes (d even).
void rope_q(const uint16_t* x, const uint16_t* cos, const uint16_t* sin, int64_t seq, int64_t d, const HtpRope& p,
            uint16_t* y);

}  // namespace genai::kernels
