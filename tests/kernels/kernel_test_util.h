// Shared helpers for the kernel tests: deterministic random data and a scoped kernel mode.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

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
