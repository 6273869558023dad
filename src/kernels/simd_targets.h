// The Highway targets every simd_<family>.cpp compiles for: included before hwy/foreach_target.h
// so that all families (and simd_target.cpp, which reports the chosen one) agree.
#pragma once

// AVX3_DL (AVX-512 VNNI, Ice Lake / Zen 4 and later) is opt-in in Highway 1.0.3. Scalable
// vector targets are left out: the kernels keep small arrays of vectors, which sizeless SVE/RVV
// types do not allow; Arm builds use NEON.
#ifndef HWY_WANT_AVX3_DL
#define HWY_WANT_AVX3_DL
#endif
#ifndef HWY_DISABLED_TARGETS
#define HWY_DISABLED_TARGETS (HWY_SVE | HWY_SVE2 | HWY_SVE_256 | HWY_SVE2_128 | HWY_RVV)
#endif
