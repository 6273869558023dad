// The Highway targets every simd_<family>.cpp compiles for: included before hwy/foreach_target.h
// so that all families (and simd_target.cpp, which reports the chosen one) agree.
#pragma once

// AVX3_DL (AVX-512 VNNI, Ice Lake / Zen 4 and later) is opt-in in Highway 1.0.3. On Arm: NEON,
// and SVE/SVE2 (at any vector length, plus Highway's fixed 128- and 256-bit variants), whose
// sizeless vectors the kernels' register tiles hold through VecArray (simd_common-inl.h). RISC-V
// vectors are left out: no build or emulator for them here has tested the kernels.
#ifndef HWY_WANT_AVX3_DL
#define HWY_WANT_AVX3_DL
#endif
#ifndef HWY_DISABLED_TARGETS
#define HWY_DISABLED_TARGETS HWY_RVV
#endif
