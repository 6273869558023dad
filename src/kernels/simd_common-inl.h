// Per-target helpers shared by the simd_<family>.cpp files: lane types and the vector form of
// kernels::requantize (requantize.h) with the code stores. Included once per Highway target
// (after hwy/highway.h), hence the toggling guard instead of #pragma once.
#if defined(GENAI_KERNELS_SIMD_COMMON_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GENAI_KERNELS_SIMD_COMMON_INL_H_
#undef GENAI_KERNELS_SIMD_COMMON_INL_H_
#else
#define GENAI_KERNELS_SIMD_COMMON_INL_H_
#endif

#include <cstring>

#include "hwy/highway.h"
#include "kernels/quantize.h"

HWY_BEFORE_NAMESPACE();
namespace genai::kernels::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

using DF = hn::ScalableTag<float>;
using DI32 = hn::ScalableTag<int32_t>;
using DI16 = hn::Repartition<int16_t, DI32>;
using DD = hn::Repartition<double, DI32>;  // half as many lanes
using VF = hn::Vec<DF>;
using VI32 = hn::Vec<DI32>;
using VI16 = hn::Vec<DI16>;
using VD = hn::Vec<DD>;

constexpr size_t kMaxLanes32 = HWY_MAX_BYTES / 4;

// N vectors of D for register tiles, indexed by loops the compiler unrolls. Fixed-width targets
// keep a plain array, which stays in registers. Scalable vectors (SVE) can be neither array
// elements nor class members: there the lanes live in an aligned buffer, loaded and stored on
// access.
template <class D, int N>
class VecArray {
 public:
  using V = hn::Vec<D>;
#if HWY_HAVE_SCALABLE
  HWY_INLINE V get(int i) const { return hn::Load(D(), lanes_ + static_cast<size_t>(i) * hn::Lanes(D())); }
  HWY_INLINE void set(int i, V v) { hn::Store(v, D(), lanes_ + static_cast<size_t>(i) * hn::Lanes(D())); }

 private:
  HWY_ALIGN hn::TFromD<D> lanes_[N * (HWY_MAX_BYTES / sizeof(hn::TFromD<D>))];
#else
  // Spelled out so that it is compiled for this target: an implicit one is not, on NEON.
  HWY_INLINE VecArray() {}
  HWY_INLINE V get(int i) const { return v_[i]; }
  HWY_INLINE void set(int i, V v) { v_[i] = v; }

 private:
  V v_[N];
#endif

 public:
  HWY_INLINE void fill(V v) {
    for (int i = 0; i < N; ++i) set(i, v);
  }
};

// ---------------------------------------------------------------------------------------------
// Requantization shared by linear_q and matmul_q: q = clamp(rne(t * m), lo, hi) + zp, NaN -> zp.

template <class D>
HWY_INLINE hn::Vec<hn::RebindToSigned<D>> RequantizeVec(D d, hn::Vec<D> t, const hn::Vec<D>& m, const hn::Vec<D>& lo,
                                                         const hn::Vec<D>& hi, const hn::Vec<hn::RebindToSigned<D>>& zp) {
  const hn::RebindToSigned<D> di;
  const auto r = hn::Round(hn::Mul(t, m));
  const auto c = hn::IfThenElseZero(hn::Eq(r, r), hn::Min(hn::Max(r, lo), hi));
  (void)d;
  return hn::Add(hn::ConvertTo(di, c), zp);
}

// kernels::htp_accumulator (requantize.h) on exact integers held in doubles: the centred sum
// floored to a multiple of 256 plus the zero-point correction rounded to one, ties down.
// Scaling by 256 is exact, so this gives the scalar build's integers.
template <class DD>
HWY_INLINE hn::Vec<DD> HtpAccumulatorVec(DD dd, hn::Vec<DD> centred, hn::Vec<DD> correction) {
  const auto k256 = hn::Set(dd, 256.0), inv256 = hn::Set(dd, 1.0 / 256.0), half = hn::Set(dd, 128.0);
  const auto floored = hn::Mul(hn::Floor(hn::Mul(centred, inv256)), k256);
  const auto rounded = hn::Mul(hn::Ceil(hn::Mul(hn::Sub(correction, half), inv256)), k256);
  return hn::Add(floored, rounded);
}

// kernels::clamp_code (quantized_mul.h) in double lanes: t rounded half to even plus q's zero
// point, clamped to q's codes, NaN to qmin.
template <class DDh>
HWY_INLINE hn::Vec<DDh> ClampCodeVec(DDh dd, hn::Vec<DDh> t, const QParams& q) {
  const auto lo = hn::Set(dd, static_cast<double>(q.qmin - q.zero_point));
  const auto hi = hn::Set(dd, static_cast<double>(q.qmax - q.zero_point));
  const auto r = hn::Add(hn::Round(t), hn::Set(dd, static_cast<double>(q.zero_point)));
  const auto above = hn::IfThenElse(hn::Ge(t, hi), hn::Set(dd, static_cast<double>(q.qmax)), r);
  return hn::IfThenElse(hn::Ge(t, lo), above, hn::Set(dd, static_cast<double>(q.qmin)));  // NaN: qmin
}

// Stores `count` (<= lanes) codes of q (int32 lanes within [0, 65535]) as u8 or u16.
template <class DI>
HWY_INLINE void StoreCodes(DI di, hn::Vec<DI> q, ActType t, void* y, int64_t index, size_t count) {
  const size_t lanes = hn::Lanes(di);
  if (t == ActType::kU16) {
    const hn::Rebind<uint16_t, DI> du16;
    auto v = hn::DemoteTo(du16, q);
    uint16_t* dst = static_cast<uint16_t*>(y) + index;
    if (count == lanes) {
      hn::StoreU(v, du16, dst);
    } else {
      HWY_ALIGN uint16_t tmp[HWY_MAX_BYTES / 4];
      hn::Store(v, du16, tmp);
      std::memcpy(dst, tmp, count * sizeof(uint16_t));
    }
  } else {
    const hn::Rebind<uint8_t, DI> du8;
    auto v = hn::DemoteTo(du8, q);
    uint8_t* dst = static_cast<uint8_t*>(y) + index;
    if (count == lanes) {
      hn::StoreU(v, du8, dst);
    } else {
      HWY_ALIGN uint8_t tmp[HWY_MAX_BYTES / 4];
      hn::Store(v, du8, tmp);
      std::memcpy(dst, tmp, count);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Integer pair products shared by linear_q and matmul_q.

HWY_INLINE VI32 PairDot(DI32 d32, VI32 acc, VI16 w, VI16 x) {
#if HWY_TARGET == HWY_AVX3_DL
  (void)d32;
  // vpdpwssd (AVX-512 VNNI): acc += w[2i] x[2i] + w[2i+1] x[2i+1], no saturation. Highway
  // 1.0.3's AVX3_DL target string lacks avx512vnni, so the instruction is emitted directly.
  auto raw = acc.raw;
  asm("vpdpwssd %2, %1, %0" : "+v"(raw) : "v"(w.raw), "v"(x.raw));
  return VI32{raw};
#elif HWY_ARCH_X86 && HWY_TARGET != HWY_EMU128
  VI32 unused = hn::Zero(d32);
  return hn::ReorderWidenMulAccumulate(d32, w, x, acc, unused);  // vpmaddwd + vpaddd
#else
  // Portable: widen the even and the odd int16 lanes of each pair and multiply in int32.
  const VI32 w32 = hn::BitCast(d32, w), x32 = hn::BitCast(d32, x);
  const VI32 we = hn::ShiftRight<16>(hn::ShiftLeft<16>(w32)), wo = hn::ShiftRight<16>(w32);
  const VI32 xe = hn::ShiftRight<16>(hn::ShiftLeft<16>(x32)), xo = hn::ShiftRight<16>(x32);
  return hn::Add(acc, hn::Add(hn::Mul(we, xe), hn::Mul(wo, xo)));
#endif
}

// The activation pair (x'[k], x'[k+1]) in every 32-bit lane.
HWY_INLINE VI16 BroadcastPair(const int16_t* x) {
  int32_t v;
  std::memcpy(&v, x, sizeof(v));
  return hn::BitCast(DI16(), hn::Set(DI32(), v));
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace genai::kernels::simd
HWY_AFTER_NAMESPACE();

#endif  // GENAI_KERNELS_SIMD_COMMON_INL_H_
