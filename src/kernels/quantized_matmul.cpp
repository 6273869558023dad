#include "kernels/quantized_matmul.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/scalar_kernels.h"
#include "kernels/simd_kernels.h"
#include "kernels/requantize.h"

namespace genai::kernels {

namespace scalar {

// The QdqExecutor matmul: exact int64 sums of (qa - zp_a) * (qb - zp_b) (16-bit times 8-bit
// codes: as the HTP forms them, htp_accumulator), requantized with m = (scale_a * scale_b) /
// scale_y, round half even, clamp.
void matmul_q(const void* a, ActType at, const QParams& ea, const void* b, ActType bt, const QParams& eb, int64_t M,
              int64_t K, int64_t N, const std::vector<MatmulBatch>& batches, const QParams& ey, ActType yt, void* y) {
  const float m = (ea.scale * eb.scale) / ey.scale;
  const float lo = static_cast<float>(ey.qmin - ey.zero_point), hi = static_cast<float>(ey.qmax - ey.zero_point);
  const bool htp_floor = htp_floors_accumulator(ea.qmax, matmul_operand_bits(eb));
  ThreadPool::global().parallel_for(static_cast<int64_t>(batches.size()), [&](int64_t begin, int64_t end) {
    std::vector<int64_t> acc(static_cast<size_t>(N)), bsum(static_cast<size_t>(N));
    for (int64_t bi = begin; bi < end; ++bi) {
      const MatmulBatch& e = batches[static_cast<size_t>(bi)];
      if (htp_floor) {
        std::fill(bsum.begin(), bsum.end(), 0);
        for (int64_t p = 0; p < K; ++p)
          for (int64_t j = 0; j < N; ++j)
            bsum[static_cast<size_t>(j)] += code_at(b, bt, e.b_offset + p * N + j) - eb.zero_point;
      }
      for (int64_t i = 0; i < M; ++i) {
        std::fill(acc.begin(), acc.end(), 0);
        for (int64_t p = 0; p < K; ++p) {
          const int64_t av = code_at(a, at, e.a_offset + i * K + p) - ea.zero_point;
          for (int64_t j = 0; j < N; ++j)
            acc[static_cast<size_t>(j)] += av * (code_at(b, bt, e.b_offset + p * N + j) - eb.zero_point);
        }
        for (int64_t j = 0; j < N; ++j) {
          int64_t s = acc[static_cast<size_t>(j)];
          if (htp_floor) s = htp_accumulator(s, bsum[static_cast<size_t>(j)], ea.zero_point);
          const int32_t v = static_cast<int32_t>(requantize(static_cast<float>(s) * m, lo, hi)) + ey.zero_point;
          const int64_t o = e.y_offset + i * N + j;
          if (yt == ActType::kU8) static_cast<uint8_t*>(y)[o] = static_cast<uint8_t>(v);
          else static_cast<uint16_t*>(y)[o] = static_cast<uint16_t>(v);
        }
      }
    }
  });
}

// graph interpreter run_matmul: y[i, j] = sum over p in order of a[i, p] * b[p, j], from 0.
void matmul_f32(const float* a, const float* b, int64_t M, int64_t K, int64_t N, const std::vector<MatmulBatch>& batches,
                float* y) {
  ThreadPool::global().parallel_for(static_cast<int64_t>(batches.size()), [&](int64_t begin, int64_t end) {
    for (int64_t bi = begin; bi < end; ++bi) {
      const MatmulBatch& e = batches[static_cast<size_t>(bi)];
      const float* pa = a + e.a_offset;
      const float* pb = b + e.b_offset;
      float* po = y + e.y_offset;
      std::fill(po, po + M * N, 0.0f);
      for (int64_t i = 0; i < M; ++i)
        for (int64_t p = 0; p < K; ++p) {
          const float av = pa[i * K + p];
          const float* brow = pb + p * N;
          float* orow = po + i * N;
          for (int64_t j = 0; j < N; ++j) orow[j] += av * brow[j];
        }
    }
  });
}

}  // namespace scalar

void matmul_q(const void* a, ActType at, const QParams& ea, const void* b, ActType bt, const QParams& eb, int64_t M,
              int64_t K, int64_t N, const std::vector<MatmulBatch>& batches, const QParams& ey, ActType yt, void* y) {
  if (M <= 0 || N <= 0 || batches.empty()) return;
  if (K < 0) throw_failure("kernels: matmul_q with K = {}", K);
  if (use_simd()) simd::matmul_q(a, at, ea, b, bt, eb, M, K, N, batches, ey, yt, y);
  else scalar::matmul_q(a, at, ea, b, bt, eb, M, K, N, batches, ey, yt, y);
}

void matmul_f32(const float* a, const float* b, int64_t M, int64_t K, int64_t N, const std::vector<MatmulBatch>& batches,
                float* y) {
  if (M <= 0 || N <= 0 || batches.empty()) return;
  if (use_simd()) simd::matmul_f32(a, b, M, K, N, batches, y);
  else scalar::matmul_f32(a, b, M, K, N, batches, y);
}

}  // namespace genai::kernels
