// What QNN's own HTP compiler does with each SoC of our table, where it departs from the table
// (QNN 2.51, as the PyPI package onnxruntime-qnn 2.7.0 bundles it: the compiler behind
// --lowering qnn). Measured by compiling for every table entry on the x86 simulator
// (docs/compile.md, "SoCs under --lowering qnn"):
// - QNN builds some SoCs for another HTP arch than the table's whatever htp_arch asks (SM8475:
//   V68, not V69; SSG2115P, SSG2125P, SXR1230P: V68, not V73). Their binaries cannot carry the
//   compile spec's arch, so --lowering qnn refuses them, naming the nearest SoC it builds.
// - QNN records chipset 93 under its other name: QCM6490's binaries say "QCS6490".
// - Some HTPs validate an elementwise op (Add, Sub, Mul, Div) or a Concat only when its operands
//   and result have one integer type (uint16 + uint16 -> uint8 and uint16 * uint8 -> uint16 fail
//   QNN's op validation, error 3110): the ONNX export gives those targets one type per op.
//   The same HTPs also refuse LayerNormalization with a 16-bit scale (codegen); not lowered yet.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "target/soc.h"

namespace genai::target {

// Why --lowering qnn cannot build for `soc` (the HTP arch QNN builds instead), or nullopt.
std::optional<std::string> qnn_lowering_refusal(const SocInfo& soc);

// The nearest SoC --lowering qnn builds: the same HTP arch as `soc` if one has it (else the
// closest arch), then the closest VTCM size, then table order.
const SocInfo& nearest_qnn_lowering_soc(const SocInfo& soc);

// The SoC name QNN records in a context binary built for `soc` ("soc_type=<name>").
std::string_view qnn_binary_soc_name(const SocInfo& soc);

// Whether the SoC's HTP takes elementwise ops only with one integer type on operands and result.
bool qnn_elementwise_needs_one_type(const SocInfo& soc);

}  // namespace genai::target
