// Internal: the column sums of split_matmul_q, acc[j] += Σ_p a[p]·b[p·stride + j] for j < cols:
// the scalar loop (the definition) and the vectorised build (split_matmul_simd.cpp, Highway
// dynamic dispatch). Every term and partial sum is an exact integer in a double, so both give the
// same result on every target.
#pragma once

#include <cstdint>

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

}  // namespace genai::kernels::split_simd
