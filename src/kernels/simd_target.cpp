// Which Highway target the vectorised kernels dispatch to here: one more foreach_target build,
// over the same target list as every simd_<family>.cpp (simd_targets.h). Without Highway
// (GENAI_SCALAR_ONLY) it also defines every simd:: kernel as its scalar twin.
#include "kernels/simd_kernels.h"

#if defined(GENAI_KERNELS_SCALAR_ONLY)

#include "kernels/scalar_kernels.h"

// No Highway build: every simd:: entry point is the scalar kernel.
namespace genai::kernels::simd {
bool available() { return false; }
std::string_view target_name() { return "scalar (GENAI_SCALAR_ONLY)"; }
GENAI_KERNELS(GENAI_KERNEL_FORWARD_TO_SCALAR)
}  // namespace genai::kernels::simd

#else  // the Highway build

#include "kernels/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd_target.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace genai::kernels::simd {
namespace HWY_NAMESPACE {
int64_t TargetId() { return HWY_TARGET; }
}  // namespace HWY_NAMESPACE
}  // namespace genai::kernels::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace genai::kernels::simd {

HWY_EXPORT(TargetId);

namespace {
// Not cached: tests switch targets with hwy::SetSupportedTargetsForTest.
int64_t chosen_target() { return HWY_DYNAMIC_DISPATCH(TargetId)(); }
}  // namespace

bool available() { return chosen_target() != HWY_SCALAR; }
std::string_view target_name() { return hwy::TargetName(chosen_target()); }

}  // namespace genai::kernels::simd
#endif  // HWY_ONCE

#endif  // GENAI_KERNELS_SCALAR_ONLY
