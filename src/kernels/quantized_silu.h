// silu of 16-bit codes as the HTP runs the QNN form that the qnn lowering exports (HTP rule 13,
// docs/quantization.md "HTP rules"): x·sigmoid(x) with the sigmoid quantized first onto the 16-bit
// [0, 1] grid (scale 1/65535, zero point 0), then the product onto the result's encoding (HTP rule
// 9, kernels/quantized_mul.h). The HTP's sigmoid has 15 fraction bits: its codes on that grid are
// all even, twice floor(2^15 sigmoid(x)) for 56-92 % of inputs (the rest within two steps, its own
// approximation of the curve), where rounding sigmoid(x) onto the grid matches 24-69 %. The QDQ
// reference and the compiled programs call this one implementation.
#pragma once

#include <cstdint>

#include "kernels/quantize.h"

namespace genai::kernels {

// The [0, 1] grid the sigmoid is quantized onto (quant::asymmetric_encoding(u16, 0, 1)).
QParams htp_sigmoid_grid();

// The HTP's sigmoid of x as a code on that grid: twice floor(2^15 sigmoid(x)), at most 65535.
int32_t htp_sigmoid_code(float x);

// Whether the rule applies: 16-bit codes in and out.
bool htp_silu_applies(const QParams& x, const QParams& y);

// n codes of x on ex into n codes on ey.
void silu_q(const uint16_t* x, int64_t n, const QParams& ex, const QParams& ey, uint16_t* y);

}  // namespace genai::kernels
