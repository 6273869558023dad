#include "kernels/kernel_mode.h"

#include <atomic>

#include "kernels/simd_kernels.h"

namespace genai::kernels {
namespace {

std::atomic<KernelMode>& mode_slot() {
  static std::atomic<KernelMode> mode{KernelMode::kSimd};
  return mode;
}

}  // namespace

KernelMode kernel_mode() { return mode_slot().load(std::memory_order_relaxed); }
void set_kernel_mode(KernelMode mode) { mode_slot().store(mode, std::memory_order_relaxed); }

std::string_view simd_target_name() { return simd::target_name(); }

std::string_view active_kernels() { return kernel_mode() == KernelMode::kScalar ? "scalar" : simd_target_name(); }

bool use_simd() { return kernel_mode() == KernelMode::kSimd && simd::available(); }

}  // namespace genai::kernels
