// Vectorised linear_q (bit-exact with the scalar build) and linear_f16 (within float rounding:
// its sums are reassociated),
// compiled once per Highway target by hwy/foreach_target.h; HWY_DYNAMIC_DISPATCH picks the best
// one the CPU has.
// Without Highway (GENAI_SCALAR_ONLY) simd_target.cpp forwards every kernel to the scalar build.
#if !defined(GENAI_KERNELS_SCALAR_ONLY)

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/float_arith.h"
#include "kernels/packed_layout.h"
#include "kernels/requantize.h"
#include "kernels/scalar_kernels.h"
#include "kernels/simd_kernels.h"
#include "kernels/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd_linear.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/simd_common-inl.h"

HWY_BEFORE_NAMESPACE();
namespace genai::kernels::simd {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_SCALAR  // one-lane vectors: the scalar build (available() is false there)
GENAI_KERNELS_LINEAR(GENAI_KERNEL_IMPL_FORWARD_TO_SCALAR)
#else

// ---------------------------------------------------------------------------------------------
// Integer linear (see packed_layout.h for the weight layout).
//
// Activations enter as int16 x' = q - off (off = 32768 for u16 codes, zp for u8), so
// (q - zp) = x' + (off - zp) and sum (q - zp) w = sum x' w + (off - zp) * block_sum(w).
// Lane i of an int32 accumulator holds channel i; each step adds x'[2s] w[i][2s] +
// x'[2s+1] w[i][2s+1] (vpdpwssd / vpmaddwd). |x'| <= 32768, |w| <= 128: one step adds at most
// 2^23 to a lane, so lanes stay exact for 255 steps. Blocks of <= 128 columns (64 steps, plus a
// correction <= 2^15 * 128 * 128) stay below 2^31 and convert to float exactly as the QDQ
// reference's int64 does; per-channel weights flush the lanes to exact doubles every 127 units
// (254 steps).

struct LinearJob {
  const int16_t* x = nullptr;   // [rows, pcols] x' (16-bit weights: its high parts xh)
  const int16_t* xl = nullptr;  // 16-bit weights: low parts, x' = 256 xh + xl
  int64_t rows = 0, pcols = 0, n_out = 0;
  const uint8_t* w = nullptr;
  int bits = 8;
  int64_t group_bytes = 0;
  int64_t nb = 1, block_units = 0;  // blocks per row; 4-column units per block (blocked only)
  const float* scales = nullptr;    // blocked: [n_out * nb]; per channel: padded [padded rows]
  const int32_t* bsums = nullptr;   // same shapes as scales
  int32_t corr = 0;                 // off - zp
  const uint8_t* meta = nullptr;    // blocked: block_meta layout (pack_block_meta), or null: gather
  const int32_t* xsum = nullptr;    // 4-bit: [rows, nb] sums of x' per block (nibbles carry +8)
  const float* bias_div = nullptr;  // padded [padded rows] bias[c] / scale_x, or null
  bool htp_floor = false;           // per channel: the HTP's accumulator (htp_accumulator)
  float m = 1.0f;
  QParams ey;
  ActType yt = ActType::kU16;
  void* y = nullptr;
};

// Weights of 4-column unit u for the L channels starting at channel c: two steps as int16.
HWY_INLINE void LoadUnit(const LinearJob& j, int64_t c, int64_t u, VI16& w0, VI16& w1) {
  const DI16 d16;
  const int64_t g = c / layout::kGroup, inner = c % layout::kGroup;
  const uint8_t* base = j.w + g * j.group_bytes + inner * 2;
  if (j.bits == 8) {
    const hn::Rebind<int8_t, DI16> d8;
    const int8_t* p = reinterpret_cast<const int8_t*>(base + u * 64);
    w0 = hn::PromoteTo(d16, hn::LoadU(d8, p));
    w1 = hn::PromoteTo(d16, hn::LoadU(d8, p + 32));
  } else {
    // Stored nibbles q + 8 as they are; the kernels subtract 8 * sum(x') per block instead.
    const hn::Rebind<uint8_t, DI16> du8;
    const VI16 v = hn::PromoteTo(d16, hn::LoadU(du8, base + u * 32));
    w0 = hn::And(v, hn::Set(d16, 0x0f));
    w1 = hn::ShiftRight<4>(v);
  }
}

// R rows x 2 vectors of channels [c0, c0 + 2L): accumulates units [u0, u1) into acc.
// c1: channel of the second vector (c0 + L, or c0 again when that group is past the packed data;
// its results are never stored).
template <int R>
HWY_INLINE void AccumulateUnits(const LinearJob& j, int64_t r0, int64_t c0, int64_t c1, int64_t u0, int64_t u1,
                                VecArray<DI32, R * 2>& acc) {
  const DI32 d32;
  const int16_t* xr[R];
  for (int r = 0; r < R; ++r) xr[r] = j.x + (r0 + r) * j.pcols;
  // Decode streams each weight once from memory: prefetch a few hundred bytes ahead in both
  // group streams (the hardware prefetcher alone leaves bandwidth unused).
  const int64_t unit_bytes = j.bits == 8 ? 64 : 32, ahead = 1024;
  const int64_t pf0 = (c0 / layout::kGroup) * j.group_bytes + ahead;
  const int64_t pf1 = (c1 / layout::kGroup) * j.group_bytes + ahead;
  const int64_t pf_end = layout::groups(j.n_out) * j.group_bytes;
  // With one or two rows (decode) each accumulator would chain two dependent products per unit
  // and wait on their latency: the second product of each unit goes to its own accumulators.
  VecArray<DI32, R * 2> second;
  second.fill(hn::Zero(d32));
  for (int64_t u = u0; u < u1; ++u) {
    if (R <= 2) {
      if (pf0 + u * unit_bytes < pf_end) hwy::Prefetch(j.w + pf0 + u * unit_bytes);
      if (pf1 + u * unit_bytes < pf_end) hwy::Prefetch(j.w + pf1 + u * unit_bytes);
    }
    VI16 a0, a1, b0, b1;
    LoadUnit(j, c0, u, a0, a1);
    LoadUnit(j, c1, u, b0, b1);
    for (int r = 0; r < R; ++r) {
      const VI16 xa = BroadcastPair(xr[r] + 4 * u), xb = BroadcastPair(xr[r] + 4 * u + 2);
      acc.set(r * 2, PairDot(d32, acc.get(r * 2), a0, xa));
      acc.set(r * 2 + 1, PairDot(d32, acc.get(r * 2 + 1), b0, xa));
      if constexpr (R <= 2) {  // see `second` above
        second.set(r * 2, PairDot(d32, second.get(r * 2), a1, xb));
        second.set(r * 2 + 1, PairDot(d32, second.get(r * 2 + 1), b1, xb));
      } else {
        acc.set(r * 2, PairDot(d32, acc.get(r * 2), a1, xb));
        acc.set(r * 2 + 1, PairDot(d32, acc.get(r * 2 + 1), b1, xb));
      }
    }
  }
  if constexpr (R <= 2)
    for (int i = 0; i < R * 2; ++i) acc.set(i, hn::Add(acc.get(i), second.get(i)));  // exact integers
}

// t[r][v] (float, channels of vector v) -> bias, requantize, store the valid channels.
template <int R>
HWY_INLINE void FinishTile(const LinearJob& j, int64_t r0, int64_t c0, const float* t) {
  const DF df;
  const DI32 di;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  const VF m = hn::Set(df, j.m);
  const VF lo = hn::Set(df, static_cast<float>(j.ey.qmin - j.ey.zero_point));
  const VF hi = hn::Set(df, static_cast<float>(j.ey.qmax - j.ey.zero_point));
  const VI32 zp = hn::Set(di, j.ey.zero_point);
  for (int v = 0; v < 2; ++v) {
    const int64_t c = c0 + v * L;
    if (c >= j.n_out) break;
    const size_t count = static_cast<size_t>(std::min<int64_t>(L, j.n_out - c));
    const VF b = j.bias_div ? hn::LoadU(df, j.bias_div + c) : hn::Zero(df);
    for (int r = 0; r < R; ++r) {
      VF tv = hn::Load(df, t + (r * 2 + v) * L);
      if (j.bias_div) tv = hn::Add(tv, b);
      StoreCodes(di, RequantizeVec(df, tv, m, lo, hi, zp), j.yt, j.y, (r0 + r) * j.n_out + c, count);
    }
  }
}

// Blocked weights: per block, exact int32 lanes + correction -> float, folded into t in block
// order with the block's scales (gathered: scales are [channel, block]).
template <int R>
HWY_NOINLINE void TileBlocked(const LinearJob& j, int64_t r0, int64_t c0, int64_t c1) {
  const DF df;
  const DI32 di;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  HWY_ALIGN float t[R * 2 * kMaxLanes32];
  for (int64_t i = 0; i < R * 2 * L; ++i) t[i] = 0.0f;
  // Row offsets into [channel, block] arrays; channels past the end read the last channel.
  VecArray<DI32, 2> idx;
  for (int v = 0; v < 2; ++v) {
    HWY_ALIGN int32_t tmp[kMaxLanes32];
    for (int64_t i = 0; i < L; ++i)
      tmp[i] = static_cast<int32_t>(std::min<int64_t>(c0 + v * L + i, j.n_out - 1) * j.nb);
    idx.set(v, hn::Load(di, tmp));
  }
  const VI32 corr = hn::Set(di, j.corr);
  for (int64_t blk = 0; blk < j.nb; ++blk) {
    VecArray<DI32, R * 2> acc;
    acc.fill(hn::Zero(di));
    AccumulateUnits<R>(j, r0, c0, c1, blk * j.block_units, (blk + 1) * j.block_units, acc);
    for (int v = 0; v < 2; ++v) {
      VF sc;
      VI32 bs;
      if (j.meta) {
        const int64_t c = v == 0 ? c0 : c1;
        const uint8_t* entry = j.meta + ((c / layout::kGroup) * j.nb + blk) * layout::kMetaBytes;
        sc = hn::LoadU(df, reinterpret_cast<const float*>(entry) + c % layout::kGroup);
        bs = hn::LoadU(di, reinterpret_cast<const int32_t*>(entry) + layout::kGroup + c % layout::kGroup);
      } else {
        sc = hn::GatherIndex(df, j.scales + blk, idx.get(v));
        bs = hn::GatherIndex(di, j.bsums + blk, idx.get(v));
      }
      const VI32 cv = hn::Mul(bs, corr);
      for (int r = 0; r < R; ++r) {
        float* tp = t + (r * 2 + v) * L;
        const VI32 xoff = hn::Set(di, j.xsum ? -8 * j.xsum[(r0 + r) * j.nb + blk] : 0);
        const VF a = hn::ConvertTo(df, hn::Add(hn::Add(acc.get(r * 2 + v), cv), xoff));
        hn::Store(hn::Add(hn::Load(df, tp), hn::Mul(a, sc)), df, tp);
      }
    }
  }
  FinishTile<R>(j, r0, c0, t);
}

// Per-channel weights: int32 lanes flushed every 64 units (256 columns) into exact doubles.
template <int R>
HWY_NOINLINE void TilePerChannel(const LinearJob& j, int64_t r0, int64_t c0, int64_t c1) {
  const DF df;
  const DI32 di;
  const DD dd;
  const hn::Rebind<int32_t, DD> dih;
  const hn::Rebind<float, DD> dfh;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df)), H = L / 2;
  HWY_ALIGN double sum[R * 2 * kMaxLanes32];
  for (int64_t i = 0; i < R * 2 * L; ++i) sum[i] = 0.0;
  const int64_t units = j.pcols / 4;
  constexpr int64_t kFlush = 127;  // 127 units of at most 2^24 per lane stay below 2^31
  for (int64_t u0 = 0; u0 < units; u0 += kFlush) {
    VecArray<DI32, R * 2> acc;
    acc.fill(hn::Zero(di));
    AccumulateUnits<R>(j, r0, c0, c1, u0, std::min(units, u0 + kFlush), acc);
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < 2; ++v) {
        double* s = sum + (r * 2 + v) * L;
        const VI32 a = acc.get(r * 2 + v);
        hn::Store(hn::Add(hn::Load(dd, s), hn::PromoteTo(dd, hn::LowerHalf(dih, a))), dd, s);
        hn::Store(hn::Add(hn::Load(dd, s + H), hn::PromoteTo(dd, hn::UpperHalf(dih, a))), dd, s + H);
      }
  }
  HWY_ALIGN float t[R * 2 * kMaxLanes32];
  const VD corr = hn::Set(dd, static_cast<double>(j.corr));
  // sum + xoff is the centred sum (q - off) w; cl/ch the zero-point correction (off - zp) sum w
  // (off = 32768 for 16-bit codes, as the HTP's accumulator centres them).
  const auto combine = [&](VD centred, VD correction) {
    return j.htp_floor ? HtpAccumulatorVec(dd, centred, correction) : hn::Add(centred, correction);
  };
  for (int v = 0; v < 2; ++v) {
    const int64_t c = c0 + v * L;
    const VI32 bs = hn::LoadU(di, j.bsums + c);
    const VD cl = hn::Mul(hn::PromoteTo(dd, hn::LowerHalf(dih, bs)), corr);
    const VD ch = hn::Mul(hn::PromoteTo(dd, hn::UpperHalf(dih, bs)), corr);
    const VF sc = hn::LoadU(df, j.scales + c);
    for (int r = 0; r < R; ++r) {
      const double* s = sum + (r * 2 + v) * L;
      float* tp = t + (r * 2 + v) * L;
      const VD xoff = hn::Set(dd, j.xsum ? -8.0 * j.xsum[r0 + r] : 0.0);
      // Exact integer in a double -> float: the same single rounding as float(int64).
      hn::Store(hn::DemoteTo(dfh, combine(hn::Add(hn::Load(dd, s), xoff), cl)), dfh, tp);
      hn::Store(hn::DemoteTo(dfh, combine(hn::Add(hn::Load(dd, s + H), xoff), ch)), dfh, tp + H);
      hn::Store(hn::Mul(hn::Load(df, tp), sc), df, tp);
    }
  }
  FinishTile<R>(j, r0, c0, t);
}

template <int R>
HWY_INLINE void RunTile(const LinearJob& j, int64_t r0, int64_t c0) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(DI32()));
  const int64_t c1 = c0 + L < layout::padded_rows(j.n_out) ? c0 + L : c0;
  if (j.nb > 1 || j.block_units > 0) TileBlocked<R>(j, r0, c0, c1);
  else TilePerChannel<R>(j, r0, c0, c1);
}

// 16-bit weights (16a16w, per channel): x' = 256 xh + xl with xh in [-128, 127] and xl in
// [0, 255], so each pairwise product stays below 2^23 in magnitude; two int32 sums per lane
// (high and low parts) stay exact for 32 units and are flushed into exact doubles.
template <int R>
HWY_NOINLINE void TileWide(const LinearJob& j, int64_t r0, int64_t c0, int64_t c1) {
  const DF df;
  const DI32 di;
  const DI16 d16;
  const DD dd;
  const hn::Rebind<int32_t, DD> dih;
  const hn::Rebind<float, DD> dfh;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df)), H = L / 2;
  HWY_ALIGN double sum[R * 2 * kMaxLanes32];
  for (int64_t i = 0; i < R * 2 * L; ++i) sum[i] = 0.0;
  auto wptr = [&](int64_t c, int64_t u) {
    return reinterpret_cast<const int16_t*>(j.w + (c / layout::kGroup) * j.group_bytes + (c % layout::kGroup) * 4 +
                                            u * 128);
  };
  const int64_t units = j.pcols / 4;
  constexpr int64_t kFlush = 32;
  const VD k256 = hn::Set(dd, 256.0);
  for (int64_t u0 = 0; u0 < units; u0 += kFlush) {
    VecArray<DI32, R * 2> hi, lo;
    hi.fill(hn::Zero(di));
    lo.fill(hn::Zero(di));
    const int64_t u1 = std::min(units, u0 + kFlush);
    for (int64_t u = u0; u < u1; ++u) {
      const int16_t* pa = wptr(c0, u);
      const int16_t* pb = wptr(c1, u);
      const VI16 a0 = hn::LoadU(d16, pa), a1 = hn::LoadU(d16, pa + 32);
      const VI16 b0 = hn::LoadU(d16, pb), b1 = hn::LoadU(d16, pb + 32);
      for (int r = 0; r < R; ++r) {
        const int16_t* xh = j.x + (r0 + r) * j.pcols + 4 * u;
        const int16_t* xl = j.xl + (r0 + r) * j.pcols + 4 * u;
        const VI16 ha = BroadcastPair(xh), hb = BroadcastPair(xh + 2);
        const VI16 la = BroadcastPair(xl), lb = BroadcastPair(xl + 2);
        hi.set(r * 2, PairDot(di, PairDot(di, hi.get(r * 2), a0, ha), a1, hb));
        hi.set(r * 2 + 1, PairDot(di, PairDot(di, hi.get(r * 2 + 1), b0, ha), b1, hb));
        lo.set(r * 2, PairDot(di, PairDot(di, lo.get(r * 2), a0, la), a1, lb));
        lo.set(r * 2 + 1, PairDot(di, PairDot(di, lo.get(r * 2 + 1), b0, la), b1, lb));
      }
    }
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < 2; ++v) {
        double* s = sum + (r * 2 + v) * L;
        const VI32 hv = hi.get(r * 2 + v), lv = lo.get(r * 2 + v);
        const VD h0 = hn::PromoteTo(dd, hn::LowerHalf(dih, hv)), h1 = hn::PromoteTo(dd, hn::UpperHalf(dih, hv));
        const VD l0 = hn::PromoteTo(dd, hn::LowerHalf(dih, lv)), l1 = hn::PromoteTo(dd, hn::UpperHalf(dih, lv));
        hn::Store(hn::Add(hn::Load(dd, s), hn::Add(hn::Mul(h0, k256), l0)), dd, s);
        hn::Store(hn::Add(hn::Load(dd, s + H), hn::Add(hn::Mul(h1, k256), l1)), dd, s + H);
      }
  }
  HWY_ALIGN float t[R * 2 * kMaxLanes32];
  const VD corr = hn::Set(dd, static_cast<double>(j.corr));
  for (int v = 0; v < 2; ++v) {
    const int64_t c = c0 + v * L;
    const VI32 bs = hn::LoadU(di, j.bsums + c);
    const VD cl = hn::Mul(hn::PromoteTo(dd, hn::LowerHalf(dih, bs)), corr);
    const VD ch = hn::Mul(hn::PromoteTo(dd, hn::UpperHalf(dih, bs)), corr);
    const VF sc = hn::LoadU(df, j.scales + c);
    for (int r = 0; r < R; ++r) {
      const double* s = sum + (r * 2 + v) * L;
      float* tp = t + (r * 2 + v) * L;
      hn::Store(hn::DemoteTo(dfh, hn::Add(hn::Load(dd, s), cl)), dfh, tp);
      hn::Store(hn::DemoteTo(dfh, hn::Add(hn::Load(dd, s + H), ch)), dfh, tp + H);
      hn::Store(hn::Mul(hn::Load(df, tp), sc), df, tp);
    }
  }
  FinishTile<R>(j, r0, c0, t);
}

void RunRowsWide(const LinearJob& j, int64_t c0, int64_t r0, int64_t r1) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(DI32()));
  const int64_t c1 = c0 + L < layout::padded_rows(j.n_out) ? c0 + L : c0;
  int64_t r = r0;
  for (; r + 4 <= r1; r += 4) TileWide<4>(j, r, c0, c1);
  switch (r1 - r) {
    case 1: TileWide<1>(j, r, c0, c1); break;
    case 2: TileWide<2>(j, r, c0, c1); break;
    case 3: TileWide<3>(j, r, c0, c1); break;
    default: break;
  }
}

// Rows in blocks of kRowBlock (register tile), then the remainder.
constexpr int kRowBlock = HWY_MAX_BYTES >= 64 ? 8 : 4;

// Rows [r0, r1) of the channel tile at c0.
void RunRows(const LinearJob& j, int64_t c0, int64_t r0, int64_t r1) {
  int64_t r = r0;
  for (; r + kRowBlock <= r1; r += kRowBlock) RunTile<kRowBlock>(j, r, c0);
  switch (r1 - r) {
    case 0: break;
    case 1: RunTile<1>(j, r, c0); break;
    case 2: RunTile<2>(j, r, c0); break;
    case 3: RunTile<3>(j, r, c0); break;
#if HWY_MAX_BYTES >= 64
    case 4: RunTile<4>(j, r, c0); break;
    case 5: RunTile<5>(j, r, c0); break;
    case 6: RunTile<6>(j, r, c0); break;
    case 7: RunTile<7>(j, r, c0); break;
#endif
    default: break;
  }
}

template <typename T>
T* scratch(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

void LinearQImpl(const void* x, ActType xt, int64_t rows, const QParams& ex, const PackedLinear& w, const float* bias,
                 const QParams& ey, ActType yt, void* y) {
  const DI32 d32;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d32)), tile = 2 * L;
  if (L > layout::kGroup) {  // SVE wider than 512 bits: one vector would span two packed groups
    scalar::linear_q(x, xt, rows, ex, w, bias, ey, yt, y);
    return;
  }
  const int64_t cols = w.cols, pcols = layout::padded_cols(cols), n_out = w.rows;
  const int64_t prow = (n_out + tile - 1) / tile * tile;
  thread_local std::vector<int16_t> xbuf, xlbuf;
  thread_local std::vector<float> fbuf;
  thread_local std::vector<int32_t> ibuf, xsumbuf;
  thread_local std::vector<uint8_t> metabuf;
  int16_t* xs = scratch(xbuf, static_cast<size_t>(rows * pcols));
  const int32_t off = xt == ActType::kU16 ? 32768 : ex.zero_point;
  for (int64_t r = 0; r < rows; ++r) {
    int16_t* dst = xs + r * pcols;
    if (xt == ActType::kU16) {
      const uint16_t* src = static_cast<const uint16_t*>(x) + r * cols;
      for (int64_t k = 0; k < cols; ++k) dst[k] = static_cast<int16_t>(src[k] ^ 0x8000u);  // q - 32768
    } else {
      const uint8_t* src = static_cast<const uint8_t*>(x) + r * cols;
      for (int64_t k = 0; k < cols; ++k) dst[k] = static_cast<int16_t>(src[k] - off);
    }
    for (int64_t k = cols; k < pcols; ++k) dst[k] = 0;
  }
  LinearJob j;
  j.x = xs;
  if (w.bits == 16) {  // split x' = 256 xh + xl (xh stays in xs)
    int16_t* xl = scratch(xlbuf, static_cast<size_t>(rows * pcols));
    for (int64_t i = 0; i < rows * pcols; ++i) {
      xl[i] = static_cast<int16_t>(xs[i] & 0xff);
      xs[i] = static_cast<int16_t>((xs[i] - xl[i]) / 256);
    }
    j.xl = xl;
  }
  j.rows = rows;
  j.pcols = pcols;
  j.n_out = n_out;
  j.w = w.data;
  j.bits = w.bits;
  j.group_bytes = layout::group_bytes(cols, w.bits);
  j.nb = w.blocks();
  j.block_units = w.block_size > 0 ? w.block_size / 4 : 0;
  j.corr = off - ex.zero_point;
  j.htp_floor = w.block_size == 0 && htp_floors_accumulator(ex.qmax, w.bits);
  j.m = ex.scale / ey.scale;
  j.ey = ey;
  j.yt = yt;
  j.y = y;
  // Padded per-channel arrays, so whole vectors can be loaded at the last tile.
  float* fb = scratch(fbuf, static_cast<size_t>(2 * prow));
  if (bias) {
    for (int64_t c = 0; c < prow; ++c) fb[c] = c < n_out ? bias[c] / ex.scale : 0.0f;
    j.bias_div = fb;
  }
  if (w.bits == 4) {  // per row and block: sum of x'
    int32_t* xsum = scratch(xsumbuf, static_cast<size_t>(rows * j.nb));
    const int64_t width = w.block_size > 0 ? w.block_size : pcols;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t b = 0; b < j.nb; ++b) {
        int32_t s = 0;
        for (int64_t k = b * width; k < (b + 1) * width; ++k) s += xs[r * pcols + k];
        xsum[r * j.nb + b] = s;
      }
    j.xsum = xsum;
  }
  if (w.block_size > 0) {
    j.scales = w.scales;
    j.bsums = w.block_sums;
    j.meta = w.block_meta;
    if (!j.meta && rows > 1) {  // regroup once per call; every row block then loads, not gathers
      uint8_t* meta = scratch(metabuf, block_meta_bytes(n_out, cols, w.block_size));
      pack_block_meta(w.scales, w.block_sums, n_out, cols, w.block_size, meta);
      j.meta = meta;
    }
  } else if (prow == n_out) {  // whole tiles: the arrays as they are
    j.scales = w.scales;
    j.bsums = w.block_sums;
  } else {
    int32_t* ib = scratch(ibuf, static_cast<size_t>(prow));
    for (int64_t c = 0; c < prow; ++c) {
      fb[prow + c] = c < n_out ? w.scales[c] : 0.0f;
      ib[c] = c < n_out ? w.block_sums[c] : 0;
    }
    j.scales = fb + prow;
    j.bsums = ib;
  }
  // Work items: a channel tile and a chunk of rows (consecutive items share the tile's weights),
  // so a layer with few channel tiles still splits evenly over the threads.
  const int64_t tiles = prow / tile;
  const int64_t row_chunk = 4 * kRowBlock, row_chunks = (rows + row_chunk - 1) / row_chunk;
  ThreadPool::global().parallel_for(tiles * row_chunks, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t t = i / row_chunks, r0 = (i % row_chunks) * row_chunk, r1 = std::min(rows, r0 + row_chunk);
      if (j.bits == 16) RunRowsWide(j, t * tile, r0, r1);
      else RunRows(j, t * tile, r0, r1);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// linear_f16: float32 dot products of x with f16 weights (converted per channel row), summed
// in vector lanes; plus the float16-rounded bias.

HWY_INLINE float DotF32(const float* a, const float* b, int64_t n) {
  const DF df;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  VF s0 = hn::Zero(df), s1 = hn::Zero(df);
  int64_t k = 0;
  for (; k + 2 * L <= n; k += 2 * L) {
    s0 = hn::MulAdd(hn::LoadU(df, a + k), hn::LoadU(df, b + k), s0);
    s1 = hn::MulAdd(hn::LoadU(df, a + k + L), hn::LoadU(df, b + k + L), s1);
  }
  for (; k + L <= n; k += L) s0 = hn::MulAdd(hn::LoadU(df, a + k), hn::LoadU(df, b + k), s0);
  float s = hn::GetLane(hn::SumOfLanes(df, hn::Add(s0, s1)));
  for (; k < n; ++k) s += a[k] * b[k];
  return s;
}

void LinearF16Impl(const float* x, int64_t rows, const uint16_t* w, int64_t out_features, int64_t in_features,
                   const float* bias, float* y) {
  ThreadPool::global().parallel_for(
      out_features,
      [&](int64_t begin, int64_t end) {
        std::vector<float> wr(static_cast<size_t>(in_features));
        for (int64_t c = begin; c < end; ++c) {
          const uint16_t* src = w + c * in_features;
          int64_t k = 0;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
          const DF df;
          const hn::Rebind<hwy::float16_t, DF> dh;
          const int64_t L = static_cast<int64_t>(hn::Lanes(df));
          for (; k + L <= in_features; k += L)
            hn::StoreU(hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(src + k))), df,
                       wr.data() + k);
#endif
          for (; k < in_features; ++k) wr[static_cast<size_t>(k)] = f16_to_f32(src[k]);
          const float b = bias ? f16_to_f32(f32_to_f16(bias[c])) : 0.0f;
          for (int64_t r = 0; r < rows; ++r) y[r * out_features + c] = DotF32(x + r * in_features, wr.data(), in_features) + b;
        }
      },
      8);
}

// ---------------------------------------------------------------------------------------------
// linear_f32: dot8_f32 (float_arith.h) for a tile of 4 rows x 2 channels at a time. Its eight
// running sums live in lanes: one pass over K with 8-lane vectors, or two passes with 4-lane ones
// (lanes 0-3 take the elements k = 0..3 mod 8, the second pass 4..7), products rounded before
// they are added, then the scalar fold and tail: the scalar build's bits on every target.

using DF8 = hn::CappedTag<float, 8>;

// sums[r][c][0..8): the eight running sums of rows x[0..3] with channels w0, w1 over the whole
// groups of 8 of n columns.
HWY_INLINE void Dot8Tile(const float* const x[4], const float* w0, const float* w1, int64_t n8, float sums[4][2][8]) {
  const DF8 d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t off = 0; off < 8; off += L) {
    auto a00 = hn::Zero(d), a01 = hn::Zero(d), a10 = hn::Zero(d), a11 = hn::Zero(d);
    auto a20 = hn::Zero(d), a21 = hn::Zero(d), a30 = hn::Zero(d), a31 = hn::Zero(d);
    for (int64_t k = off; k < n8; k += 8) {
      const auto v0 = hn::LoadU(d, w0 + k), v1 = hn::LoadU(d, w1 + k);
      const auto x0 = hn::LoadU(d, x[0] + k), x1 = hn::LoadU(d, x[1] + k);
      a00 = hn::Add(a00, hn::Mul(x0, v0));
      a01 = hn::Add(a01, hn::Mul(x0, v1));
      a10 = hn::Add(a10, hn::Mul(x1, v0));
      a11 = hn::Add(a11, hn::Mul(x1, v1));
      const auto x2 = hn::LoadU(d, x[2] + k), x3 = hn::LoadU(d, x[3] + k);
      a20 = hn::Add(a20, hn::Mul(x2, v0));
      a21 = hn::Add(a21, hn::Mul(x2, v1));
      a30 = hn::Add(a30, hn::Mul(x3, v0));
      a31 = hn::Add(a31, hn::Mul(x3, v1));
    }
    hn::StoreU(a00, d, sums[0][0] + off);
    hn::StoreU(a01, d, sums[0][1] + off);
    hn::StoreU(a10, d, sums[1][0] + off);
    hn::StoreU(a11, d, sums[1][1] + off);
    hn::StoreU(a20, d, sums[2][0] + off);
    hn::StoreU(a21, d, sums[2][1] + off);
    hn::StoreU(a30, d, sums[3][0] + off);
    hn::StoreU(a31, d, sums[3][1] + off);
  }
}

void LinearF32Impl(const float* x, int64_t rows, const float* w, int64_t out_features, int64_t in_features,
                   const float* bias, float* y) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(DF8()));
  if (8 % L != 0 || L < 4) {  // lanes cannot hold the eight sums in whole passes
    scalar::linear_f32(x, rows, w, out_features, in_features, bias, y);
    return;
  }
  const int64_t n8 = in_features / 8 * 8;
  constexpr int64_t kBlock = 16;  // channels per work item: their weight rows stay in cache over all rows
  const int64_t blocks = (out_features + kBlock - 1) / kBlock;
  ThreadPool::global().parallel_for(blocks, [&](int64_t b0, int64_t b1) {
    float sums[4][2][8];
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t c0 = b * kBlock, c1 = std::min(out_features, c0 + kBlock);
      for (int64_t r0 = 0; r0 < rows; r0 += 4) {
        const int64_t nr = std::min<int64_t>(4, rows - r0);
        const float* xr[4];
        for (int64_t i = 0; i < 4; ++i) xr[i] = x + (r0 + std::min(i, nr - 1)) * in_features;
        for (int64_t c = c0; c < c1; c += 2) {
          const int64_t nc = std::min<int64_t>(2, c1 - c);
          const float* wc[2] = {w + c * in_features, w + (c + nc - 1) * in_features};
          Dot8Tile(xr, wc[0], wc[1], n8, sums);
          for (int64_t i = 0; i < nr; ++i)
            for (int64_t j = 0; j < nc; ++j) {
              float s = fold_dot8(sums[i][j]);
              for (int64_t k = n8; k < in_features; ++k) s += xr[i][k] * wc[j][k];
              y[(r0 + i) * out_features + c + j] = s + (bias ? bias[c + j] : 0.0f);
            }
        }
      }
    }
  });
}

#endif  // HWY_TARGET == HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace genai::kernels::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace genai::kernels::simd {
GENAI_KERNELS_LINEAR(GENAI_KERNEL_DISPATCH)
}  // namespace genai::kernels::simd
#endif  // HWY_ONCE

#endif  // !GENAI_KERNELS_SCALAR_ONLY
