// The float arithmetic that the scalar kernels define and the vectorised ones repeat lane by lane,
// so that both give the same bits on every Highway target: an exp made of plain float operations
// (no library call whose last bit differs between libm and a vector polynomial), and sums in
// doubles taken in one fixed order whatever the vector width.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace genai::kernels {

// exp(x) within about 2 ulp: n = round_half_even(x log2 e), r = x - n ln2 (ln2 in two parts, the
// first exact in 9 bits so n * hi is exact), e^r by its Taylor polynomial of degree 7 in Horner
// form (|r| <= 0.347: truncation below 1e-8 relative), times 2^n applied as two exact powers of two
// (2^n alone would leave the float range for the results that are subnormal). Infinity above
// kExpMax, 0 below kExpMin (e^-104 is below half the smallest subnormal), NaN stays NaN.
namespace exp_f32_constants {
inline constexpr float kExpMax = 88.72283935546875f;  // largest float with a finite exp
inline constexpr float kExpMin = -104.0f;
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;
// 1/k! for k = 7 down to 2 (the terms of degree 1 and 0 are 1).
inline constexpr float kC7 = 1.0f / 5040.0f, kC6 = 1.0f / 720.0f, kC5 = 1.0f / 120.0f, kC4 = 1.0f / 24.0f,
                       kC3 = 1.0f / 6.0f, kC2 = 0.5f;
}  // namespace exp_f32_constants

// 2^k for a whole k in [-126, 127] held in a float: built from its exponent bits.
inline float pow2_f32(float k) {
  const auto bits = static_cast<uint32_t>(static_cast<int32_t>(k) + 127) << 23;
  float v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

inline float exp_f32(float x) {
  using namespace exp_f32_constants;
  if (std::isnan(x)) return x;
  if (x > kExpMax) return std::numeric_limits<float>::infinity();
  if (x < kExpMin) return 0.0f;
  const float n = std::nearbyint(x * kLog2e);
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  float p = kC7;
  p = p * r + kC6;
  p = p * r + kC5;
  p = p * r + kC4;
  p = p * r + kC3;
  p = p * r + kC2;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const float n1 = std::trunc(n * 0.5f), n2 = n - n1;
  return (p * pow2_f32(n1)) * pow2_f32(n2);
}

// The order of every float sum the kernels take in doubles: 16 running sums (element i adds to
// sum i mod 16) over the whole groups of 16, folded pairwise (sum j += sum j + 8, then + 4, + 2,
// + 1), then the remaining elements in order. A vector build of any width that divides 16 keeps
// the 16 running sums in its lanes and folds them the same way.
inline constexpr int64_t kSumLanes = 16;

inline double fold_sum_lanes(double (&s)[kSumLanes]) {
  for (int64_t w = kSumLanes / 2; w >= 1; w /= 2)
    for (int64_t j = 0; j < w; ++j) s[j] += s[j + w];
  return s[0];
}

// term(float) -> double, summed in that order.
template <class Term>
double ordered_sum(const float* x, int64_t n, Term term) {
  double s[kSumLanes] = {};
  const int64_t whole = n / kSumLanes * kSumLanes;
  for (int64_t i = 0; i < whole; ++i) s[i % kSumLanes] += term(x[i]);
  double total = fold_sum_lanes(s);
  for (int64_t i = whole; i < n; ++i) total += term(x[i]);
  return total;
}

// The float32 dot product of the float reference (the interpreter's linear): eight running sums
// (element i adds its product to sum i mod 8) over the whole groups of 8, folded as
// ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)), then the remaining products in order. Each
// product is rounded before it is added (no fused multiply-add), so a vector build keeping the
// eight sums in lanes gives the same bits.
inline float fold_dot8(const float* s) { return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])); }

inline float dot8_f32(const float* a, const float* b, int64_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  float s = fold_dot8(acc);
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace genai::kernels
