// Vectorised float ops, bit-exact with the scalar build (exp and the double sums as float_arith.h
// defines them; see float_ops.h),
// compiled once per Highway target by hwy/foreach_target.h; HWY_DYNAMIC_DISPATCH picks the best
// one the CPU has.
// Without Highway (GENAI_SCALAR_ONLY) simd_target.cpp forwards every kernel to the scalar build.
#if !defined(GENAI_KERNELS_SCALAR_ONLY)

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/float_arith.h"
#include "kernels/quantized_mul.h"
#include "kernels/quantized_silu.h"
#include "kernels/scalar_kernels.h"
#include "kernels/simd_kernels.h"
#include "kernels/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd_float_ops.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/simd_common-inl.h"

HWY_BEFORE_NAMESPACE();
namespace genai::kernels::simd {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_SCALAR  // one-lane vectors: the scalar build (available() is false there)
GENAI_KERNELS_FLOAT_OPS(GENAI_KERNEL_IMPL_FORWARD_TO_SCALAR)
#else

// ---------------------------------------------------------------------------------------------
// Float ops.

// float_arith.h's ordered_sum of term(x[i]) in double lanes: the 16 running sums live in 16 / H
// vectors of H lanes (H divides 16 on every fixed-width target), stored and folded as the scalar
// build folds them. Any other lane count takes the scalar loop.
template <class Term>
double OrderedSum(const float* x, int64_t n, Term term) {
  const DD dd;
  const hn::Rebind<float, DD> dfh;
  const int64_t H = static_cast<int64_t>(hn::Lanes(dd));
  constexpr int64_t kMaxVecs = kSumLanes / 2;
  if (H > kSumLanes || kSumLanes % H != 0 || kSumLanes / H > kMaxVecs)
    return ordered_sum(x, n, [&](float v) { return hn::GetLane(term(hn::Set(dd, static_cast<double>(v)))); });
  const int64_t vecs = kSumLanes / H;
  VecArray<DD, kMaxVecs> acc;
  acc.fill(hn::Zero(dd));
  const int64_t whole = n / kSumLanes * kSumLanes;
  for (int64_t i = 0; i < whole; i += kSumLanes)
    for (int q = 0; q < vecs; ++q) acc.set(q, hn::Add(acc.get(q), term(hn::PromoteTo(dd, hn::LoadU(dfh, x + i + q * H)))));
  HWY_ALIGN double lanes[kSumLanes];
  for (int q = 0; q < vecs; ++q) hn::Store(acc.get(q), dd, lanes + q * H);
  double total = fold_sum_lanes(lanes);
  for (int64_t i = whole; i < n; ++i) total += hn::GetLane(term(hn::Set(dd, static_cast<double>(x[i]))));
  return total;
}

void RmsNormImpl(const float* x, int64_t rows, int64_t dim, const float* weight, float eps, float* y) {
  const DF df;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  for (int64_t r = 0; r < rows; ++r) {
    const float* src = x + r * dim;
    float* dst = y + r * dim;
    // A float's square is exact in a double, so Mul here equals the scalar build's product.
    const double ss = OrderedSum(src, dim, [](VD v) { return hn::Mul(v, v); });
    const float inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(dim) + static_cast<double>(eps)));
    const VF vi = hn::Set(df, inv);
    int64_t i = 0;
    for (; i + L <= dim; i += L)
      hn::StoreU(hn::Mul(hn::LoadU(df, weight + i), hn::Mul(hn::LoadU(df, src + i), vi)), df, dst + i);
    for (; i < dim; ++i) dst[i] = weight[i] * (src[i] * inv);
  }
}

// float_arith.h's exp_f32 in lanes: the same operations in the same order, the range limits as
// selects.
HWY_INLINE VF ExpF(DF df, VF x) {
  using namespace exp_f32_constants;
  const DI32 di;
  const VF xc = hn::Min(hn::Max(x, hn::Set(df, kExpMin)), hn::Set(df, kExpMax));
  const VF n = hn::Round(hn::Mul(xc, hn::Set(df, kLog2e)));
  const VF r = hn::Sub(hn::Sub(xc, hn::Mul(n, hn::Set(df, kLn2Hi))), hn::Mul(n, hn::Set(df, kLn2Lo)));
  VF p = hn::Set(df, kC7);
  p = hn::Add(hn::Mul(p, r), hn::Set(df, kC6));
  p = hn::Add(hn::Mul(p, r), hn::Set(df, kC5));
  p = hn::Add(hn::Mul(p, r), hn::Set(df, kC4));
  p = hn::Add(hn::Mul(p, r), hn::Set(df, kC3));
  p = hn::Add(hn::Mul(p, r), hn::Set(df, kC2));
  p = hn::Add(hn::Mul(p, r), hn::Set(df, 1.0f));
  p = hn::Add(hn::Mul(p, r), hn::Set(df, 1.0f));
  const VF n1 = hn::Trunc(hn::Mul(n, hn::Set(df, 0.5f))), n2 = hn::Sub(n, n1);
  const auto pow2 = [&](VF k) {
    return hn::BitCast(df, hn::ShiftLeft<23>(hn::Add(hn::ConvertTo(di, k), hn::Set(di, 127))));
  };
  VF e = hn::Mul(hn::Mul(p, pow2(n1)), pow2(n2));
  e = hn::IfThenElse(hn::Gt(x, hn::Set(df, kExpMax)), hn::Set(df, std::numeric_limits<float>::infinity()), e);
  e = hn::IfThenZeroElse(hn::Lt(x, hn::Set(df, kExpMin)), e);
  return hn::IfThenElse(hn::IsNaN(x), x, e);
}

void SoftmaxImpl(float* x, int64_t rows, int64_t n) {
  const DF df;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
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
    for (; i < n; ++i) v[i] = exp_f32(v[i] - mx);
    const double sum = OrderedSum(v, n, [](VD e) { return e; });
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
  for (; i < n; ++i) x[i] = x[i] / (1.0f + exp_f32(-x[i]));
}

// kernels::silu_q on 16-bit codes: the sigmoid's code (htp_sigmoid_code: the same float
// operations, ExpF for exp_f32) times the code difference, onto y (mul_code in double lanes).
void SiluQImpl(const uint16_t* x, int64_t n, const QParams& ex, const QParams& ey, uint16_t* y) {
  const DF df;
  const DI32 di;
  const DD dd;
  const hn::Rebind<int32_t, DD> dih;
  const hn::Rebind<uint16_t, DI32> du16;
  const hn::Rebind<uint16_t, DD> du16h;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df)), H = L / 2;
  const VF one = hn::Set(df, 1.0f), scale = hn::Set(df, ex.scale), k2_15 = hn::Set(df, 32768.0f);
  const VF two = hn::Set(df, 2.0f), top = hn::Set(df, 65535.0f);
  const VI32 zx = hn::Set(di, ex.zero_point);
  const VD ratio = hn::Set(dd, product_ratio(ex.scale, htp_sigmoid_grid().scale, ey));
  int64_t i = 0;
  HWY_ALIGN int32_t dxs[kMaxLanes32], codes[kMaxLanes32];
  HWY_ALIGN uint16_t out[kMaxLanes32];
  for (; i + L <= n; i += L) {
    const VI32 dx = hn::Sub(hn::PromoteTo(di, hn::LoadU(du16, x + i)), zx);
    const VF xf = hn::Mul(hn::ConvertTo(df, dx), scale);
    const VF sig = hn::Div(one, hn::Add(one, ExpF(df, hn::Neg(xf))));
    const VF code = hn::IfThenElseZero(hn::Gt(sig, hn::Zero(df)), hn::Min(hn::Mul(two, hn::Floor(hn::Mul(sig, k2_15))), top));
    hn::Store(dx, di, dxs);
    hn::Store(hn::ConvertTo(di, code), di, codes);
    for (int64_t h = 0; h < L; h += H) {
      const VD prod = hn::Mul(hn::PromoteTo(dd, hn::Load(dih, dxs + h)), hn::PromoteTo(dd, hn::Load(dih, codes + h)));
      const VD q = ClampCodeVec(dd, hn::Mul(prod, ratio), ey);
      hn::Store(hn::DemoteTo(du16h, hn::DemoteTo(dih, q)), du16h, out + h);
    }
    std::memcpy(y + i, out, static_cast<size_t>(L) * sizeof(uint16_t));
  }
  if (i < n) scalar::silu_q(x + i, n - i, ex, ey, y + i);
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
