// Linear layers with quantized weights: y[r, c] = sum_k x[r, k] * w[c, k] (+ bias[c]).
// Integer path (htp): activations u8/u16 on per-tensor encodings, weights int8 or int4 symmetric,
// per output channel or per block of input columns. The result equals quant::qdq_linear bit for
// bit: the exact integer accumulation of (qx - zp_x) * qw per block (for per-channel 8/4-bit
// weights under 16-bit activations, the HTP's floored accumulator, requantize.h), t = sum_blk float(acc) *
// scale_blk (blocks in order), t += bias[c] / scale_x, requantized by m = scale_x / scale_y with
// round half to even and clamped. Threads split output channels (ThreadPool::global()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/quantize.h"

namespace genai::kernels {

// Any rows and cols (tails handled); block_size divides cols. The vectorised build takes 4- and
// 8-bit weights per channel or in blocks of 4..128 columns (multiples of 4), and 16-bit weights
// per channel, with block_sums set; anything else runs the scalar build (same result).
// Weights as the kernels read them. The byte layout of `data` belongs to pack_linear_weights;
// everything else is plain arrays. All pointers stay owned by the caller (normally a mapped .pte).
struct PackedLinear {
  int64_t rows = 0;        // output channels
  int64_t cols = 0;        // input channels
  int bits = 8;            // 8 or 4; 16 (16a16w, vectorised per channel only)
  int64_t block_size = 0;  // 0: one scale per row; else per row and block of block_size columns
  const uint8_t* data = nullptr;       // packed_linear_bytes(rows, cols, bits) bytes
  const float* scales = nullptr;       // [rows * blocks]
  const int32_t* block_sums = nullptr; // [rows * blocks]: sum of the quantized weights per block
  // Block-wise weights: scales and block sums regrouped by pack_block_meta, read by the
  // vectorised kernels with plain loads instead of strided gathers (decode speed). A block-wise
  // weight may carry only this form (scales and block_sums null: one copy of the metadata, what
  // our lowering writes); null: the kernels use scales / block_sums.
  const uint8_t* block_meta = nullptr;
  int64_t blocks() const { return block_size > 0 ? cols / block_size : 1; }
  // Channel c's scale in block b, from whichever form the weight carries.
  float scale(int64_t c, int64_t b) const;
};

size_t packed_linear_bytes(int64_t rows, int64_t cols, int bits);
// q: [rows, cols] quantized values in [-2^(bits-1), 2^(bits-1)-1]. Deterministic.
void pack_linear_weights(const int16_t* q, int64_t rows, int64_t cols, int bits, uint8_t* out);
std::vector<int32_t> linear_block_sums(const int16_t* q, int64_t rows, int64_t cols, int64_t block_size);
// The optional block_meta companion of block-wise weights (block_size > 0): per group of 16
// output channels and per block, 16 float scales then 16 int32 block sums (zeros past `rows`),
// little endian. Deterministic.
size_t block_meta_bytes(int64_t rows, int64_t cols, int64_t block_size);
void pack_block_meta(const float* scales, const int32_t* block_sums, int64_t rows, int64_t cols, int64_t block_size,
                     uint8_t* out);
// Inverse of pack_linear_weights (tests, inspect).
void unpack_linear_weights(const uint8_t* packed, int64_t rows, int64_t cols, int bits, int16_t* q);

// x: [rows, w.cols] of type xt on ex; y: [rows, w.rows] of type yt on ey; bias may be null.
void linear_q(const void* x, ActType xt, int64_t rows, const QParams& ex, const PackedLinear& w, const float* bias,
              const QParams& ey, ActType yt, void* y);

// Float16 weights (fp16 program): x, y float32; w [rows, cols] IEEE half bits; y = x . w^T + bias,
// accumulated in float32 (callers round y to f16 afterwards).
void linear_f16(const float* x, int64_t rows, const uint16_t* w, int64_t out_features, int64_t in_features,
                const float* bias, float* y);

// Float32 weights (the float reference): y = x . w^T + bias with kernels::dot8_f32's order of
// operations (float_arith.h), the same bits from the scalar and every vector build.
void linear_f32(const float* x, int64_t rows, const float* w, int64_t out_features, int64_t in_features,
                const float* bias, float* y);

}  // namespace genai::kernels
