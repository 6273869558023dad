// Vectorised float ops: rope, add, mul bit-exact with the scalar build; rms_norm, softmax, silu
// within float rounding (reassociated sums, polynomial exp; see float_ops.h),
// compiled once per Highway target by hwy/foreach_target.h; HWY_DYNAMIC_DISPATCH picks the best
// one the CPU has.
// Without Highway (GENAI_SCALAR_ONLY) simd_target.cpp forwards every kernel to the scalar build.
#if !defined(GENAI_KERNELS_SCALAR_ONLY)

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/scalar_kernels.h"
#include "kernels/simd_kernels.h"
#include "kernels/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd_float_ops.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
#include "kernels/simd_common-inl.h"

HWY_BEFORE_NAMESPACE();
namespace genai::kernels::simd {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_SCALAR  // one-lane vectors: the scalar build (available() is false there)
GENAI_KERNELS_FLOAT_OPS(GENAI_KERNEL_IMPL_FORWARD_TO_SCALAR)
#else

// ---------------------------------------------------------------------------------------------
// Float ops.

// Sum of squares in double lanes (the interpreter sums in double; only the order differs).
double SumSquares(const float* x, int64_t n) {
  const DF df;
  const DD dd;
  const hn::Rebind<float, DD> dfh;
  const int64_t H = static_cast<int64_t>(hn::Lanes(dd));
  VD s0 = hn::Zero(dd), s1 = hn::Zero(dd);
  int64_t i = 0;
  for (; i + 2 * H <= n; i += 2 * H) {
    const VD a = hn::PromoteTo(dd, hn::LoadU(dfh, x + i)), b = hn::PromoteTo(dd, hn::LoadU(dfh, x + i + H));
    s0 = hn::MulAdd(a, a, s0);
    s1 = hn::MulAdd(b, b, s1);
  }
  double ss = hn::GetLane(hn::SumOfLanes(dd, hn::Add(s0, s1)));
  for (; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  (void)df;
  return ss;
}

void RmsNormImpl(const float* x, int64_t rows, int64_t dim, const float* weight, float eps, float* y) {
  const DF df;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  for (int64_t r = 0; r < rows; ++r) {
    const float* src = x + r * dim;
    float* dst = y + r * dim;
    const double ss = SumSquares(src, dim);
    const float inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(dim) + static_cast<double>(eps)));
    const VF vi = hn::Set(df, inv);
    int64_t i = 0;
    for (; i + L <= dim; i += L)
      hn::StoreU(hn::Mul(hn::LoadU(df, weight + i), hn::Mul(hn::LoadU(df, src + i), vi)), df, dst + i);
    for (; i < dim; ++i) dst[i] = weight[i] * (src[i] * inv);
  }
}

// exp(x) for float lanes: Highway's polynomial (about 1 ulp) below 88.72, infinity above (as
// std::exp), 0 below -104.
HWY_INLINE VF ExpF(DF df, VF x) {
  const VF kMax = hn::Set(df, 88.72283935546875f);
  const VF e = hn::Exp(df, hn::Min(x, kMax));
  return hn::IfThenElse(hn::Gt(x, kMax), hn::Set(df, std::numeric_limits<float>::infinity()), e);
}

void SoftmaxImpl(float* x, int64_t rows, int64_t n) {
  const DF df;
  const DD dd;
  const hn::Rebind<float, DD> dfh;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df)), H = static_cast<int64_t>(hn::Lanes(dd));
  for (int64_t r = 0; r < rows; ++r) {
    float* v = x + r * n;
    float mx = v[0];
    int64_t i = 0;
    if (n >= L) {
      VF vm = hn::LoadU(df, v);
      for (i = L; i + L <= n; i += L) vm = hn::Max(vm, hn::LoadU(df, v + i));
      mx = hn::GetLane(hn::MaxOfLanes(df, vm));
    }
    for (; i < n; ++i) mx = std::max(mx, v[i]);
    const VF vmx = hn::Set(df, mx);
    for (i = 0; i + L <= n; i += L) hn::StoreU(ExpF(df, hn::Sub(hn::LoadU(df, v + i), vmx)), df, v + i);
    for (; i < n; ++i) v[i] = std::exp(v[i] - mx);
    VD s = hn::Zero(dd);
    for (i = 0; i + H <= n; i += H) s = hn::Add(s, hn::PromoteTo(dd, hn::LoadU(dfh, v + i)));
    double sum = hn::GetLane(hn::SumOfLanes(dd, s));
    for (; i < n; ++i) sum += v[i];
    const float inv = static_cast<float>(1.0 / sum);
    const VF vi = hn::Set(df, inv);
    for (i = 0; i + L <= n; i += L) hn::StoreU(hn::Mul(hn::LoadU(df, v + i), vi), df, v + i);
    for (; i < n; ++i) v[i] *= inv;
  }
}

void SiluImpl(float* x, int64_t n) {
  const DF df;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  const VF one = hn::Set(df, 1.0f);
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    const VF v = hn::LoadU(df, x + i);
    hn::StoreU(hn::Div(v, hn::Add(one, ExpF(df, hn::Neg(v)))), df, x + i);
  }
  for (; i < n; ++i) x[i] = x[i] / (1.0f + std::exp(-x[i]));
}

// rope: the interpreter's products and sum per element (no fused multiply-add): bit-exact.
void RopeImpl(const float* x, int64_t heads, int64_t seq, int64_t head_dim, const float* cos, const float* sin,
              float* y) {
  const DF df;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df)), half = head_dim / 2;
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t s = 0; s < seq; ++s) {
      const float* src = x + (h * seq + s) * head_dim;
      const float* c = cos + s * head_dim;
      const float* sn = sin + s * head_dim;
      float* dst = y + (h * seq + s) * head_dim;
      int64_t d = 0;
      for (; d + L <= half; d += L) {
        const VF lo = hn::LoadU(df, src + d), hi = hn::LoadU(df, src + d + half);
        const VF out_lo = hn::Add(hn::Mul(lo, hn::LoadU(df, c + d)), hn::Mul(hn::Neg(hi), hn::LoadU(df, sn + d)));
        const VF out_hi = hn::Add(hn::Mul(hi, hn::LoadU(df, c + d + half)), hn::Mul(lo, hn::LoadU(df, sn + d + half)));
        hn::StoreU(out_lo, df, dst + d);
        hn::StoreU(out_hi, df, dst + d + half);
      }
      for (; d < half; ++d) {
        const float lo = src[d], hi = src[d + half];
        const float out_lo = lo * c[d] + (-hi) * sn[d];
        const float out_hi = hi * c[d + half] + lo * sn[d + half];
        dst[d] = out_lo;
        dst[d + half] = out_hi;
      }
    }
}

void AddImpl(const float* a, const float* b, int64_t n, float* y) {
  const DF df;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + L <= n; i += L) hn::StoreU(hn::Add(hn::LoadU(df, a + i), hn::LoadU(df, b + i)), df, y + i);
  for (; i < n; ++i) y[i] = a[i] + b[i];
}

void MulImpl(const float* a, const float* b, int64_t n, float* y) {
  const DF df;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + L <= n; i += L) hn::StoreU(hn::Mul(hn::LoadU(df, a + i), hn::LoadU(df, b + i)), df, y + i);
  for (; i < n; ++i) y[i] = a[i] * b[i];
}

#endif  // HWY_TARGET == HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace genai::kernels::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace genai::kernels::simd {
GENAI_KERNELS_FLOAT_OPS(GENAI_KERNEL_DISPATCH)
}  // namespace genai::kernels::simd
#endif  // HWY_ONCE

#endif  // !GENAI_KERNELS_SCALAR_ONLY
