// Every kernel in this folder has two builds: a plain scalar one (the definition of its result)
// and a vectorised one (Highway, dynamic dispatch to the widest target the CPU has: AVX-512 VNNI,
// AVX2, NEON...). Tests run both and compare; GENAI_SCALAR_KERNELS=1 forces the scalar build for a
// whole process (whole-graph parity tests, debugging).
#pragma once

#include <string_view>

namespace genai::kernels {

enum class KernelMode { kSimd, kScalar };

// Process-wide; read by every kernel call. Initialised from GENAI_SCALAR_KERNELS. Not for use
// while kernels run on other threads.
KernelMode kernel_mode();
void set_kernel_mode(KernelMode mode);
// The Highway target the vectorised build dispatches to here ("AVX3_DL", "AVX2", "NEON", ...).
std::string_view simd_target_name();

}  // namespace genai::kernels
