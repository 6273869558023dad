// Internal: the column sums of split_matmul_q, acc[j] += Σ_p a[p]·b[p·stride + j] for j < cols:
// the scalar loop (the definition) and the vectorised build (split_matmul_simd.cpp, Highway
// dynamic dispatch). Every term and partial sum is an exact integer in a double, so both give the
// same result on every target.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/split_matmul.h"

namespace genai::kernels::split_simd {

template <typename T>
void accumulate_rows_scalar(const double* a, int64_t rows, const T* b, int64_t stride, int64_t cols, double* acc) {
  for (int64_t p = 0; p < rows; ++p) {
    const double av = a[p];
    const T* row = b + p * stride;
    for (int64_t j = 0; j < cols; ++j) acc[j] += av * static_cast<double>(row[j]);
  }
}

void accumulate_rows(const double* a, int64_t rows, const uint8_t* b, int64_t stride, int64_t cols, double* acc);
void accumulate_rows(const double* a, int64_t rows, const uint16_t* b, int64_t stride, int64_t cols, double* acc);

// The integer form of split_matmul_q for 8-bit b (simd_matmul.cpp: pair sums as matmul_q's, same
// bits): false when it does not apply (b not 8-bit, or no vectorised target), and the caller
// runs the double form.
bool split_matmul_q_int(const void* a, ActType at, const QParams& ea, std::span<const MatmulSegment> b, ActType bt,
                        const QParams& eb, int64_t K, int64_t N, const std::vector<MatmulBatch>& batches,
                        const QParams& ey, ActType yt, void* y);

}  // namespace genai::kernels::split_simd
