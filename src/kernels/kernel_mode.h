// Every kernel in this folder has two builds: a plain scalar one (the definition of its result)
// and a vectorised one (Highway, dynamic dispatch to the widest target the CPU has: AVX-512 VNNI,
// AVX2, NEON...). Tests run both and compare; --scalar_kernels forces the scalar build for a whole
// run (debugging), ScopedKernelMode for a scope (tests).
#pragma once

#include <string_view>

namespace genai::kernels {

enum class KernelMode { kSimd, kScalar };

// Process-wide; read by every kernel call; kSimd until set. Not for use while kernels run on
// other threads.
KernelMode kernel_mode();
void set_kernel_mode(KernelMode mode);

// Sets the mode for a scope and restores the previous one.
class ScopedKernelMode {
 public:
  explicit ScopedKernelMode(KernelMode mode) : saved_(kernel_mode()) { set_kernel_mode(mode); }
  ~ScopedKernelMode() { set_kernel_mode(saved_); }
  ScopedKernelMode(const ScopedKernelMode&) = delete;
  ScopedKernelMode& operator=(const ScopedKernelMode&) = delete;

 private:
  KernelMode saved_;
};
// The Highway target the vectorised build dispatches to here ("AVX3_DL", "AVX2", "NEON",
// "SVE_256", ...).
std::string_view simd_target_name();
// What computes now: simd_target_name(), or "scalar" under kScalar.
std::string_view active_kernels();

}  // namespace genai::kernels
