// One-row integer matmul whose b operand is concat(cache, new) read in place from its two parts
// (the decode attention: q·kᵀ with the parts along N, p·v with the parts along K), so the cache is
// never copied. Same arithmetic as kernels::matmul_q and the QDQ reference: exact sums (integers
// held in doubles: every product of a code difference and a code is below 2^33, every partial
// sum below 2^53; 16-bit a times 8-bit b: the HTP's accumulator, kernels::htp_accumulator),
// m = (s_a·s_b)/s_y, kernels::requantize. The sums are exact, so the result does not depend on how
// b is split.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/quantize.h"
#include "kernels/quantized_matmul.h"

namespace genai::kernels {

// One part of b: rows [p0, p0 + rows) of the K axis and columns [col0, col0 + cols) of N, stored
// row-major with `stride` elements per row and `per_batch` elements per b batch entry.
struct MatmulSegment {
  const void* data = nullptr;
  int64_t per_batch = 0, stride = 0, p0 = 0, rows = 0, col0 = 0, cols = 0;
};

// Work space per batch entry, in doubles: the row's code differences [K], the products [N], and
// for the HTP's accumulator (requantize.h) a row of ones [K] and b's column sums [N].
inline int64_t split_matmul_work(int64_t K, int64_t N) { return 2 * (K + N); }

// a: one row [1, K] per batch entry (a_offset), codes of type at on ea; b: the segments, covering
// [K, N] once, codes of type bt on eb, batch entry b_offset / (K·N); y: [1, N] per entry (y_offset).
// work: batches.size() · split_matmul_work(K, N) doubles. Entries run in parallel.
void split_matmul_q(const void* a, ActType at, const QParams& ea, std::span<const MatmulSegment> b, ActType bt,
                    const QParams& eb, int64_t K, int64_t N, const std::vector<MatmulBatch>& batches, const QParams& ey,
                    ActType yt, void* y, double* work);

}  // namespace genai::kernels
