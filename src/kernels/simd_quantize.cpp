// Vectorised quantize, dequantize and round_to_f16 (bit-exact with the scalar build),
// compiled once per Highway target by hwy/foreach_target.h; HWY_DYNAMIC_DISPATCH picks the best
// one the CPU has.
// Without Highway (GENAI_SCALAR_ONLY) simd_target.cpp forwards every kernel to the scalar build.
#if !defined(GENAI_KERNELS_SCALAR_ONLY)

#include <algorithm>
#include <cstring>

#include "core/half.h"
#include "kernels/quantized_mul.h"
#include "kernels/quantized_rope.h"
#include "kernels/quantized_softmax.h"
#include "kernels/scalar_kernels.h"
#include "kernels/simd_kernels.h"
#include "kernels/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd_quantize.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/simd_common-inl.h"

HWY_BEFORE_NAMESPACE();
namespace genai::kernels::simd {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_SCALAR  // one-lane vectors: the scalar build (available() is false there)
GENAI_KERNELS_QUANTIZE(GENAI_KERNEL_IMPL_FORWARD_TO_SCALAR)
#else

// ---------------------------------------------------------------------------------------------
// quantize / dequantize / round_to_f16

// x / scale (a true division, as quant::quantize_value does) rounded half to even (kFloor: floored,
// kernels::requantize_floor), clamped, NaN -> the zero point; the tail by the scalar build.
template <bool kFloor>
void QuantizeRounded(const float* x, int64_t n, const QParams& p, ActType t, void* q) {
  const DF df;
  const DI32 di;
  const VF scale = hn::Set(df, p.scale);
  const VF lo = hn::Set(df, static_cast<float>(p.qmin - p.zero_point));
  const VF hi = hn::Set(df, static_cast<float>(p.qmax - p.zero_point));
  const VI32 zp = hn::Set(di, p.zero_point);
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    const VF v = hn::Div(hn::LoadU(df, x + i), scale);
    const VF r = kFloor ? hn::Floor(v) : hn::Round(v);
    const VF c = hn::IfThenElseZero(hn::Eq(r, r), hn::Min(hn::Max(r, lo), hi));
    StoreCodes(di, hn::Add(hn::ConvertTo(di, c), zp), t, q, i, static_cast<size_t>(L));
  }
  if (i == n) return;
  void* rest = t == ActType::kU8 ? static_cast<void*>(static_cast<uint8_t*>(q) + i)
                                 : static_cast<void*>(static_cast<uint16_t*>(q) + i);
  if (kFloor) scalar::quantize_floor(x + i, n - i, p, t, rest);
  else scalar::quantize(x + i, n - i, p, t, rest);
}

void QuantizeImpl(const float* x, int64_t n, const QParams& p, ActType t, void* q) { QuantizeRounded<false>(x, n, p, t, q); }

void QuantizeFloorImpl(const float* x, int64_t n, const QParams& p, ActType t, void* q) {
  QuantizeRounded<true>(x, n, p, t, q);
}

// kernels::htp_add_code on 16-bit codes, element-wise (steps 1): the integer sum held in doubles
// (each product is below 2^31 and the sum below 2^33, so exact), divided by 2^shift (exact) and
// floored, as the scalar build's arithmetic shift. Other types and steps: the scalar build.
void AddQImpl(const void* a, ActType at, int64_t a_step, const void* b, ActType bt, int64_t b_step, int64_t n,
              const HtpAdd& p, ActType yt, void* y) {
  if (at != ActType::kU16 || bt != ActType::kU16 || yt != ActType::kU16 || b_step != 1 || (a_step != 1 && a_step != 0)) {
    scalar::add_q(a, at, a_step, b, bt, b_step, n, p, yt, y);
    return;
  }
  const DD dd;
  const hn::Rebind<int32_t, DD> di;
  const hn::Rebind<uint16_t, DD> du;
  const int64_t L = static_cast<int64_t>(hn::Lanes(dd));
  const uint16_t* pa = static_cast<const uint16_t*>(a);
  const uint16_t* pb = static_cast<const uint16_t*>(b);
  uint16_t* py = static_cast<uint16_t*>(y);
  const VD ma = hn::Set(dd, static_cast<double>(p.ma)), mb = hn::Set(dd, static_cast<double>(p.mb));
  const VD zpa = hn::Set(dd, static_cast<double>(p.zpa)), zpb = hn::Set(dd, static_cast<double>(p.zpb));
  const VD half = hn::Set(dd, static_cast<double>(int64_t{1} << (p.shift - 1)));
  const VD inv = hn::Set(dd, 1.0 / static_cast<double>(int64_t{1} << p.shift));
  const VD zpy = hn::Set(dd, static_cast<double>(p.zpy));
  const VD lo = hn::Set(dd, static_cast<double>(p.qmin)), hi = hn::Set(dd, static_cast<double>(p.qmax));
  const auto load = [&](const uint16_t* src) { return hn::PromoteTo(dd, hn::PromoteTo(di, hn::LoadU(du, src))); };
  const VD a_scalar = a_step == 0 ? hn::Mul(hn::Sub(hn::Set(dd, static_cast<double>(pa[0])), zpa), ma) : hn::Zero(dd);
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    const VD ta = a_step == 0 ? a_scalar : hn::Mul(hn::Sub(load(pa + i), zpa), ma);
    const VD s = hn::Add(hn::Add(ta, hn::Mul(hn::Sub(load(pb + i), zpb), mb)), half);
    const VD q = hn::Min(hn::Max(hn::Add(hn::Floor(hn::Mul(s, inv)), zpy), lo), hi);
    hn::StoreU(hn::DemoteTo(du, hn::DemoteTo(di, q)), du, py + i);
  }
  if (i < n) scalar::add_q(a_step == 0 ? pa : pa + i, at, a_step, pb + i, bt, b_step, n - i, p, yt, py + i);
}

// kernels::softmax_q: the same integers, 16 lanes at a time (e from the scale's table by gathers;
// the row sum in int32 lanes, flushed before they could overflow).
void SoftmaxQImpl(const uint16_t* x, int64_t rows, int64_t n, float x_scale, uint16_t* y) {
  const DI32 di;
  const hn::Rebind<uint16_t, DI32> du16;
  const int64_t L = static_cast<int64_t>(hn::Lanes(di));
  const std::vector<int32_t>& table = softmax_exp_table(x_scale);
  const auto past = static_cast<int32_t>(table.size()) - 1;
  thread_local std::vector<int32_t> e;
  e.resize(static_cast<size_t>(n + L));
  const VI32 vpast = hn::Set(di, past);
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* xr = x + r * n;
    uint16_t* yr = y + r * n;
    int64_t i = 0;
    VI32 vmax = hn::Zero(di);
    for (; i + L <= n; i += L) vmax = hn::Max(vmax, hn::PromoteTo(di, hn::LoadU(du16, xr + i)));
    int32_t top = hn::GetLane(hn::MaxOfLanes(di, vmax));
    for (; i < n; ++i) top = std::max<int32_t>(top, xr[i]);
    const VI32 vtop = hn::Set(di, top);
    uint64_t sum = 0;
    VI32 vsum = hn::Zero(di);
    int64_t pending = 0;  // chunks in vsum: each lane gains at most 2^15 per chunk
    i = 0;
    for (; i + L <= n; i += L) {
      const VI32 d = hn::Min(hn::Sub(vtop, hn::PromoteTo(di, hn::LoadU(du16, xr + i))), vpast);
      const VI32 ev = hn::GatherIndex(di, table.data(), d);
      hn::StoreU(ev, di, e.data() + i);
      vsum = hn::Add(vsum, ev);
      if (++pending == 1024) {
        sum += static_cast<uint64_t>(hn::GetLane(hn::SumOfLanes(di, vsum)));
        vsum = hn::Zero(di);
        pending = 0;
      }
    }
    sum += static_cast<uint64_t>(hn::GetLane(hn::SumOfLanes(di, vsum)));
    for (; i < n; ++i) {
      e[static_cast<size_t>(i)] = table[static_cast<size_t>(std::min(top - static_cast<int32_t>(xr[i]), past))];
      sum += static_cast<uint64_t>(e[static_cast<size_t>(i)]);
    }
    const SoftmaxScale sc = softmax_scale(sum);
    // e <= 2^15 and recip < 2^15: the product fits an int32 lane.
    const VI32 recip = hn::Set(di, static_cast<int32_t>(sc.recip));
    const VI32 hi = hn::Set(di, 65535);
    const int shift = sc.shift - 16;
    i = 0;
    for (; i + L <= n; i += L) {
      const VI32 p = hn::Min(hn::ShiftRightSame(hn::Mul(hn::LoadU(di, e.data() + i), recip), shift), hi);
      hn::StoreU(hn::DemoteTo(du16, p), du16, yr + i);
    }
    for (; i < n; ++i) {
      const int64_t p = (int64_t{e[static_cast<size_t>(i)]} * sc.recip) >> shift;
      yr[i] = static_cast<uint16_t>(p > 65535 ? 65535 : p);
    }
  }
}

// kernels::rope_q: the same arithmetic in double lanes (products of code differences are exact,
// times the ratio rounded once, as mul_code; clamp_code's bounds, NaN to qmin, round half to even;
// then htp_add_code as AddQImpl), over the elements of each half-row; tails by the scalar build.
void RopeQImpl(const uint16_t* x, const uint16_t* cos, const uint16_t* sin, int64_t seq, int64_t d, const HtpRope& p,
               uint16_t* y) {
  const DD dd;
  const hn::Rebind<int32_t, DD> di;
  const hn::Rebind<uint16_t, DD> du;
  const int64_t L = static_cast<int64_t>(hn::Lanes(dd)), half = d / 2;
  const auto load = [&](const uint16_t* src) { return hn::PromoteTo(dd, hn::PromoteTo(di, hn::LoadU(du, src))); };
  const auto zx = hn::Set(dd, static_cast<double>(p.x.zero_point)), zc = hn::Set(dd, static_cast<double>(p.cos.zero_point));
  const auto zs = hn::Set(dd, static_cast<double>(p.sin.zero_point)), zsym = hn::Set(dd, static_cast<double>(p.sym.zero_point));
  const auto r_rot = hn::Set(dd, p.rotated), r_xc = hn::Set(dd, p.x_cos), r_rs = hn::Set(dd, p.rot_sin);
  const auto ma = hn::Set(dd, static_cast<double>(p.add.ma)), mb = hn::Set(dd, static_cast<double>(p.add.mb));
  const auto zpa = hn::Set(dd, static_cast<double>(p.add.zpa)), zpb = hn::Set(dd, static_cast<double>(p.add.zpb));
  const auto rnd = hn::Set(dd, static_cast<double>(int64_t{1} << (p.add.shift - 1)));
  const auto inv = hn::Set(dd, 1.0 / static_cast<double>(int64_t{1} << p.add.shift));
  const auto zpy = hn::Set(dd, static_cast<double>(p.add.zpy));
  const auto ylo = hn::Set(dd, static_cast<double>(p.add.qmin)), yhi = hn::Set(dd, static_cast<double>(p.add.qmax));
  const int64_t full = half / L * L;
  for (int64_t s = 0; s < seq; ++s) {
    const int64_t r = s * d;
    for (int part = 0; part < 2; ++part) {
      const uint16_t* xr = x + r + part * half;
      const uint16_t* other = x + r + (1 - part) * half;
      const uint16_t* cr = cos + r + part * half;
      const uint16_t* sr = sin + r + part * half;
      uint16_t* yr = y + r + part * half;
      const auto sign = hn::Set(dd, part == 0 ? -1.0 : 1.0);
      for (int64_t i = 0; i < full; i += L) {
        const auto rot = ClampCodeVec(dd, hn::Mul(hn::Mul(sign, hn::Sub(load(other + i), zx)), r_rot), p.sym);
        const auto xc = ClampCodeVec(dd, hn::Mul(hn::Mul(hn::Sub(load(xr + i), zx), hn::Sub(load(cr + i), zc)), r_xc), p.sym);
        const auto rs = ClampCodeVec(dd, hn::Mul(hn::Mul(hn::Sub(rot, zsym), hn::Sub(load(sr + i), zs)), r_rs), p.sym);
        const auto sum = hn::Add(hn::Add(hn::Mul(hn::Sub(xc, zpa), ma), hn::Mul(hn::Sub(rs, zpb), mb)), rnd);
        const auto q = hn::Min(hn::Max(hn::Add(hn::Floor(hn::Mul(sum, inv)), zpy), ylo), yhi);
        hn::StoreU(hn::DemoteTo(du, hn::DemoteTo(di, q)), du, yr + i);
      }
      for (int64_t i = full; i < half; ++i)
        yr[i] = static_cast<uint16_t>(htp_rope_code(xr[i], other[i], part == 0 ? -1 : 1, cr[i], sr[i], p));
    }
  }
}

void DequantizeImpl(const void* q, ActType t, int64_t n, const QParams& p, float* x) {
  const DF df;
  const DI32 di;
  const VF scale = hn::Set(df, p.scale);
  const VI32 zp = hn::Set(di, p.zero_point);
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  if (t == ActType::kU16) {
    const hn::Rebind<uint16_t, DI32> du16;
    const uint16_t* src = static_cast<const uint16_t*>(q);
    for (; i + L <= n; i += L) {
      const VI32 v = hn::Sub(hn::PromoteTo(di, hn::LoadU(du16, src + i)), zp);
      hn::StoreU(hn::Mul(hn::ConvertTo(df, v), scale), df, x + i);
    }
    if (i < n) scalar::dequantize(src + i, t, n - i, p, x + i);
  } else {
    const hn::Rebind<uint8_t, DI32> du8;
    const uint8_t* src = static_cast<const uint8_t*>(q);
    for (; i + L <= n; i += L) {
      const VI32 v = hn::Sub(hn::PromoteTo(di, hn::LoadU(du8, src + i)), zp);
      hn::StoreU(hn::Mul(hn::ConvertTo(df, v), scale), df, x + i);
    }
    if (i < n) scalar::dequantize(src + i, t, n - i, p, x + i);
  }
}

void RoundToF16Impl(float* x, int64_t n) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  // Hardware conversion (F16C / AVX-512): round to nearest even, overflow to infinity.
  const DF df;
  const hn::Rebind<hwy::float16_t, DF> dh;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + L <= n; i += L) hn::StoreU(hn::PromoteTo(df, hn::DemoteTo(dh, hn::LoadU(df, x + i))), df, x + i);
  if (i < n) scalar::round_to_f16(x + i, n - i);
#else
  scalar::round_to_f16(x, n);
#endif
}

void WidenF16Impl(const uint16_t* h, int64_t n, float* x) {
  int64_t i = 0;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  // Hardware conversion (F16C / AVX-512): exact, as every half is a float.
  const DF df;
  const hn::Rebind<hwy::float16_t, DF> dh;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  for (; i + L <= n; i += L) hn::StoreU(hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(h + i))), df, x + i);
#endif
  if (i < n) scalar::widen_f16(h + i, n - i, x + i);
}

// One candidate scale per lane (the last one repeated into spare lanes), the elements in order:
// each lane's sum is the scalar build's sum for its scale. Division, round half even, the clamp
// and NaN -> 0 as in QuantizeRounded.
void ShrinkErrorsImpl(const float* w, int64_t n, const float* scales, int64_t m, float qmin, float qmax, float* errs) {
  const DF df;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  const VF lo = hn::Set(df, qmin), hi = hn::Set(df, qmax);
  HWY_ALIGN float s_lanes[kMaxLanes32];
  HWY_ALIGN float e_lanes[kMaxLanes32];
  for (int64_t k0 = 0; k0 < m; k0 += L) {
    for (int64_t j = 0; j < L; ++j) s_lanes[j] = scales[std::min(k0 + j, m - 1)];
    const VF s = hn::Load(df, s_lanes);
    VF err = hn::Zero(df);
    for (int64_t i = 0; i < n; ++i) {
      const VF wi = hn::Set(df, w[i]);
      const VF r = hn::Round(hn::Div(wi, s));
      const VF q = hn::IfThenElseZero(hn::Eq(r, r), hn::Min(hn::Max(r, lo), hi));
      const VF d = hn::Sub(hn::Mul(q, s), wi);
      err = hn::Add(err, hn::Mul(d, d));
    }
    hn::Store(err, df, e_lanes);
    for (int64_t j = 0; j < L && k0 + j < m; ++j) errs[k0 + j] = e_lanes[j];
  }
}

#endif  // HWY_TARGET == HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace genai::kernels::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace genai::kernels::simd {
GENAI_KERNELS_QUANTIZE(GENAI_KERNEL_DISPATCH)
}  // namespace genai::kernels::simd
#endif  // HWY_ONCE

#endif  // !GENAI_KERNELS_SCALAR_ONLY
