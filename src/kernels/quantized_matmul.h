// Batched integer matmul for attention (q.k^T, p.v): per batch entry, y[i, j] = requantize(
// sum_p (qa[i,p] - zp_a) * (qb[p,j] - zp_b)) with m = scale_a * scale_b / scale_y, exactly as the
// QDQ reference (exact accumulation, or the HTP's floored one for 16-bit x 8-bit codes; round half
// to even, clamp). Batch entries address their
// operands through offsets so broadcast (GQA) needs no copies.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/quantize.h"

namespace genai::kernels {

struct MatmulBatch {
  int64_t a_offset = 0;  // elements from a to this entry's [M, K] matrix
  int64_t b_offset = 0;  // elements from b to this entry's [K, N] matrix
  int64_t y_offset = 0;  // elements from y to this entry's [M, N] matrix
};

// The width of b's codes for htp_floors_accumulator (requantize.h): 8 bits when its range is.
inline int matmul_operand_bits(const QParams& eb) { return eb.qmax - eb.qmin <= 255 ? 8 : 16; }

// a: row-major [M, K] matrices of type at on ea; b: row-major [K, N] of type bt on eb.
void matmul_q(const void* a, ActType at, const QParams& ea, const void* b, ActType bt, const QParams& eb, int64_t M,
              int64_t K, int64_t N, const std::vector<MatmulBatch>& batches, const QParams& ey, ActType yt, void* y);

// Float matmul (fp16 program; inputs already f16-rounded floats), same addressing.
void matmul_f32(const float* a, const float* b, int64_t M, int64_t K, int64_t N, const std::vector<MatmulBatch>& batches,
                float* y);

}  // namespace genai::kernels
