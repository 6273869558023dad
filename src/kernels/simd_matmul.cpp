// Vectorised matmul_q and matmul_f32 (both bit-exact with the scalar build),
// compiled once per Highway target by hwy/foreach_target.h; HWY_DYNAMIC_DISPATCH picks the best
// one the CPU has.
// Without Highway (GENAI_SCALAR_ONLY) simd_target.cpp forwards every kernel to the scalar build.
#if !defined(GENAI_KERNELS_SCALAR_ONLY)

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/thread_pool.h"
#include "core/error.h"
#include "kernels/quantized_matmul.h"
#include "kernels/requantize.h"
#include "kernels/split_matmul.h"
#include "kernels/split_matmul_simd.h"
#include "kernels/scalar_kernels.h"
#include "kernels/simd_kernels.h"
#include "kernels/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd_matmul.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/simd_common-inl.h"

HWY_BEFORE_NAMESPACE();
namespace genai::kernels::simd {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_SCALAR  // one-lane vectors: the scalar build (available() is false there)
GENAI_KERNELS_MATMUL(GENAI_KERNEL_IMPL_FORWARD_TO_SCALAR)
bool SplitMatmulQIntImpl(const void*, ActType, const QParams&, std::span<const MatmulSegment>, ActType, const QParams&,
                         int64_t, int64_t, const std::vector<MatmulBatch>&, const QParams&, ActType, void*) {
  return false;
}
#else

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
  bool htp_floor;  // the HTP's accumulator (htp_accumulator): 16-bit a, 8-bit b
  float m;
  QParams ey;
  ActType yt;
  void* y;
};

MatmulJob MakeJob(const void* a, ActType at, const QParams& ea, const void* b, ActType bt, const QParams& eb, int64_t M,
                  int64_t K, int64_t N, const QParams& ey, ActType yt, void* y) {
  return MatmulJob{a,
                   at,
                   b,
                   bt,
                   M,
                   K,
                   N,
                   static_cast<double>(ea.zero_point),
                   static_cast<double>(eb.zero_point),
                   htp_floors_accumulator(ea.qmax, matmul_operand_bits(eb)),
                   (ea.scale * eb.scale) / ey.scale,
                   ey,
                   yt,
                   y};
}

// One output row: where its A row starts and where its Y row starts (elements).
struct RowRef {
  int64_t a = 0, y = 0;
};

// Rows that read one b matrix (the heads of a GQA group, or one batch entry's M rows): rows
// [first, first + count) of the list GroupRows fills.
struct RowGroup {
  int64_t b_offset;
  size_t first, count;
};

std::vector<RowGroup> GroupRows(const std::vector<MatmulBatch>& batches, int64_t M, int64_t K, int64_t N,
                                std::vector<RowRef>& rows) {
  std::vector<size_t> order(batches.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t z) { return batches[x].b_offset < batches[z].b_offset; });
  std::vector<RowGroup> groups;
  for (size_t k = 0; k < order.size();) {
    const int64_t boff = batches[order[k]].b_offset;
    const size_t first = rows.size();
    for (; k < order.size() && batches[order[k]].b_offset == boff; ++k)
      for (int64_t i = 0; i < M; ++i) rows.push_back({batches[order[k]].a_offset + i * K, batches[order[k]].y_offset + i * N});
    groups.push_back({boff, first, rows.size() - first});
  }
  return groups;
}

// R rows that share one B matrix (rows of one batch entry, or the heads of one GQA group) x
// columns [j0, j0 + 4 * DD lanes): every converted B vector is used R times.
template <int R>
HWY_INLINE void MatmulBlock(const MatmulJob& job, int64_t b_offset, const RowRef* rows, int64_t j0) {
  const DD dd;
  const int64_t L = static_cast<int64_t>(hn::Lanes(dd));
  VecArray<DD, R * 4> acc;
  acc.fill(hn::Zero(dd));
  // sum_p (a - za)(b - zb) = sum_p (a - za) b - zb sum_p (a - za): raw codes of b in the loop.
  double asum[R] = {};
  VecArray<DD, 4> bsum;  // sum_p b (raw codes), for the HTP's accumulator
  bsum.fill(hn::Zero(dd));
  for (int64_t p = 0; p < job.K; ++p) {
    const int64_t bi = b_offset + p * job.N + j0;
    VecArray<DD, 4> bv;
    for (int v = 0; v < 4; ++v) bv.set(v, LoadCodesAsDouble(dd, job.b, job.bt, bi + v * L));
    if (job.htp_floor)
      for (int v = 0; v < 4; ++v) bsum.set(v, hn::Add(bsum.get(v), bv.get(v)));
    for (int r = 0; r < R; ++r) {
      const double a = static_cast<double>(CodeAt(job.a, job.at, rows[r].a + p)) - job.zpa;
      asum[r] += a;
      const VD av = hn::Set(dd, a);
      for (int v = 0; v < 4; ++v) acc.set(r * 4 + v, hn::MulAdd(av, bv.get(v), acc.get(r * 4 + v)));  // exact either way
    }
  }
  const hn::Rebind<float, DD> dfh;
  const hn::Rebind<int32_t, DD> dih;
  const auto m = hn::Set(dfh, job.m);
  const auto lo = hn::Set(dfh, static_cast<float>(job.ey.qmin - job.ey.zero_point));
  const auto hi = hn::Set(dfh, static_cast<float>(job.ey.qmax - job.ey.zero_point));
  const auto zp = hn::Set(dih, job.ey.zero_point);
  // The HTP's accumulator: its zero-point correction (32768 - zp_a) sum_p (b - zp_b) per column.
  VecArray<DD, 4> hcorr;
  for (int v = 0; v < 4; ++v)
    hcorr.set(v, job.htp_floor ? hn::Mul(hn::Sub(bsum.get(v), hn::Set(dd, job.zpb * static_cast<double>(job.K))),
                                         hn::Set(dd, 32768.0 - job.zpa))
                               : hn::Zero(dd));
  for (int r = 0; r < R; ++r) {
    const VD corr = hn::Set(dd, job.zpb * asum[r]);
    for (int v = 0; v < 4; ++v) {
      VD s = hn::Sub(acc.get(r * 4 + v), corr);
      if (job.htp_floor) s = HtpAccumulatorVec(dd, hn::Sub(s, hcorr.get(v)), hcorr.get(v));
      const auto q = RequantizeVec(dfh, hn::DemoteTo(dfh, s), m, lo, hi, zp);
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
      int64_t acc = 0, bsum = 0;
      for (int64_t p = 0; p < job.K; ++p) {
        const int32_t bv = CodeAt(job.b, job.bt, b_offset + p * job.N + jj) - zb;
        acc += static_cast<int64_t>(CodeAt(job.a, job.at, rows[r].a + p) - za) * bv;
        bsum += bv;
      }
      if (job.htp_floor) acc = htp_accumulator(acc, bsum, za);
      const int32_t v = static_cast<int32_t>(requantize(static_cast<float>(acc) * job.m, lo, hi)) + job.ey.zero_point;
      const int64_t o = rows[r].y + jj;
      if (job.yt == ActType::kU8) static_cast<uint8_t*>(job.y)[o] = static_cast<uint8_t>(v);
      else static_cast<uint16_t*>(job.y)[o] = static_cast<uint16_t>(v);
    }
}

// ---------------------------------------------------------------------------------------------
// matmul_q with 8-bit b (the KV cache of the 8-bit-KV recipes): integer sums, as linear_q's.
// a' = a - off_a as int16 (off_a = 32768 for 16-bit codes, 0 for 8-bit ones) times b's raw codes
// (0..255): one pair step adds at most 2 * 32768 * 255 < 2^24 to an int32 lane, so lanes stay
// exact for 128 steps and are flushed into doubles every kIntFlush steps. Then
//   sum_p (a - za)(b - zb) = S - zb A + (off_a - za)(Bsum - K zb),
// S = sum a' b, A = sum a' (per row), Bsum = sum b (per column): the exact integers MatmulBlock
// holds, so the results are the same bits. b is packed per work item into pairs along K
// (column j of pair step q at [q][j][2]), each pair vector then used by every row of the item.

constexpr int kIntCols = HWY_MAX_BYTES >= 64 ? 4 : 2;  // column vectors per register tile
constexpr int kWideCols = kIntCols / 2;                 // the same for 16-bit b (two accumulators each)
constexpr int kIntRows = 4;                            // rows per register tile
constexpr int64_t kIntRowChunk = 64;                   // rows per work item (b is packed per item)
constexpr int64_t kIntFlush = 128;                     // pair steps per exact int32 run

// How a tile reads b: 8-bit codes packed per item, 8-bit codes as read, 16-bit codes as read.
enum class IntMode { kPacked, kDirect, kWide };

// Rows [p0, p0 + rows) of b's K axis for one range of columns, stored row-major with `stride`
// elements per row from `base` (the range's first column).
struct KSegment {
  const void* base = nullptr;  // codes of b's type
  int64_t stride = 0, p0 = 0, rows = 0;
};

struct IntItemData {
  const int16_t* b = nullptr;     // packed: [pairs][width][2]
  const int32_t* bsum = nullptr;  // packed: [width], sum_p b per column
  int64_t width = 0, pairs = 0;   // packed
  const KSegment* segs = nullptr;  // direct: the segments covering K, in any order
  int nsegs = 0;
};

// The results of a tile: sum[(r * V + v) * L + lane] holds S = sum a' b' for row r and tile
// column v * L + lane, bsum[column] sum b', both exact integers in doubles; off_a / off_b are the
// offsets a' and b' were taken from (a = a' + off_a, b = b' + off_b). With cb = off_b - zb,
// centred = S + cb A = sum a' (b - zb) and bz = B + K cb = sum (b - zb) per column, so
//   sum (a - za)(b - zb) = centred + (off_a - za) bz,
// or the HTP's accumulator over the centring on 32768 (16-bit a, 8-bit b: off_a = 32768).
// Columns past `cols` are not stored.
template <int R, int V>
HWY_INLINE void FinishIntTile(const MatmulJob& job, const double* sum, const double* bsum, const int64_t* asum,
                              const int64_t* yrow, int64_t j0, int64_t jv, double off_a, double off_b, int64_t cols) {
  const DD dd;
  const hn::Rebind<int32_t, DD> dih;
  const hn::Rebind<float, DD> dfh;
  const int64_t L = static_cast<int64_t>(hn::Lanes(DI32())), H = L / 2;
  const auto m = hn::Set(dfh, job.m);
  const auto lo = hn::Set(dfh, static_cast<float>(job.ey.qmin - job.ey.zero_point));
  const auto hi = hn::Set(dfh, static_cast<float>(job.ey.qmax - job.ey.zero_point));
  const auto zp = hn::Set(dih, job.ey.zero_point);
  const double cb = off_b - job.zpb;
  const VD kcb = hn::Set(dd, static_cast<double>(job.K) * cb);
  const VD off_corr = hn::Set(dd, off_a - job.zpa), htp_corr = hn::Set(dd, 32768.0 - job.zpa);
  for (int v = 0; v < V; ++v) {
    for (int half = 0; half < 2; ++half) {
      const int64_t c = v * L + half * H;  // column within the tile
      const int64_t valid = std::min<int64_t>(H, std::max<int64_t>(0, cols - c));
      if (valid == 0) continue;
      const VD bz = hn::Add(hn::Load(dd, bsum + c), kcb);
      for (int r = 0; r < R; ++r) {
        const VD sv = hn::Load(dd, sum + (r * V + v) * L + half * H);
        const VD centred = hn::Add(sv, hn::Set(dd, cb * static_cast<double>(asum[r])));
        const VD s = job.htp_floor ? HtpAccumulatorVec(dd, centred, hn::Mul(bz, htp_corr))
                                   : hn::Add(centred, hn::Mul(bz, off_corr));
        const auto qv = RequantizeVec(dfh, hn::DemoteTo(dfh, s), m, lo, hi, zp);
        StoreCodes(dih, qv, job.yt, job.y, yrow[r] + j0 + jv + c, static_cast<size_t>(valid));
      }
    }
  }
}

// Rows ax[0..R) (a' rows, sums in `asum`) x columns [jv, jv + kIntCols * L) of the item, of which
// the first `cols` exist; results at yrow[r] + j0 + jv + column. kDirect: the pair vectors are
// formed from b's rows as they are read (no packing; few rows to share them), segment by segment
// (a b split along K, read in place); the vector reaching past the last column reads through a
// zero-padded copy.
template <int R, bool kDirect>
HWY_INLINE void IntTile(const MatmulJob& job, const IntItemData& it, const int16_t* const* ax, const int64_t* asum,
                        const int64_t* yrow, int64_t j0, int64_t jv, double off_a, int64_t cols) {
  const DI32 di;
  const DD dd;
  const hn::Rebind<int32_t, DD> dih;
  const hn::Rebind<uint8_t, DI32> du8;
  const int64_t L = static_cast<int64_t>(hn::Lanes(di)), H = L / 2;
  constexpr int V = kIntCols;
  HWY_ALIGN double sum[R * V * kMaxLanes32];
  VecArray<DI32, V> bsv;  // direct: b's column sums
  bsv.fill(hn::Zero(di));
  for (int64_t i = 0; i < R * V * L; ++i) sum[i] = 0.0;
  const int nseg = kDirect ? it.nsegs : 1;
  for (int sg = 0; sg < nseg; ++sg) {
    const KSegment* seg = kDirect ? &it.segs[sg] : nullptr;
    const int64_t pairs = kDirect ? (seg->rows + 1) / 2 : it.pairs;
    const int64_t p0 = kDirect ? seg->p0 : 0;
    for (int64_t q0 = 0; q0 < pairs; q0 += kIntFlush) {
      VecArray<DI32, R * V> acc;
      acc.fill(hn::Zero(di));
      const int64_t q1 = std::min(pairs, q0 + kIntFlush);
      for (int64_t q = q0; q < q1; ++q) {
        VecArray<DI16, V> bv;
        if constexpr (kDirect) {
          // Lane j: b[2q][j] in its low half, b[2q + 1][j] in its high half (0 past the segment:
          // a' there belongs to the next segment, or is the zero padding past K).
          const uint8_t* r0 = static_cast<const uint8_t*>(seg->base) + 2 * q * seg->stride + jv;
          const uint8_t* r1 = r0 + seg->stride;
          const bool has1 = 2 * q + 1 < seg->rows;
          for (int v = 0; v < V; ++v) {
            const int64_t c0 = v * L;
            VI32 v0 = hn::Zero(di), v1 = hn::Zero(di);
            if (c0 + L <= cols) {
              v0 = hn::PromoteTo(di, hn::LoadU(du8, r0 + c0));
              if (has1) v1 = hn::PromoteTo(di, hn::LoadU(du8, r1 + c0));
            } else if (c0 < cols) {  // the vector that reaches past the last column
              HWY_ALIGN uint8_t pad[2][kMaxLanes32] = {};
              std::memcpy(pad[0], r0 + c0, static_cast<size_t>(cols - c0));
              if (has1) std::memcpy(pad[1], r1 + c0, static_cast<size_t>(cols - c0));
              v0 = hn::PromoteTo(di, hn::Load(du8, pad[0]));
              v1 = hn::PromoteTo(di, hn::Load(du8, pad[1]));
            }
            bsv.set(v, hn::Add(bsv.get(v), hn::Add(v0, v1)));
            bv.set(v, hn::BitCast(DI16(), hn::Or(v0, hn::ShiftLeft<16>(v1))));
          }
        } else {
          const int16_t* bp = it.b + (q * it.width + jv) * 2;
          for (int v = 0; v < V; ++v) bv.set(v, hn::Load(DI16(), bp + v * 2 * L));
        }
        for (int r = 0; r < R; ++r) {
          const VI16 x = BroadcastPair(ax[r] + p0 + 2 * q);
          for (int v = 0; v < V; ++v) acc.set(r * V + v, PairDot(di, acc.get(r * V + v), bv.get(v), x));
        }
      }
      for (int r = 0; r < R; ++r)
        for (int v = 0; v < V; ++v) {
          double* s = sum + (r * V + v) * L;
          const VI32 a = acc.get(r * V + v);
          hn::Store(hn::Add(hn::Load(dd, s), hn::PromoteTo(dd, hn::LowerHalf(dih, a))), dd, s);
          hn::Store(hn::Add(hn::Load(dd, s + H), hn::PromoteTo(dd, hn::UpperHalf(dih, a))), dd, s + H);
        }
    }
  }
  // b's column sums as exact doubles (8-bit codes as they are: off_b = 0).
  HWY_ALIGN double bsum[V * kMaxLanes32];
  for (int v = 0; v < V; ++v) {
    const VI32 bs = kDirect ? bsv.get(v) : hn::LoadU(di, it.bsum + jv + v * L);
    hn::Store(hn::PromoteTo(dd, hn::LowerHalf(dih, bs)), dd, bsum + v * L);
    hn::Store(hn::PromoteTo(dd, hn::UpperHalf(dih, bs)), dd, bsum + v * L + H);
  }
  FinishIntTile<R, V>(job, sum, bsum, asum, yrow, j0, jv, off_a, 0.0, cols);
}

// IntTile for 16-bit b (the 16-bit KV cache), always direct: b' = b - 32768 split into bytes,
// b' = 256 bh + bl (bh in [-128, 127], bl in [0, 255]), each byte plane paired along K like the
// 8-bit codes: a pair step adds below 2^24 to a lane of either plane, exact for kIntFlush steps,
// and S = sum a' b' = 256 S_h + S_l. Then, with ca = off_a - za and cb = 32768 - zb,
//   sum (a - za)(b - zb) = S + cb A + ca B + K ca cb   (A = sum a', B = sum b' per column).
// Half the columns of IntTile per call (twice the accumulators).
template <int R>
HWY_INLINE void IntTileWide(const MatmulJob& job, const IntItemData& it, const int16_t* const* ax,
                            const int64_t* asum, const int64_t* yrow, int64_t j0, int64_t jv, double off_a,
                            int64_t cols) {
  const DI32 di;
  const DD dd;
  const hn::Rebind<int32_t, DD> dih;
  const hn::Rebind<uint16_t, DI32> du16;
  const int64_t L = static_cast<int64_t>(hn::Lanes(di)), H = L / 2;
  constexpr int V = kWideCols;
  HWY_ALIGN double sum[R * V * kMaxLanes32];
  HWY_ALIGN double bsum[V * kMaxLanes32];
  for (int64_t i = 0; i < R * V * L; ++i) sum[i] = 0.0;
  for (int64_t i = 0; i < V * L; ++i) bsum[i] = 0.0;
  const VI32 k32768 = hn::Set(di, 32768), lo_mask = hn::Set(di, 0xff), half_mask = hn::Set(di, 0xffff);
  for (int sg = 0; sg < it.nsegs; ++sg) {
    const KSegment& seg = it.segs[sg];
    const int64_t pairs = (seg.rows + 1) / 2;
    for (int64_t q0 = 0; q0 < pairs; q0 += kIntFlush) {
      VecArray<DI32, R * V> acc_l, acc_h;
      VecArray<DI32, V> bs;
      acc_l.fill(hn::Zero(di));
      acc_h.fill(hn::Zero(di));
      bs.fill(hn::Zero(di));
      const int64_t q1 = std::min(pairs, q0 + kIntFlush);
      for (int64_t q = q0; q < q1; ++q) {
        const uint16_t* r0 = static_cast<const uint16_t*>(seg.base) + 2 * q * seg.stride + jv;
        const uint16_t* r1 = r0 + seg.stride;
        const bool has1 = 2 * q + 1 < seg.rows;
        VecArray<DI16, V> bl, bh;
        for (int v = 0; v < V; ++v) {
          const int64_t c0 = v * L;
          VI32 v0 = hn::Zero(di), v1 = hn::Zero(di);  // b' (0 past the columns and the segment)
          if (c0 + L <= cols) {
            v0 = hn::Sub(hn::PromoteTo(di, hn::LoadU(du16, r0 + c0)), k32768);
            if (has1) v1 = hn::Sub(hn::PromoteTo(di, hn::LoadU(du16, r1 + c0)), k32768);
          } else if (c0 < cols) {  // the vector that reaches past the last column: zero codes pad
            HWY_ALIGN uint16_t pad[2][kMaxLanes32];
            for (int64_t k = 0; k < L; ++k) pad[0][k] = pad[1][k] = 32768;
            std::memcpy(pad[0], r0 + c0, static_cast<size_t>(cols - c0) * sizeof(uint16_t));
            if (has1) std::memcpy(pad[1], r1 + c0, static_cast<size_t>(cols - c0) * sizeof(uint16_t));
            v0 = hn::Sub(hn::PromoteTo(di, hn::Load(du16, pad[0])), k32768);
            v1 = hn::Sub(hn::PromoteTo(di, hn::Load(du16, pad[1])), k32768);
          }
          bs.set(v, hn::Add(bs.get(v), hn::Add(v0, v1)));
          bl.set(v, hn::BitCast(DI16(), hn::Or(hn::And(v0, lo_mask), hn::ShiftLeft<16>(hn::And(v1, lo_mask)))));
          bh.set(v, hn::BitCast(DI16(), hn::Or(hn::And(hn::ShiftRight<8>(v0), half_mask),
                                               hn::ShiftLeft<16>(hn::ShiftRight<8>(v1)))));
        }
        for (int r = 0; r < R; ++r) {
          const VI16 x = BroadcastPair(ax[r] + seg.p0 + 2 * q);
          for (int v = 0; v < V; ++v) {
            acc_l.set(r * V + v, PairDot(di, acc_l.get(r * V + v), bl.get(v), x));
            acc_h.set(r * V + v, PairDot(di, acc_h.get(r * V + v), bh.get(v), x));
          }
        }
      }
      const VD k256 = hn::Set(dd, 256.0);
      for (int v = 0; v < V; ++v) {
        double* b = bsum + v * L;
        const VI32 bsv = bs.get(v);
        hn::Store(hn::Add(hn::Load(dd, b), hn::PromoteTo(dd, hn::LowerHalf(dih, bsv))), dd, b);
        hn::Store(hn::Add(hn::Load(dd, b + H), hn::PromoteTo(dd, hn::UpperHalf(dih, bsv))), dd, b + H);
        for (int r = 0; r < R; ++r) {
          double* s = sum + (r * V + v) * L;
          const VI32 al = acc_l.get(r * V + v), ah = acc_h.get(r * V + v);
          const VD l0 = hn::PromoteTo(dd, hn::LowerHalf(dih, al)), l1 = hn::PromoteTo(dd, hn::UpperHalf(dih, al));
          const VD h0 = hn::PromoteTo(dd, hn::LowerHalf(dih, ah)), h1 = hn::PromoteTo(dd, hn::UpperHalf(dih, ah));
          hn::Store(hn::Add(hn::Load(dd, s), hn::Add(hn::Mul(h0, k256), l0)), dd, s);
          hn::Store(hn::Add(hn::Load(dd, s + H), hn::Add(hn::Mul(h1, k256), l1)), dd, s + H);
        }
      }
    }
  }
  FinishIntTile<R, V>(job, sum, bsum, asum, yrow, j0, jv, off_a, 32768.0, cols);
}

// a's row at `offset` as int16 a' = a - off_a (off_a 32768 for 16-bit codes, 0 for 8-bit) into
// dst[0, K); returns sum a'.
int64_t CentredRow(const void* a, ActType at, int64_t offset, int64_t K, int16_t* dst) {
  int64_t sum = 0;
  if (at == ActType::kU16) {
    const uint16_t* src = static_cast<const uint16_t*>(a) + offset;
    for (int64_t p = 0; p < K; ++p) sum += dst[p] = static_cast<int16_t>(src[p] ^ 0x8000u);
  } else {
    const uint8_t* src = static_cast<const uint8_t*>(a) + offset;
    for (int64_t p = 0; p < K; ++p) sum += dst[p] = static_cast<int16_t>(src[p]);
  }
  return sum;
}

// Packs b's columns [j0, j0 + width) of one matrix (b at its first column) as pairs along K:
// lane j of a pair vector holds b[2q][j] in its low half and b[2q + 1][j] in its high half; zeros
// past K and past `valid` columns. bs: the column sums.
void PackPairs(const uint8_t* b, int64_t K, int64_t N, int64_t pairs, int64_t width, int64_t valid, int16_t* pb,
               int32_t* bs) {
  const DI32 di;
  const hn::Rebind<uint8_t, DI32> du8;
  const int64_t L = static_cast<int64_t>(hn::Lanes(di));
  const int64_t full = valid / L * L;
  for (int64_t j = 0; j < width; ++j) bs[j] = 0;
  for (int64_t q = 0; q < pairs; ++q) {
    int32_t* o = reinterpret_cast<int32_t*>(pb + q * width * 2);
    const uint8_t* r0 = b + 2 * q * N;
    const uint8_t* r1 = b + (2 * q + 1) * N;
    const bool has1 = 2 * q + 1 < K;
    int64_t j = 0;
    for (; j < full; j += L) {
      const VI32 v0 = hn::PromoteTo(di, hn::LoadU(du8, r0 + j));
      const VI32 v1 = has1 ? hn::PromoteTo(di, hn::LoadU(du8, r1 + j)) : hn::Zero(di);
      hn::Store(hn::Or(v0, hn::ShiftLeft<16>(v1)), di, o + j);
      hn::StoreU(hn::Add(hn::LoadU(di, bs + j), hn::Add(v0, v1)), di, bs + j);
    }
    for (; j < valid; ++j) {
      const int32_t v0 = r0[j], v1 = has1 ? r1[j] : 0;
      o[j] = v0 | (v1 << 16);
      bs[j] += v0 + v1;
    }
    for (; j < width; ++j) o[j] = 0;
  }
}

template <int R>
HWY_INLINE void IntTileAny(IntMode mode, const MatmulJob& job, const IntItemData& it, const int16_t* const* ax,
                           const int64_t* asum, const int64_t* yrow, int64_t j0, int64_t jv, double off_a,
                           int64_t cols) {
  switch (mode) {
    case IntMode::kPacked: IntTile<R, false>(job, it, ax, asum, yrow, j0, jv, off_a, cols); break;
    case IntMode::kDirect: IntTile<R, true>(job, it, ax, asum, yrow, j0, jv, off_a, cols); break;
    case IntMode::kWide: IntTileWide<R>(job, it, ax, asum, yrow, j0, jv, off_a, cols); break;
  }
}

// Rows ax[0..nr) through IntTileAny.
HWY_INLINE void IntTileRows(int nr, IntMode mode, const MatmulJob& job, const IntItemData& it, const int16_t* const* ax,
                            const int64_t* asum, const int64_t* yrow, int64_t j0, int64_t jv, double off_a,
                            int64_t cols) {
  switch (nr) {
    case 4: IntTileAny<4>(mode, job, it, ax, asum, yrow, j0, jv, off_a, cols); break;
    case 3: IntTileAny<3>(mode, job, it, ax, asum, yrow, j0, jv, off_a, cols); break;
    case 2: IntTileAny<2>(mode, job, it, ax, asum, yrow, j0, jv, off_a, cols); break;
    default: IntTileAny<1>(mode, job, it, ax, asum, yrow, j0, jv, off_a, cols); break;
  }
}

// b's codes from element `offset` on, of b's type.
const void* CodesAt(const void* b, ActType bt, int64_t offset) {
  return bt == ActType::kU16 ? static_cast<const void*>(static_cast<const uint16_t*>(b) + offset)
                             : static_cast<const void*>(static_cast<const uint8_t*>(b) + offset);
}

// Columns per register tile: 16-bit b holds two accumulators per column vector.
int64_t IntTileCols(ActType bt) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(DI32()));
  return (bt == ActType::kU16 ? kWideCols : kIntCols) * L;
}

void MatmulQInt(const MatmulJob& job, const std::vector<MatmulBatch>& batches) {
  const int64_t tile = IntTileCols(job.bt);
  const bool wide = job.bt == ActType::kU16;
  const int64_t K = job.K, N = job.N, pairs = (K + 1) / 2, kp = 2 * pairs;
  const bool a16 = job.at == ActType::kU16;
  const double off_a = a16 ? 32768.0 : 0.0;
  std::vector<RowRef> rows;
  const std::vector<RowGroup> groups = GroupRows(batches, job.M, K, N, rows);
  // Work items: (group, column span, row chunk). Spans of up to 256 columns.
  const int64_t span = std::min<int64_t>((N + tile - 1) / tile * tile, std::max<int64_t>(tile, 256 / tile * tile));
  const int64_t spans = (N + span - 1) / span;
  struct Item {
    size_t group;
    int64_t j0;
    size_t r0, r1;
  };
  std::vector<Item> items;
  for (size_t g = 0; g < groups.size(); ++g)
    for (int64_t s = 0; s < spans; ++s)
      for (size_t r = 0; r < groups[g].count; r += kIntRowChunk)
        items.push_back({g, s * span, r, std::min<size_t>(groups[g].count, r + kIntRowChunk)});
  ThreadPool::global().parallel_for(static_cast<int64_t>(items.size()), [&](int64_t begin, int64_t end) {
    thread_local std::vector<int16_t> bbuf, abuf;
    thread_local std::vector<int32_t> bsbuf;
    thread_local std::vector<int64_t> asbuf;
    for (int64_t ii = begin; ii < end; ++ii) {
      const Item& item = items[static_cast<size_t>(ii)];
      const RowGroup& g = groups[item.group];
      const int64_t width = std::min(span, (N - item.j0 + tile - 1) / tile * tile);
      const int64_t valid = std::min(width, N - item.j0);
      const void* b = CodesAt(job.b, job.bt, g.b_offset + item.j0);
      // Few rows share b (or b is 16-bit): pair vectors formed as b is read. Else b's span is
      // packed once for every row.
      const IntMode mode = wide ? IntMode::kWide : g.count <= static_cast<size_t>(kIntRows) ? IntMode::kDirect : IntMode::kPacked;
      const int64_t packed_width = mode == IntMode::kPacked ? width : 0;
      int16_t* pb = nullptr;
      int32_t* bs = nullptr;
      if (packed_width > 0) {
        if (bbuf.size() < static_cast<size_t>(pairs * packed_width * 2) + 64)
          bbuf.resize(static_cast<size_t>(pairs * packed_width * 2) + 64);
        if (bsbuf.size() < static_cast<size_t>(packed_width)) bsbuf.resize(static_cast<size_t>(packed_width));
        pb = bbuf.data();
        pb += (64 - reinterpret_cast<uintptr_t>(pb) % 64) % 64 / sizeof(int16_t);  // vector-aligned
        bs = bsbuf.data();
        PackPairs(static_cast<const uint8_t*>(b), K, N, pairs, packed_width, valid, pb, bs);
      }
      // a' rows of the item, zero-padded to an even K, and their sums.
      const size_t n_rows = item.r1 - item.r0;
      if (abuf.size() < n_rows * static_cast<size_t>(kp)) abuf.resize(n_rows * static_cast<size_t>(kp));
      if (asbuf.size() < n_rows) asbuf.resize(n_rows);
      for (size_t r = 0; r < n_rows; ++r) {
        int16_t* dst = abuf.data() + r * static_cast<size_t>(kp);
        asbuf[r] = CentredRow(job.a, job.at, rows[g.first + item.r0 + r].a, K, dst);
        if (kp > K) dst[K] = 0;
      }
      const KSegment whole{b, N, 0, K};
      const IntItemData data =
          mode == IntMode::kPacked ? IntItemData{pb, bs, width, pairs} : IntItemData{nullptr, nullptr, 0, 0, &whole, 1};
      for (size_t r = 0; r < n_rows; r += kIntRows) {
        const int nr = static_cast<int>(std::min<size_t>(kIntRows, n_rows - r));
        const int16_t* ax[kIntRows];
        int64_t yrow[kIntRows];
        for (int k = 0; k < nr; ++k) {
          ax[k] = abuf.data() + (r + static_cast<size_t>(k)) * static_cast<size_t>(kp);
          yrow[k] = rows[g.first + item.r0 + r + static_cast<size_t>(k)].y;
        }
        const int64_t* as = asbuf.data() + r;
        for (int64_t jv = 0; jv < width; jv += tile)
          IntTileRows(nr, mode, job, data, ax, as, yrow, item.j0, jv, off_a, std::min(tile, valid - jv));
      }
    }
  });
}

// split_matmul_q with 8-bit b (decode attention reading the 8-bit cache and the new entry in
// place): the direct integer tiles above, over each range of columns with the segments that
// cover its K. Batch entries sharing b (GQA heads) share the pair vectors. Same sums, same bits
// as the double form (split_matmul.cpp).
bool SplitMatmulQIntImpl(const void* a, ActType at, const QParams& ea, std::span<const MatmulSegment> b, ActType bt,
                         const QParams& eb, int64_t K, int64_t N, const std::vector<MatmulBatch>& batches,
                         const QParams& ey, ActType yt, void* y) {
  if ((bt != ActType::kU8 && bt != ActType::kU16) || K <= 0 || N <= 0 || batches.empty()) return false;
  const int64_t tile = IntTileCols(bt);
  const IntMode mode = bt == ActType::kU16 ? IntMode::kWide : IntMode::kDirect;
  const MatmulJob job = MakeJob(a, at, ea, nullptr, bt, eb, 1, K, N, ey, yt, y);
  const bool a16 = at == ActType::kU16;
  const double off_a = a16 ? 32768.0 : 0.0;
  // Column ranges and the segments (by index) covering each.
  struct Range {
    int64_t col0, cols;
    std::vector<size_t> segs;
  };
  std::vector<Range> ranges;
  for (size_t i = 0; i < b.size(); ++i) {
    auto it = std::find_if(ranges.begin(), ranges.end(),
                           [&](const Range& r) { return r.col0 == b[i].col0 && r.cols == b[i].cols; });
    if (it == ranges.end()) ranges.push_back({b[i].col0, b[i].cols, {i}});
    else it->segs.push_back(i);
  }
  // Entries (one row each) grouped by the b batch entry they read.
  std::vector<RowRef> rows;
  const std::vector<RowGroup> groups = GroupRows(batches, 1, K, N, rows);
  struct Item {
    size_t group, range;
    int64_t j0;  // within the range
  };
  std::vector<Item> items;
  for (size_t g = 0; g < groups.size(); ++g)
    for (size_t r = 0; r < ranges.size(); ++r)
      for (int64_t j = 0; j < ranges[r].cols; j += 256) items.push_back({g, r, j});
  // A decode step's attention is a few hundred thousand products per call: waking the pool
  // costs more than it saves below kSplitParallelWork of them.
  constexpr int64_t kSplitParallelWork = int64_t{1} << 20;
  const int64_t work = static_cast<int64_t>(batches.size()) * K * N;
  const int64_t grain = work < kSplitParallelWork ? static_cast<int64_t>(items.size()) : 1;
  ThreadPool::global().parallel_for(static_cast<int64_t>(items.size()), [&](int64_t begin, int64_t end) {
    thread_local std::vector<int16_t> abuf;
    thread_local std::vector<int64_t> asbuf;
    const int64_t kp = K + 2;  // a' rows zero-padded: an odd segment's last pair reads a'[p0 + rows]
    for (int64_t ii = begin; ii < end; ++ii) {
      const Item& item = items[static_cast<size_t>(ii)];
      const RowGroup& g = groups[item.group];
      const int64_t b_batch = g.b_offset / (K * N);
      const Range& range = ranges[item.range];
      const int64_t width = std::min<int64_t>(256, range.cols - item.j0);
      KSegment segs[8];
      int nsegs = 0;
      for (size_t si : range.segs) {
        if (nsegs == 8) throw_failure("split_matmul_q: more than 8 segments cover one column range");
        const MatmulSegment& m = b[si];
        segs[nsegs++] = {CodesAt(m.data, bt, b_batch * m.per_batch + item.j0), m.stride, m.p0, m.rows};
      }
      if (abuf.size() < g.count * static_cast<size_t>(kp)) abuf.resize(g.count * static_cast<size_t>(kp));
      if (asbuf.size() < g.count) asbuf.resize(g.count);
      for (size_t r = 0; r < g.count; ++r) {
        int16_t* dst = abuf.data() + r * static_cast<size_t>(kp);
        asbuf[r] = CentredRow(a, at, rows[g.first + r].a, K, dst);
        dst[K] = dst[K + 1] = 0;
      }
      const IntItemData data{nullptr, nullptr, 0, 0, segs, nsegs};
      for (size_t r = 0; r < g.count; r += kIntRows) {
        const int nr = static_cast<int>(std::min<size_t>(kIntRows, g.count - r));
        const int16_t* ax[kIntRows];
        int64_t yrow[kIntRows];
        for (int k = 0; k < nr; ++k) {
          ax[k] = abuf.data() + (r + static_cast<size_t>(k)) * static_cast<size_t>(kp);
          yrow[k] = rows[g.first + r + static_cast<size_t>(k)].y;
        }
        const int64_t* as = asbuf.data() + r;
        const int64_t j0 = range.col0 + item.j0;
        for (int64_t jv = 0; jv < width; jv += tile)
          IntTileRows(nr, mode, job, data, ax, as, yrow, j0, jv, off_a, std::min(tile, width - jv));
      }
    }
  }, grain);
  return true;
}

void MatmulQImpl(const void* a, ActType at, const QParams& ea, const void* b, ActType bt, const QParams& eb, int64_t M,
                 int64_t K, int64_t N, const std::vector<MatmulBatch>& batches, const QParams& ey, ActType yt, void* y) {
  const DD dd;
  const int64_t L = static_cast<int64_t>(hn::Lanes(dd)), jw = 4 * L;
  const MatmulJob job = MakeJob(a, at, ea, b, bt, eb, M, K, N, ey, yt, y);
  if ((bt == ActType::kU8 || bt == ActType::kU16) && K > 0 && N > 0) {
    MatmulQInt(job, batches);
    return;
  }
  // Rows grouped by the B matrix they read, in chunks of up to 4.
  std::vector<RowRef> rows;
  std::vector<RowGroup> chunks;
  for (const RowGroup& g : GroupRows(batches, M, K, N, rows))
    for (size_t r = g.first; r < g.first + g.count; r += 4)
      chunks.push_back({g.b_offset, r, std::min<size_t>(4, g.first + g.count - r)});
  // Work items: (row chunk, column span), so a single decode row still splits over threads.
  const int64_t span = std::max<int64_t>(jw, (256 / jw) * jw);
  const int64_t spans = (N + span - 1) / span;
  const int64_t items = static_cast<int64_t>(chunks.size()) * spans;
  ThreadPool::global().parallel_for(items, [&](int64_t begin, int64_t end) {
    for (int64_t it = begin; it < end; ++it) {
      const RowGroup& c = chunks[static_cast<size_t>(it / spans)];
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
          VecArray<DF, 4> acc;
          acc.fill(hn::Zero(df));
          for (int64_t p = 0; p < K; ++p) {
            const VF av = hn::Set(df, pa[i * K + p]);
            for (int v = 0; v < 4; ++v) acc.set(v, hn::Add(acc.get(v), hn::Mul(av, hn::LoadU(df, pb + p * N + j + v * L))));
          }
          for (int v = 0; v < 4; ++v) hn::StoreU(acc.get(v), df, po + i * N + j + v * L);
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

#endif  // HWY_TARGET == HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace genai::kernels::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace genai::kernels::simd {
GENAI_KERNELS_MATMUL(GENAI_KERNEL_DISPATCH)
HWY_EXPORT(SplitMatmulQIntImpl);
namespace {
bool split_matmul_q_int_dispatch(const void* a, ActType at, const QParams& ea, std::span<const MatmulSegment> b,
                                 ActType bt, const QParams& eb, int64_t K, int64_t N,
                                 const std::vector<MatmulBatch>& batches, const QParams& ey, ActType yt, void* y) {
  return HWY_DYNAMIC_DISPATCH(SplitMatmulQIntImpl)(a, at, ea, b, bt, eb, K, N, batches, ey, yt, y);
}
}  // namespace
}  // namespace genai::kernels::simd
namespace genai::kernels::split_simd {
bool split_matmul_q_int(const void* a, ActType at, const QParams& ea, std::span<const MatmulSegment> b, ActType bt,
                        const QParams& eb, int64_t K, int64_t N, const std::vector<MatmulBatch>& batches,
                        const QParams& ey, ActType yt, void* y) {
  return simd::split_matmul_q_int_dispatch(a, at, ea, b, bt, eb, K, N, batches, ey, yt, y);
}
}  // namespace genai::kernels::split_simd
#endif  // HWY_ONCE

#endif  // !GENAI_KERNELS_SCALAR_ONLY
