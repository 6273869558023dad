// A pass over an exported QDQ model for the HTPs that validate an elementwise op (Add, Sub, Mul,
// Div) or a Concat only when its operands and result have one integer type
// (target::qnn_elementwise_needs_one_type: QCM6490, SAR2230P, SW6100 ...; QNN's op validation
// fails with error 3110 for uint16 + uint16 -> uint8, the rope of an 8-bit K cache, and for
// uint16 * uint8 -> uint16, a score times an exact 8-bit scalar; Concat of the 8-bit halves of
// a partially rotated K into a 16-bit rope intermediate, phi3 and glm). Each such node unit
// (DequantizeLinear operands -> op -> one QuantizeLinear) gets the widest of its types:
// - a narrower activation operand is requantized onto the 16-bit grid holding its 8-bit grid
//   (scale / 257, zero point x 257; signed: / 256, x 256), a Convert on the HTP: exact;
// - a narrower constant operand is stored again in the wider type, codes and zero point times
//   2^k and the scale over 2^k, k as large as the range allows (a scalar: code 32768): exact;
// - a narrower result is quantized on the wider grid of its own encoding first, then converted:
//   the result differs from one rounding only where the op's value lies within 1/257 of a step
//   from a tie.
// Node units of one type are left as they are, so a model without mixed types is unchanged.
#pragma once

#include "backends/qnn/onnx_wire.h"

namespace genai::backends::qnn {

// Returns how many node units it changed.
int give_elementwise_ops_one_type(wire::Graph& graph);

}  // namespace genai::backends::qnn
