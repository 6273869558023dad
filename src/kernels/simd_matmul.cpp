// Vectorised matmul_q and matmul_f32 (both bit-exact with the scalar build),
// compiled once per Highway target by hwy/foreach_target.h; HWY_DYNAMIC_DISPATCH picks the best
// one the CPU has.
// Without Highway (GENAI_SCALAR_ONLY) simd_target.cpp forwards every kernel to the scalar build.
#if !defined(GENAI_KERNELS_SCALAR_ONLY)

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/quantized_matmul.h"
#include "kernels/requantize.h"
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
  VD bsum[4];  // sum_p b (raw codes), for the HTP's accumulator
  for (int v = 0; v < 4; ++v) bsum[v] = hn::Zero(dd);
  for (int64_t p = 0; p < job.K; ++p) {
    const int64_t bi = b_offset + p * job.N + j0;
    VD bv[4];
    for (int v = 0; v < 4; ++v) bv[v] = LoadCodesAsDouble(dd, job.b, job.bt, bi + v * L);
    if (job.htp_floor)
      for (int v = 0; v < 4; ++v) bsum[v] = hn::Add(bsum[v], bv[v]);
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
  // The HTP's accumulator: its zero-point correction (32768 - zp_a) sum_p (b - zp_b) per column.
  VD hcorr[4];
  for (int v = 0; v < 4; ++v)
    hcorr[v] = job.htp_floor ? hn::Mul(hn::Sub(bsum[v], hn::Set(dd, job.zpb * static_cast<double>(job.K))),
                                       hn::Set(dd, 32768.0 - job.zpa))
                             : hn::Zero(dd);
  for (int r = 0; r < R; ++r) {
    const VD corr = hn::Set(dd, job.zpb * asum[r]);
    for (int v = 0; v < 4; ++v) {
      VD s = hn::Sub(acc[r][v], corr);
      if (job.htp_floor) s = HtpAccumulatorVec(dd, hn::Sub(s, hcorr[v]), hcorr[v]);
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

void MatmulQImpl(const void* a, ActType at, const QParams& ea, const void* b, ActType bt, const QParams& eb, int64_t M,
                 int64_t K, int64_t N, const std::vector<MatmulBatch>& batches, const QParams& ey, ActType yt, void* y) {
  const DD dd;
  const int64_t L = static_cast<int64_t>(hn::Lanes(dd)), jw = 4 * L;
  const MatmulJob job{a,
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

#endif  // HWY_TARGET == HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace genai::kernels::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace genai::kernels::simd {
GENAI_KERNELS_MATMUL(GENAI_KERNEL_DISPATCH)
}  // namespace genai::kernels::simd
#endif  // HWY_ONCE

#endif  // !GENAI_KERNELS_SCALAR_ONLY
