// Shared helpers for the kernel tests: deterministic random data and a scoped kernel mode.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <hwy/targets.h>

#include "kernels/kernel_mode.h"
#include "kernels/quantize.h"
#include "quant/encoding.h"

namespace genai::kernels::testing {

using ScopedMode = ScopedKernelMode;

// Forces Highway's dynamic dispatch to the targets in `t` for a scope (every-target tests).
struct ForcedTarget {
  explicit ForcedTarget(int64_t t) {
    hwy::SetSupportedTargetsForTest(t);
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  }
  ~ForcedTarget() {
    hwy::SetSupportedTargetsForTest(0);
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  }
  ForcedTarget(const ForcedTarget&) = delete;
  ForcedTarget& operator=(const ForcedTarget&) = delete;
};

// Every Highway target the kernels are built for that this CPU runs, EMU128 (the portable
// fallback) always. On x86: AVX-512 VNNI, AVX-512, AVX2, SSE4, SSSE3; on Arm: SVE2 at 128 bits,
// SVE at 256 bits, SVE2 and SVE at any length, NEON.
inline std::vector<int64_t> runnable_targets() {
  const int64_t supported = hwy::SupportedTargets();
  std::vector<int64_t> out;
  for (int64_t t : {int64_t{HWY_AVX3_DL}, int64_t{HWY_AVX3}, int64_t{HWY_AVX2}, int64_t{HWY_SSE4}, int64_t{HWY_SSSE3},
                    int64_t{HWY_SVE2_128}, int64_t{HWY_SVE_256}, int64_t{HWY_SVE2}, int64_t{HWY_SVE}, int64_t{HWY_NEON},
                    int64_t{HWY_EMU128}})
    if ((supported & t) || t == HWY_EMU128) out.push_back(t);
  return out;
}

// GENAI_EXPECT_SIMD_TARGETS (Highway names, comma-separated; scripts/test_aarch64.sh sets it for
// each emulated CPU): every one named must be among `tested`, so that an emulator which stops
// offering SVE cannot quietly turn the SVE runs into NEON ones.
inline void expect_named_targets_tested(const std::vector<int64_t>& tested) {
  const char* env = std::getenv("GENAI_EXPECT_SIMD_TARGETS");
  if (!env || !*env) return;
  std::stringstream names(env);
  for (std::string name; std::getline(names, name, ',');) {
    bool found = false;
    for (int64_t t : tested) found = found || name == hwy::TargetName(t);
    EXPECT_TRUE(found) << "GENAI_EXPECT_SIMD_TARGETS names " << name << ", which this CPU did not run";
  }
}

inline std::vector<float> random_floats(std::mt19937& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

inline QParams qparams(const quant::Encoding& e) {
  return QParams{e.scale, e.zero_point, static_cast<int32_t>(e.qmin), static_cast<int32_t>(e.qmax)};
}

inline ActType act_type(const quant::Encoding& e) { return e.dtype == quant::QDType::kU8 ? ActType::kU8 : ActType::kU16; }

// Codes (as int32) of a quantized activation buffer.
inline std::vector<int32_t> codes(const void* p, ActType t, size_t n) {
  std::vector<int32_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = t == ActType::kU8 ? static_cast<const uint8_t*>(p)[i] : static_cast<const uint16_t*>(p)[i];
  return v;
}

// A buffer of n codes of type t (storage for either width).
struct CodeBuffer {
  ActType type;
  std::vector<uint8_t> bytes;
  CodeBuffer(ActType t, size_t n) : type(t), bytes(n * (t == ActType::kU8 ? 1 : 2)) {}
  void* data() { return bytes.data(); }
  const void* data() const { return bytes.data(); }
  size_t size() const { return bytes.size() / (type == ActType::kU8 ? 1 : 2); }
  int32_t at(size_t i) const {
    return type == ActType::kU8 ? bytes[i] : static_cast<int32_t>(reinterpret_cast<const uint16_t*>(bytes.data())[i]);
  }
  void set(size_t i, int32_t v) {
    if (type == ActType::kU8) bytes[i] = static_cast<uint8_t>(v);
    else reinterpret_cast<uint16_t*>(bytes.data())[i] = static_cast<uint16_t>(v);
  }
  std::vector<int32_t> all() const { return codes(data(), type, size()); }
};

}  // namespace genai::kernels::testing
