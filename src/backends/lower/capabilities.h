// What each of our backends supports, as data (documented in docs/payload.md): ops, activation
// and weight element types, precisions, and the HTP architecture a feature needs. check_support
// of both backends is this table applied to a bundle.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "compile/backend.h"

namespace genai::backends {

struct BackendCapabilities {
  std::string_view backend;       // "htp", "gpu"
  bool quantized_program = false;  // integer activations (uint8/uint16) and weights
  bool float16_program = false;    // float16 activations and weights
  // Minimum HTP architecture (target::HtpArch value) for the float16 program and for int4 /
  // block-quantized weights; 0 = no requirement.
  int min_arch_float16 = 0;
  int min_arch_int4 = 0;
  bool int8_weights = false, int16_weights = false, int4_weights = false;
};

const BackendCapabilities& htp_capabilities();
const BackendCapabilities& gpu_capabilities();

// True when `bundle` is lowered as the float16 program for this backend and target: always for
// a backend without a quantized program; otherwise with use_fp16, an unquantized bundle or a
// float16 encoding set.
bool lowers_to_float16(const BackendCapabilities& caps, const pipeline::GraphBundle& bundle,
                       const compile::LoweringTarget& target);

// nullopt when supported; otherwise one sentence naming the op / dtype / option and the SoC.
std::optional<std::string> check_capabilities(const BackendCapabilities& caps, const pipeline::GraphBundle& bundle,
                                              const compile::LoweringTarget& target);

}  // namespace genai::backends
