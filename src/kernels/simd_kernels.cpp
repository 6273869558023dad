// The vectorised build of every kernel (Highway, dynamic dispatch). This file is compiled once
// per target by hwy/foreach_target.h; HWY_DYNAMIC_DISPATCH picks the best one the CPU has. The
// results are the scalar build's (exactly for the integer kernels, rope, add, mul, matmul_f32,
// quantize, dequantize and round_to_f16; within float rounding for rms_norm, softmax, silu and
// linear_f16, whose sums are reassociated and whose exp is a polynomial).
#include "kernels/simd_kernels.h"

#include "kernels/scalar_kernels.h"

#if defined(GENAI_KERNELS_SCALAR_ONLY)

namespace genai::kernels::simd {
bool available() { return false; }
std::string_view target_name() { return "scalar (GENAI_SCALAR_ONLY)"; }
void quantize(const float* x, int64_t n, const QParams& p, ActType t, void* q) { scalar::quantize(x, n, p, t, q); }
void dequantize(const void* q, ActType t, int64_t n, const QParams& p, float* x) { scalar::dequantize(q, t, n, p, x); }
void round_to_f16(float* x, int64_t n) { scalar::round_to_f16(x, n); }
void linear_q(const void* x, ActType xt, int64_t rows, const QParams& ex, const PackedLinear& w, const float* bias,
              const QParams& ey, ActType yt, void* y) {
  scalar::linear_q(x, xt, rows, ex, w, bias, ey, yt, y);
}
void linear_f16(const float* x, int64_t rows, const uint16_t* w, int64_t o, int64_t i, const float* bias, float* y) {
  scalar::linear_f16(x, rows, w, o, i, bias, y);
}
void matmul_q(const void* a, ActType at, const QParams& ea, const void* b, ActType bt, const QParams& eb, int64_t M,
              int64_t K, int64_t N, const std::vector<MatmulBatch>& batches, const QParams& ey, ActType yt, void* y) {
  scalar::matmul_q(a, at, ea, b, bt, eb, M, K, N, batches, ey, yt, y);
}
void matmul_f32(const float* a, const float* b, int64_t M, int64_t K, int64_t N, const std::vector<MatmulBatch>& batches,
                float* y) {
  scalar::matmul_f32(a, b, M, K, N, batches, y);
}
void rms_norm(const float* x, int64_t rows, int64_t dim, const float* w, float eps, float* y) {
  scalar::rms_norm(x, rows, dim, w, eps, y);
}
void softmax(float* x, int64_t rows, int64_t n) { scalar::softmax(x, rows, n); }
void silu(float* x, int64_t n) { scalar::silu(x, n); }
void rope(const float* x, int64_t h, int64_t s, int64_t d, const float* c, const float* sn, float* y) {
  scalar::rope(x, h, s, d, c, sn, y);
}
void add(const float* a, const float* b, int64_t n, float* y) { scalar::add(a, b, n, y); }
void mul(const float* a, const float* b, int64_t n, float* y) { scalar::mul(a, b, n, y); }
}  // namespace genai::kernels::simd

#else  // the Highway build

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/packed_layout.h"
#include "kernels/requantize.h"

// AVX3_DL (AVX-512 VNNI, Ice Lake / Zen 4 and later) is opt-in in Highway 1.0.3. Scalable
// vector targets are left out: the kernels keep small arrays of vectors, which sizeless SVE/RVV
// types do not allow; Arm builds use NEON.
#ifndef HWY_WANT_AVX3_DL
#define HWY_WANT_AVX3_DL
#endif
#ifndef HWY_DISABLED_TARGETS
#define HWY_DISABLED_TARGETS (HWY_SVE | HWY_SVE2 | HWY_SVE_256 | HWY_SVE2_128 | HWY_RVV)
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd_kernels.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace genai::kernels::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

int64_t TargetId() { return HWY_TARGET; }

#if HWY_TARGET == HWY_SCALAR
// One-lane vectors cannot hold the pairwise layouts below: this target defers to the scalar
// build (available() reports false when it is the best one).
void QuantizeImpl(const float* x, int64_t n, const QParams& p, ActType t, void* q) { scalar::quantize(x, n, p, t, q); }
void DequantizeImpl(const void* q, ActType t, int64_t n, const QParams& p, float* x) {
  scalar::dequantize(q, t, n, p, x);
}
void RoundToF16Impl(float* x, int64_t n) { scalar::round_to_f16(x, n); }
void LinearQImpl(const void* x, ActType xt, int64_t rows, const QParams& ex, const PackedLinear& w, const float* bias,
                 const QParams& ey, ActType yt, void* y) {
  scalar::linear_q(x, xt, rows, ex, w, bias, ey, yt, y);
}
void LinearF16Impl(const float* x, int64_t rows, const uint16_t* w, int64_t o, int64_t i, const float* bias, float* y) {
  scalar::linear_f16(x, rows, w, o, i, bias, y);
}
void MatmulQImpl(const void* a, ActType at, const QParams& ea, const void* b, ActType bt, const QParams& eb, int64_t M,
                 int64_t K, int64_t N, const std::vector<MatmulBatch>& batches, const QParams& ey, ActType yt, void* y) {
  scalar::matmul_q(a, at, ea, b, bt, eb, M, K, N, batches, ey, yt, y);
}
void MatmulF32Impl(const float* a, const float* b, int64_t M, int64_t K, int64_t N,
                   const std::vector<MatmulBatch>& batches, float* y) {
  scalar::matmul_f32(a, b, M, K, N, batches, y);
}
void RmsNormImpl(const float* x, int64_t rows, int64_t dim, const float* w, float eps, float* y) {
  scalar::rms_norm(x, rows, dim, w, eps, y);
}
void SoftmaxImpl(float* x, int64_t rows, int64_t n) { scalar::softmax(x, rows, n); }
void SiluImpl(float* x, int64_t n) { scalar::silu(x, n); }
void RopeImpl(const float* x, int64_t h, int64_t s, int64_t d, const float* c, const float* sn, float* y) {
  scalar::rope(x, h, s, d, c, sn, y);
}
void AddImpl(const float* a, const float* b, int64_t n, float* y) { scalar::add(a, b, n, y); }
void MulImpl(const float* a, const float* b, int64_t n, float* y) { scalar::mul(a, b, n, y); }

#else

using DF = hn::ScalableTag<float>;
using DI32 = hn::ScalableTag<int32_t>;
using DI16 = hn::Repartition<int16_t, DI32>;
using DD = hn::Repartition<double, DI32>;  // half as many lanes
using VF = hn::Vec<DF>;
using VI32 = hn::Vec<DI32>;
using VI16 = hn::Vec<DI16>;
using VD = hn::Vec<DD>;

constexpr size_t kMaxLanes32 = HWY_MAX_BYTES / 4;

// ---------------------------------------------------------------------------------------------
// Requantization shared by linear_q and matmul_q: q = clamp(rne(t * m), lo, hi) + zp, NaN -> zp.

struct Requant {
  VF m, lo, hi;
  VI32 zp;
  Requant(DF df, DI32 di, float mult, const QParams& ey)
      : m(hn::Set(df, mult)),
        lo(hn::Set(df, static_cast<float>(ey.qmin - ey.zero_point))),
        hi(hn::Set(df, static_cast<float>(ey.qmax - ey.zero_point))),
        zp(hn::Set(di, ey.zero_point)) {}
};

template <class D>
HWY_INLINE hn::Vec<hn::RebindToSigned<D>> RequantizeVec(D d, hn::Vec<D> t, const hn::Vec<D>& m, const hn::Vec<D>& lo,
                                                         const hn::Vec<D>& hi, const hn::Vec<hn::RebindToSigned<D>>& zp) {
  const hn::RebindToSigned<D> di;
  const auto r = hn::Round(hn::Mul(t, m));
  const auto c = hn::IfThenElseZero(hn::Eq(r, r), hn::Min(hn::Max(r, lo), hi));
  (void)d;
  return hn::Add(hn::ConvertTo(di, c), zp);
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
// quantize / dequantize / round_to_f16

void QuantizeImpl(const float* x, int64_t n, const QParams& p, ActType t, void* q) {
  const DF df;
  const DI32 di;
  const VF scale = hn::Set(df, p.scale);
  const VF lo = hn::Set(df, static_cast<float>(p.qmin - p.zero_point));
  const VF hi = hn::Set(df, static_cast<float>(p.qmax - p.zero_point));
  const VI32 zp = hn::Set(di, p.zero_point);
  const VF one = hn::Set(df, 1.0f);
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    // rne(x / scale): a true division, as quant::quantize_value does.
    StoreCodes(di, RequantizeVec(df, hn::Div(hn::LoadU(df, x + i), scale), one, lo, hi, zp), t, q, i,
               static_cast<size_t>(L));
  }
  if (i < n) scalar::quantize(x + i, n - i, p, t, t == ActType::kU8 ? static_cast<void*>(static_cast<uint8_t*>(q) + i)
                                                                     : static_cast<void*>(static_cast<uint16_t*>(q) + i));
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

// ---------------------------------------------------------------------------------------------
// Integer linear (see packed_layout.h for the weight layout).
//
// Activations enter as int16 x' = q - off (off = 32768 for u16 codes, zp for u8), so
// (q - zp) = x' + (off - zp) and sum (q - zp) w = sum x' w + (off - zp) * block_sum(w).
// Lane i of an int32 accumulator holds channel i; each step adds x'[2s] w[i][2s] +
// x'[2s+1] w[i][2s+1] (vpdpwssd / vpmaddwd). |x'| <= 32768, |w| <= 128: one step adds at most
// 2^23 to a lane, so lanes stay exact for 255 steps. Blocks of <= 128 columns (64 steps, plus a
// correction <= 2^15 * 128 * 128) stay below 2^31 and convert to float exactly as the QDQ
// reference's int64 does; per-channel weights flush the lanes to exact doubles every 64 steps.

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
                                VI32 (&acc)[R][2]) {
  const DI32 d32;
  const int16_t* xr[R];
  for (int r = 0; r < R; ++r) xr[r] = j.x + (r0 + r) * j.pcols;
  // Decode streams each weight once from memory: prefetch a few hundred bytes ahead in both
  // group streams (the hardware prefetcher alone leaves bandwidth unused).
  const int64_t unit_bytes = j.bits == 8 ? 64 : 32, ahead = 1024;
  const int64_t pf0 = (c0 / layout::kGroup) * j.group_bytes + ahead;
  const int64_t pf1 = (c1 / layout::kGroup) * j.group_bytes + ahead;
  const int64_t pf_end = layout::groups(j.n_out) * j.group_bytes;
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
      acc[r][0] = PairDot(d32, acc[r][0], a0, xa);
      acc[r][1] = PairDot(d32, acc[r][1], b0, xa);
      acc[r][0] = PairDot(d32, acc[r][0], a1, xb);
      acc[r][1] = PairDot(d32, acc[r][1], b1, xb);
    }
  }
}

// t[r][v] (float, channels of vector v) -> bias, requantize, store the valid channels.
template <int R>
HWY_INLINE void FinishTile(const LinearJob& j, int64_t r0, int64_t c0, const float* t) {
  const DF df;
  const DI32 di;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  const Requant rq(df, di, j.m, j.ey);
  for (int v = 0; v < 2; ++v) {
    const int64_t c = c0 + v * L;
    if (c >= j.n_out) break;
    const size_t count = static_cast<size_t>(std::min<int64_t>(L, j.n_out - c));
    const VF b = j.bias_div ? hn::LoadU(df, j.bias_div + c) : hn::Zero(df);
    for (int r = 0; r < R; ++r) {
      VF tv = hn::Load(df, t + (r * 2 + v) * L);
      if (j.bias_div) tv = hn::Add(tv, b);
      StoreCodes(di, RequantizeVec(df, tv, rq.m, rq.lo, rq.hi, rq.zp), j.yt, j.y, (r0 + r) * j.n_out + c, count);
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
  VI32 idx[2];
  for (int v = 0; v < 2; ++v) {
    HWY_ALIGN int32_t tmp[kMaxLanes32];
    for (int64_t i = 0; i < L; ++i)
      tmp[i] = static_cast<int32_t>(std::min<int64_t>(c0 + v * L + i, j.n_out - 1) * j.nb);
    idx[v] = hn::Load(di, tmp);
  }
  const VI32 corr = hn::Set(di, j.corr);
  for (int64_t blk = 0; blk < j.nb; ++blk) {
    VI32 acc[R][2];
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = hn::Zero(di);
    AccumulateUnits<R>(j, r0, c0, c1, blk * j.block_units, (blk + 1) * j.block_units, acc);
    VI32 xoff[R];
    for (int r = 0; r < R; ++r) xoff[r] = hn::Set(di, j.xsum ? -8 * j.xsum[(r0 + r) * j.nb + blk] : 0);
    for (int v = 0; v < 2; ++v) {
      VF sc;
      VI32 bs;
      if (j.meta) {
        const int64_t c = v == 0 ? c0 : c1;
        const uint8_t* entry = j.meta + ((c / layout::kGroup) * j.nb + blk) * layout::kMetaBytes;
        sc = hn::LoadU(df, reinterpret_cast<const float*>(entry) + c % layout::kGroup);
        bs = hn::LoadU(di, reinterpret_cast<const int32_t*>(entry) + layout::kGroup + c % layout::kGroup);
      } else {
        sc = hn::GatherIndex(df, j.scales + blk, idx[v]);
        bs = hn::GatherIndex(di, j.bsums + blk, idx[v]);
      }
      const VI32 cv = hn::Mul(bs, corr);
      for (int r = 0; r < R; ++r) {
        float* tp = t + (r * 2 + v) * L;
        const VF a = hn::ConvertTo(df, hn::Add(hn::Add(acc[r][v], cv), xoff[r]));
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
  constexpr int64_t kFlush = 64;
  for (int64_t u0 = 0; u0 < units; u0 += kFlush) {
    VI32 acc[R][2];
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = hn::Zero(di);
    AccumulateUnits<R>(j, r0, c0, c1, u0, std::min(units, u0 + kFlush), acc);
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < 2; ++v) {
        double* s = sum + (r * 2 + v) * L;
        hn::Store(hn::Add(hn::Load(dd, s), hn::PromoteTo(dd, hn::LowerHalf(dih, acc[r][v]))), dd, s);
        hn::Store(hn::Add(hn::Load(dd, s + H), hn::PromoteTo(dd, hn::UpperHalf(dih, acc[r][v]))), dd, s + H);
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
      const VD xoff = hn::Set(dd, j.xsum ? -8.0 * j.xsum[r0 + r] : 0.0);
      // Exact integer in a double -> float: the same single rounding as float(int64).
      hn::Store(hn::DemoteTo(dfh, hn::Add(hn::Add(hn::Load(dd, s), cl), xoff)), dfh, tp);
      hn::Store(hn::DemoteTo(dfh, hn::Add(hn::Add(hn::Load(dd, s + H), ch), xoff)), dfh, tp + H);
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
    VI32 hi[R][2], lo[R][2];
    for (int r = 0; r < R; ++r) hi[r][0] = hi[r][1] = lo[r][0] = lo[r][1] = hn::Zero(di);
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
        hi[r][0] = PairDot(di, PairDot(di, hi[r][0], a0, ha), a1, hb);
        hi[r][1] = PairDot(di, PairDot(di, hi[r][1], b0, ha), b1, hb);
        lo[r][0] = PairDot(di, PairDot(di, lo[r][0], a0, la), a1, lb);
        lo[r][1] = PairDot(di, PairDot(di, lo[r][1], b0, la), b1, lb);
      }
    }
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < 2; ++v) {
        double* s = sum + (r * 2 + v) * L;
        const VD h0 = hn::PromoteTo(dd, hn::LowerHalf(dih, hi[r][v])), h1 = hn::PromoteTo(dd, hn::UpperHalf(dih, hi[r][v]));
        const VD l0 = hn::PromoteTo(dd, hn::LowerHalf(dih, lo[r][v])), l1 = hn::PromoteTo(dd, hn::UpperHalf(dih, lo[r][v]));
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

void RunRowsWide(const LinearJob& j, int64_t c0) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(DI32()));
  const int64_t c1 = c0 + L < layout::padded_rows(j.n_out) ? c0 + L : c0;
  int64_t r = 0;
  for (; r + 4 <= j.rows; r += 4) TileWide<4>(j, r, c0, c1);
  switch (j.rows - r) {
    case 1: TileWide<1>(j, r, c0, c1); break;
    case 2: TileWide<2>(j, r, c0, c1); break;
    case 3: TileWide<3>(j, r, c0, c1); break;
    default: break;
  }
}

// Rows in blocks of kRowBlock (register tile), then the remainder.
constexpr int kRowBlock = HWY_MAX_BYTES >= 64 ? 8 : 4;

void RunRows(const LinearJob& j, int64_t c0) {
  int64_t r = 0;
  for (; r + kRowBlock <= j.rows; r += kRowBlock) RunTile<kRowBlock>(j, r, c0);
  switch (j.rows - r) {
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
  } else {
    int32_t* ib = scratch(ibuf, static_cast<size_t>(prow));
    for (int64_t c = 0; c < prow; ++c) {
      fb[prow + c] = c < n_out ? w.scales[c] : 0.0f;
      ib[c] = c < n_out ? w.block_sums[c] : 0;
    }
    j.scales = fb + prow;
    j.bsums = ib;
  }
  const int64_t tiles = prow / tile;
  ThreadPool::global().parallel_for(tiles, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      if (j.bits == 16) RunRowsWide(j, t * tile);
      else RunRows(j, t * tile);
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
// matmul_q: (qa - zp_a) * (qb - zp_b) summed in doubles. Every product is below 2^32 and K
// products sum below 2^53, so the double sums are the exact integers the QDQ reference
// accumulates in int64 (any order), and converting them to float rounds once, as float(int64).

template <class DDh>
HWY_INLINE hn::Vec<DDh> LoadCodesAsDouble(DDh dd, const void* base, ActType t, int64_t index) {
  const hn::Rebind<int32_t, DDh> di;
  if (t == ActType::kU16) {
    const hn::Rebind<uint16_t, DDh> du;
    return hn::PromoteTo(dd, hn::PromoteTo(di, hn::LoadU(du, static_cast<const uint16_t*>(base) + index)));
  }
  const hn::Rebind<uint8_t, DDh> du;
  return hn::PromoteTo(dd, hn::PromoteTo(di, hn::LoadU(du, static_cast<const uint8_t*>(base) + index)));
}

int32_t CodeAt(const void* p, ActType t, int64_t i) {
  return t == ActType::kU8 ? static_cast<const uint8_t*>(p)[i] : static_cast<const uint16_t*>(p)[i];
}

struct MatmulJob {
  const void* a;
  ActType at;
  const void* b;
  ActType bt;
  int64_t M, K, N;
  double zpa, zpb;
  float m;
  QParams ey;
  ActType yt;
  void* y;
};

// One output row: where its A row starts and where its Y row starts (elements).
struct RowRef {
  int64_t a = 0, y = 0;
};

// R rows that share one B matrix (rows of one batch entry, or the heads of one GQA group) x
// columns [j0, j0 + 4 * DD lanes): every converted B vector is used R times.
template <int R>
HWY_INLINE void MatmulBlock(const MatmulJob& job, int64_t b_offset, const RowRef* rows, int64_t j0) {
  const DD dd;
  const int64_t L = static_cast<int64_t>(hn::Lanes(dd));
  VD acc[R][4];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < 4; ++v) acc[r][v] = hn::Zero(dd);
  // sum_p (a - za)(b - zb) = sum_p (a - za) b - zb sum_p (a - za): raw codes of b in the loop.
  double asum[R] = {};
  for (int64_t p = 0; p < job.K; ++p) {
    const int64_t bi = b_offset + p * job.N + j0;
    VD bv[4];
    for (int v = 0; v < 4; ++v) bv[v] = LoadCodesAsDouble(dd, job.b, job.bt, bi + v * L);
    for (int r = 0; r < R; ++r) {
      const double a = static_cast<double>(CodeAt(job.a, job.at, rows[r].a + p)) - job.zpa;
      asum[r] += a;
      const VD av = hn::Set(dd, a);
      for (int v = 0; v < 4; ++v) acc[r][v] = hn::MulAdd(av, bv[v], acc[r][v]);  // exact either way
    }
  }
  const hn::Rebind<float, DD> dfh;
  const hn::Rebind<int32_t, DD> dih;
  const auto m = hn::Set(dfh, job.m);
  const auto lo = hn::Set(dfh, static_cast<float>(job.ey.qmin - job.ey.zero_point));
  const auto hi = hn::Set(dfh, static_cast<float>(job.ey.qmax - job.ey.zero_point));
  const auto zp = hn::Set(dih, job.ey.zero_point);
  for (int r = 0; r < R; ++r) {
    const VD corr = hn::Set(dd, job.zpb * asum[r]);
    for (int v = 0; v < 4; ++v) {
      const auto q = RequantizeVec(dfh, hn::DemoteTo(dfh, hn::Sub(acc[r][v], corr)), m, lo, hi, zp);
      StoreCodes(dih, q, job.yt, job.y, rows[r].y + j0 + v * L, static_cast<size_t>(L));
    }
  }
}

// Columns [j0, j1) of some rows one at a time (tails), exact int64 as the reference.
void MatmulScalarPart(const MatmulJob& job, int64_t b_offset, const RowRef* rows, int64_t n_rows, int64_t j0,
                      int64_t j1) {
  const float lo = static_cast<float>(job.ey.qmin - job.ey.zero_point), hi = static_cast<float>(job.ey.qmax - job.ey.zero_point);
  const int32_t za = static_cast<int32_t>(job.zpa), zb = static_cast<int32_t>(job.zpb);
  for (int64_t r = 0; r < n_rows; ++r)
    for (int64_t jj = j0; jj < j1; ++jj) {
      int64_t acc = 0;
      for (int64_t p = 0; p < job.K; ++p)
        acc += static_cast<int64_t>(CodeAt(job.a, job.at, rows[r].a + p) - za) *
               (CodeAt(job.b, job.bt, b_offset + p * job.N + jj) - zb);
      const int32_t v = static_cast<int32_t>(requantize(static_cast<float>(acc) * job.m, lo, hi)) + job.ey.zero_point;
      const int64_t o = rows[r].y + jj;
      if (job.yt == ActType::kU8) static_cast<uint8_t*>(job.y)[o] = static_cast<uint8_t>(v);
      else static_cast<uint16_t*>(job.y)[o] = static_cast<uint16_t>(v);
    }
}

void MatmulQImpl(const void* a, ActType at, const QParams& ea, const void* b, ActType bt, const QParams& eb, int64_t M,
                 int64_t K, int64_t N, const std::vector<MatmulBatch>& batches, const QParams& ey, ActType yt, void* y) {
  const DD dd;
  const int64_t L = static_cast<int64_t>(hn::Lanes(dd)), jw = 4 * L;
  const MatmulJob job{a, at, b, bt, M, K, N, static_cast<double>(ea.zero_point), static_cast<double>(eb.zero_point),
                      (ea.scale * eb.scale) / ey.scale, ey, yt, y};
  // Rows grouped by the B matrix they read (GQA heads share one), in chunks of up to 4.
  struct Chunk {
    int64_t b_offset;
    size_t first, count;  // into rows
  };
  std::vector<RowRef> rows;
  std::vector<Chunk> chunks;
  {
    std::vector<size_t> order(batches.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t z) { return batches[x].b_offset < batches[z].b_offset; });
    for (size_t k = 0; k < order.size();) {
      const int64_t boff = batches[order[k]].b_offset;
      const size_t first = rows.size();
      for (; k < order.size() && batches[order[k]].b_offset == boff; ++k)
        for (int64_t i = 0; i < M; ++i) rows.push_back({batches[order[k]].a_offset + i * K, batches[order[k]].y_offset + i * N});
      for (size_t r = first; r < rows.size(); r += 4) chunks.push_back({boff, r, std::min<size_t>(4, rows.size() - r)});
    }
  }
  // Work items: (row chunk, column span), so a single decode row still splits over threads.
  const int64_t span = std::max<int64_t>(jw, (256 / jw) * jw);
  const int64_t spans = (N + span - 1) / span;
  const int64_t items = static_cast<int64_t>(chunks.size()) * spans;
  ThreadPool::global().parallel_for(items, [&](int64_t begin, int64_t end) {
    for (int64_t it = begin; it < end; ++it) {
      const Chunk& c = chunks[static_cast<size_t>(it / spans)];
      const RowRef* rr = rows.data() + c.first;
      const int64_t j0 = (it % spans) * span, j1 = std::min(N, j0 + span);
      int64_t j = j0;
      for (; j + jw <= j1; j += jw) {
        switch (c.count) {
          case 4: MatmulBlock<4>(job, c.b_offset, rr, j); break;
          case 3: MatmulBlock<3>(job, c.b_offset, rr, j); break;
          case 2: MatmulBlock<2>(job, c.b_offset, rr, j); break;
          default: MatmulBlock<1>(job, c.b_offset, rr, j); break;
        }
      }
      if (j < j1) MatmulScalarPart(job, c.b_offset, rr, static_cast<int64_t>(c.count), j, j1);
    }
  });
}

// matmul_f32: per output element the interpreter's order (p ascending, from 0, multiply then
// add), vectorised across columns: bit-exact.
void MatmulF32Impl(const float* a, const float* b, int64_t M, int64_t K, int64_t N,
                   const std::vector<MatmulBatch>& batches, float* y) {
  const DF df;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df)), jw = 4 * L;
  ThreadPool::global().parallel_for(static_cast<int64_t>(batches.size()), [&](int64_t begin, int64_t end) {
    for (int64_t bi = begin; bi < end; ++bi) {
      const MatmulBatch& e = batches[static_cast<size_t>(bi)];
      const float* pa = a + e.a_offset;
      const float* pb = b + e.b_offset;
      float* po = y + e.y_offset;
      for (int64_t i = 0; i < M; ++i) {
        int64_t j = 0;
        for (; j + jw <= N; j += jw) {
          VF acc[4] = {hn::Zero(df), hn::Zero(df), hn::Zero(df), hn::Zero(df)};
          for (int64_t p = 0; p < K; ++p) {
            const VF av = hn::Set(df, pa[i * K + p]);
            for (int v = 0; v < 4; ++v) acc[v] = hn::Add(acc[v], hn::Mul(av, hn::LoadU(df, pb + p * N + j + v * L)));
          }
          for (int v = 0; v < 4; ++v) hn::StoreU(acc[v], df, po + i * N + j + v * L);
        }
        for (; j + L <= N; j += L) {
          VF acc = hn::Zero(df);
          for (int64_t p = 0; p < K; ++p) acc = hn::Add(acc, hn::Mul(hn::Set(df, pa[i * K + p]), hn::LoadU(df, pb + p * N + j)));
          hn::StoreU(acc, df, po + i * N + j);
        }
        for (; j < N; ++j) {
          float s = 0.0f;
          for (int64_t p = 0; p < K; ++p) s += pa[i * K + p] * pb[p * N + j];
          po[i * N + j] = s;
        }
      }
    }
  });
}

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

HWY_EXPORT(TargetId);
HWY_EXPORT(QuantizeImpl);
HWY_EXPORT(DequantizeImpl);
HWY_EXPORT(RoundToF16Impl);
HWY_EXPORT(LinearQImpl);
HWY_EXPORT(LinearF16Impl);
HWY_EXPORT(MatmulQImpl);
HWY_EXPORT(MatmulF32Impl);
HWY_EXPORT(RmsNormImpl);
HWY_EXPORT(SoftmaxImpl);
HWY_EXPORT(SiluImpl);
HWY_EXPORT(RopeImpl);
HWY_EXPORT(AddImpl);
HWY_EXPORT(MulImpl);

namespace {
// Not cached: tests switch targets with hwy::SetSupportedTargetsForTest.
int64_t chosen_target() { return HWY_DYNAMIC_DISPATCH(TargetId)(); }
}  // namespace

bool available() { return chosen_target() != HWY_SCALAR; }
std::string_view target_name() { return hwy::TargetName(chosen_target()); }

void quantize(const float* x, int64_t n, const QParams& p, ActType t, void* q) {
  HWY_DYNAMIC_DISPATCH(QuantizeImpl)(x, n, p, t, q);
}
void dequantize(const void* q, ActType t, int64_t n, const QParams& p, float* x) {
  HWY_DYNAMIC_DISPATCH(DequantizeImpl)(q, t, n, p, x);
}
void round_to_f16(float* x, int64_t n) { HWY_DYNAMIC_DISPATCH(RoundToF16Impl)(x, n); }
void linear_q(const void* x, ActType xt, int64_t rows, const QParams& ex, const PackedLinear& w, const float* bias,
              const QParams& ey, ActType yt, void* y) {
  HWY_DYNAMIC_DISPATCH(LinearQImpl)(x, xt, rows, ex, w, bias, ey, yt, y);
}
void linear_f16(const float* x, int64_t rows, const uint16_t* w, int64_t out_features, int64_t in_features,
                const float* bias, float* y) {
  HWY_DYNAMIC_DISPATCH(LinearF16Impl)(x, rows, w, out_features, in_features, bias, y);
}
void matmul_q(const void* a, ActType at, const QParams& ea, const void* b, ActType bt, const QParams& eb, int64_t M,
              int64_t K, int64_t N, const std::vector<MatmulBatch>& batches, const QParams& ey, ActType yt, void* y) {
  HWY_DYNAMIC_DISPATCH(MatmulQImpl)(a, at, ea, b, bt, eb, M, K, N, batches, ey, yt, y);
}
void matmul_f32(const float* a, const float* b, int64_t M, int64_t K, int64_t N, const std::vector<MatmulBatch>& batches,
                float* y) {
  HWY_DYNAMIC_DISPATCH(MatmulF32Impl)(a, b, M, K, N, batches, y);
}
void rms_norm(const float* x, int64_t rows, int64_t dim, const float* weight, float eps, float* y) {
  HWY_DYNAMIC_DISPATCH(RmsNormImpl)(x, rows, dim, weight, eps, y);
}
void softmax(float* x, int64_t rows, int64_t n) { HWY_DYNAMIC_DISPATCH(SoftmaxImpl)(x, rows, n); }
void silu(float* x, int64_t n) { HWY_DYNAMIC_DISPATCH(SiluImpl)(x, n); }
void rope(const float* x, int64_t heads, int64_t seq, int64_t head_dim, const float* cos, const float* sin, float* y) {
  HWY_DYNAMIC_DISPATCH(RopeImpl)(x, heads, seq, head_dim, cos, sin, y);
}
void add(const float* a, const float* b, int64_t n, float* y) { HWY_DYNAMIC_DISPATCH(AddImpl)(a, b, n, y); }
void mul(const float* a, const float* b, int64_t n, float* y) { HWY_DYNAMIC_DISPATCH(MulImpl)(a, b, n, y); }

}  // namespace genai::kernels::simd
#endif  // HWY_ONCE

#endif  // GENAI_KERNELS_SCALAR_ONLY
