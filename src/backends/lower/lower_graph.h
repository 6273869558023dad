// Lowering one graph (GraphBundle) to our payload (schema/genai_payload.fbs): typed tensors with
// their encodings, the op list, weights packed for the kernels and stored as content-addressed
// named data, and a memory plan of every activation and float temporary. Shared by the htp and
// gpu backends; they differ in which program they ask for and in what they support.
#pragma once

#include <string_view>

#include "compile/backend.h"

namespace genai::backends {

enum class ProgramPrecision {
  kQuantized,  // integer activations from the bundle's encodings (htp)
  kFloat16,    // float32 tensors holding float16-rounded values, float16 weights (htp fp16, gpu)
};

// Lowers `bundle` as method `method_name` for `delegate_id`. kQuantized needs a quantized bundle
// with integer encodings (check_support runs first; anything else is a Failure).
compile::LoweredMethod lower_graph(std::string_view method_name, const pipeline::GraphBundle& bundle,
                                   const compile::LoweringTarget& target, std::string_view delegate_id,
                                   ProgramPrecision precision);

}  // namespace genai::backends
