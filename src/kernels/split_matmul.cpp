#include "kernels/split_matmul.h"

#include <algorithm>

#include "core/thread_pool.h"
#include "kernels/kernel_mode.h"
#include "kernels/requantize.h"
#include "kernels/split_matmul_simd.h"

namespace genai::kernels {
namespace {

template <typename T>
void accumulate_rows(bool simd, const double* a, int64_t rows, const T* b, int64_t stride, int64_t cols, double* acc) {
  if (simd) split_simd::accumulate_rows(a, rows, b, stride, cols, acc);
  else split_simd::accumulate_rows_scalar(a, rows, b, stride, cols, acc);
}

}  // namespace

void split_matmul_q(const void* a, ActType at, const QParams& ea, std::span<const MatmulSegment> b, ActType bt,
                    const QParams& eb, int64_t K, int64_t N, const std::vector<MatmulBatch>& batches, const QParams& ey,
                    ActType yt, void* y, double* work) {
  const bool simd = kernel_mode() == KernelMode::kSimd;
  if (simd && split_simd::split_matmul_q_int(a, at, ea, b, bt, eb, K, N, batches, ey, yt, y)) return;
  const float m = (ea.scale * eb.scale) / ey.scale;
  const float lo = static_cast<float>(ey.qmin - ey.zero_point), hi = static_cast<float>(ey.qmax - ey.zero_point);
  const int64_t per_entry = split_matmul_work(K, N);
  const bool htp_floor = htp_floors_accumulator(ea.qmax, matmul_operand_bits(eb));
  ThreadPool::global().parallel_for(static_cast<int64_t>(batches.size()), [&](int64_t begin, int64_t end) {
    for (int64_t bi = begin; bi < end; ++bi) {
      const MatmulBatch& e = batches[static_cast<size_t>(bi)];
      double* av = work + bi * per_entry;
      double* acc = av + K;
      double* ones = acc + N;   // HTP accumulator: column sums of b as a product with ones
      double* bsum = ones + K;
      for (int64_t p = 0; p < K; ++p) av[p] = static_cast<double>(code_at(a, at, e.a_offset + p) - ea.zero_point);
      std::fill(acc, acc + N, 0.0);
      if (htp_floor) {
        std::fill(ones, ones + K, 1.0);
        std::fill(bsum, bsum + N, 0.0);
      }
      const int64_t b_batch = K * N > 0 ? e.b_offset / (K * N) : 0;
      for (const MatmulSegment& g : b) {
        const auto sum_rows = [&](const double* x, double* out) {
          if (bt == ActType::kU8)
            accumulate_rows(simd, x + g.p0, g.rows, static_cast<const uint8_t*>(g.data) + b_batch * g.per_batch,
                            g.stride, g.cols, out + g.col0);
          else
            accumulate_rows(simd, x + g.p0, g.rows, static_cast<const uint16_t*>(g.data) + b_batch * g.per_batch,
                            g.stride, g.cols, out + g.col0);
        };
        sum_rows(av, acc);
        if (htp_floor) sum_rows(ones, bsum);
        // Σ a·(b − zb) = Σ a·b − zb·Σ a over this segment's rows (exact integers).
        double seg_sum = 0;
        for (int64_t p = g.p0; p < g.p0 + g.rows; ++p) seg_sum += av[p];
        const double corr = static_cast<double>(eb.zero_point) * seg_sum;
        for (int64_t j = 0; j < g.cols; ++j) acc[g.col0 + j] -= corr;
      }
      for (int64_t j = 0; j < N; ++j) {
        double s = acc[j];
        if (htp_floor)
          s = static_cast<double>(htp_accumulator(static_cast<int64_t>(s),
                                                  static_cast<int64_t>(bsum[j]) - int64_t{eb.zero_point} * K,
                                                  ea.zero_point));
        const int32_t q = static_cast<int32_t>(requantize(static_cast<float>(s) * m, lo, hi)) + ey.zero_point;
        if (yt == ActType::kU8) static_cast<uint8_t*>(y)[e.y_offset + j] = static_cast<uint8_t>(q);
        else static_cast<uint16_t*>(y)[e.y_offset + j] = static_cast<uint16_t>(q);
      }
    }
  });
}

}  // namespace genai::kernels
