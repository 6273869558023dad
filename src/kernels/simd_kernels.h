// Internal: entry points of the vectorised build (simd_<family>.cpp, Highway dynamic dispatch,
// one file per kernel family of kernel_list.h). Arguments are validated by the public functions
// before they get here.
#pragma once

#include <string_view>

#include "kernels/kernel_list.h"

namespace genai::kernels::simd {

// False when built with GENAI_SCALAR_ONLY or when the best target here has no usable vectors.
bool available();
std::string_view target_name();

GENAI_KERNELS(GENAI_KERNEL_DECLARE)

}  // namespace genai::kernels::simd
