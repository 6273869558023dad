// Internal: the scalar build of every kernel (the definition of each result). The public
// functions call these when kernel_mode() is kScalar, when no vectorised target exists, or for
// shapes the vectorised build does not take (see the *_simd_ok checks in the .cpp files). The
// signatures are the list in kernel_list.h.
#pragma once

#include "kernels/kernel_list.h"

namespace genai::kernels {

// True when kernel_mode() is kSimd and a vectorised target is compiled in and supported here.
bool use_simd();

namespace scalar {
GENAI_KERNELS(GENAI_KERNEL_DECLARE)
// Scalar in every mode (no vectorised build): float_ops.h.
void gelu_tanh(float* x, int64_t n);
void gelu(float* x, int64_t n);  // exact: x/2 (1 + erf(x / sqrt(2)))
void tanh_inplace(float* x, int64_t n);
void layer_norm(const float* x, int64_t rows, int64_t dim, const float* weight, const float* bias, float eps, float* y);
}  // namespace scalar

}  // namespace genai::kernels
