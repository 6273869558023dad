#include "kernels/packed_linear.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/float_arith.h"
#include "kernels/packed_layout.h"
#include "kernels/scalar_kernels.h"
#include "kernels/simd_kernels.h"
#include "kernels/requantize.h"

namespace genai::kernels {
namespace {

void check_bits(int bits, const char* what) {
  if (bits != 4 && bits != 8 && bits != 16) throw_failure("kernels: {}: weight width {} bits (valid: 4, 8, 16)", what, bits);
}

// Byte offset of step s (columns 2s, 2s+1) of group g for 8/16-bit weights.
int64_t step_offset(int64_t cols, int bits, int64_t g, int64_t s) {
  return g * layout::group_bytes(cols, bits) + s * 2 * layout::kGroup * bits / 8;
}

int16_t weight_at(const uint8_t* packed, int64_t cols, int bits, int64_t c, int64_t k) {
  const int64_t g = c / layout::kGroup, i = c % layout::kGroup;
  if (bits == 4) {
    const int64_t u = k / 4, r = k % 4, t = r % 2;
    const uint8_t byte = packed[g * layout::group_bytes(cols, 4) + u * 32 + 2 * i + t];
    const int nib = r < 2 ? (byte & 0x0f) : (byte >> 4);
    return static_cast<int16_t>(nib - 8);
  }
  const int64_t off = step_offset(cols, bits, g, k / 2) + (2 * i + k % 2) * bits / 8;
  if (bits == 8) return static_cast<int8_t>(packed[off]);
  return static_cast<int16_t>(static_cast<uint16_t>(packed[off] | (packed[off + 1] << 8)));
}

}  // namespace

size_t packed_linear_bytes(int64_t rows, int64_t cols, int bits) {
  check_bits(bits, "packed_linear_bytes");
  if (rows < 0 || cols < 0) throw_failure("kernels: packed_linear_bytes of a [{}, {}] weight", rows, cols);
  return static_cast<size_t>(layout::groups(rows) * layout::group_bytes(cols, bits));
}

void pack_linear_weights(const int16_t* q, int64_t rows, int64_t cols, int bits, uint8_t* out) {
  const size_t bytes = packed_linear_bytes(rows, cols, bits);
  const int64_t qmin = -(int64_t{1} << (bits - 1)), qmax = (int64_t{1} << (bits - 1)) - 1;
  for (int64_t c = 0; c < rows; ++c) {
    const int16_t* row = q + c * cols;
    int16_t lo = 0, hi = 0;
    for (int64_t k = 0; k < cols; ++k) {
      lo = std::min(lo, row[k]);
      hi = std::max(hi, row[k]);
    }
    if (lo >= qmin && hi <= qmax) continue;
    for (int64_t k = 0; k < cols; ++k)
      if (row[k] < qmin || row[k] > qmax)
        throw_failure("kernels: weight value {} at [{}, {}] is outside the {}-bit range [{}, {}]", row[k], c, k, bits,
                      qmin, qmax);
  }
  // Padding channels and columns hold 0: the byte 0, or two 4-bit zeros stored as 8 + 8.
  std::memset(out, bits == 4 ? 0x88 : 0, bytes);
  const int64_t gb = layout::group_bytes(cols, bits);
  for (int64_t c = 0; c < rows; ++c) {
    const int16_t* row = q + c * cols;
    const int64_t i = c % layout::kGroup;
    uint8_t* group = out + (c / layout::kGroup) * gb;
    if (bits == 8) {
      for (int64_t k = 0; k < cols; ++k)
        group[(k >> 1) * 32 + 2 * i + (k & 1)] = static_cast<uint8_t>(static_cast<int8_t>(row[k]));
    } else if (bits == 16) {
      for (int64_t k = 0; k < cols; ++k) {
        const auto u = static_cast<uint16_t>(row[k]);
        uint8_t* dst = group + (k >> 1) * 64 + (2 * i + (k & 1)) * 2;
        dst[0] = static_cast<uint8_t>(u & 0xff);
        dst[1] = static_cast<uint8_t>(u >> 8);
      }
    } else {
      for (int64_t k = 0; k < cols; ++k) {
        uint8_t& byte = group[(k >> 2) * 32 + 2 * i + (k & 1)];
        const auto nib = static_cast<uint8_t>(row[k] + 8);
        byte = static_cast<uint8_t>((k & 2) == 0 ? ((byte & 0xf0) | nib) : ((byte & 0x0f) | (nib << 4)));
      }
    }
  }
}

std::vector<int32_t> linear_block_sums(const int16_t* q, int64_t rows, int64_t cols, int64_t block_size) {
  if (block_size < 0 || (block_size > 0 && cols % block_size != 0))
    throw_failure("kernels: block size {} does not divide {} input columns", block_size, cols);
  const int64_t width = block_size > 0 ? block_size : cols, nb = block_size > 0 ? cols / block_size : 1;
  std::vector<int32_t> sums(static_cast<size_t>(rows * nb), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < nb; ++b) {
      int64_t s = 0;
      for (int64_t k = 0; k < width; ++k) s += q[r * cols + b * width + k];
      sums[static_cast<size_t>(r * nb + b)] = static_cast<int32_t>(s);
    }
  return sums;
}

size_t block_meta_bytes(int64_t rows, int64_t cols, int64_t block_size) {
  if (block_size <= 0 || cols % block_size != 0)
    throw_failure("kernels: block meta needs a block size dividing {} columns (got {})", cols, block_size);
  return static_cast<size_t>(layout::groups(rows) * (cols / block_size) * layout::kMetaBytes);
}

float PackedLinear::scale(int64_t c, int64_t b) const {
  if (scales || !block_meta) return scales[c * blocks() + b];
  float v;
  std::memcpy(&v, block_meta + ((c / layout::kGroup) * blocks() + b) * layout::kMetaBytes + (c % layout::kGroup) * 4, 4);
  return v;
}

void pack_block_meta(const float* scales, const int32_t* block_sums, int64_t rows, int64_t cols, int64_t block_size,
                     uint8_t* out) {
  const size_t bytes = block_meta_bytes(rows, cols, block_size);
  std::memset(out, 0, bytes);
  const int64_t nb = cols / block_size;
  for (int64_t c = 0; c < rows; ++c)
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* entry = out + ((c / layout::kGroup) * nb + b) * layout::kMetaBytes;
      const int64_t i = c % layout::kGroup;
      std::memcpy(entry + i * 4, &scales[c * nb + b], 4);
      std::memcpy(entry + (layout::kGroup + i) * 4, &block_sums[c * nb + b], 4);
    }
}

void unpack_linear_weights(const uint8_t* packed, int64_t rows, int64_t cols, int bits, int16_t* q) {
  check_bits(bits, "unpack_linear_weights");
  for (int64_t c = 0; c < rows; ++c)
    for (int64_t k = 0; k < cols; ++k) q[c * cols + k] = weight_at(packed, cols, bits, c, k);
}

namespace scalar {

// quant::qdq_linear on integer codes: exact int64 sum of (qx - zp) * qw per block (per-channel
// weights under 16-bit activations: as the HTP forms it, htp_accumulator), blocks folded in order
// in float, bias / scale_x, requantized with round half even and clamped.
void linear_q(const void* x, ActType xt, int64_t rows, const QParams& ex, const PackedLinear& w, const float* bias,
              const QParams& ey, ActType yt, void* y) {
  const int64_t n_in = w.cols, n_out = w.rows, nb = w.blocks(), width = w.block_size > 0 ? w.block_size : n_in;
  std::vector<int32_t> xi(static_cast<size_t>(rows * n_in));
  for (int64_t i = 0; i < rows * n_in; ++i) {
    const int32_t v = xt == ActType::kU8 ? static_cast<const uint8_t*>(x)[i] : static_cast<const uint16_t*>(x)[i];
    xi[static_cast<size_t>(i)] = v - ex.zero_point;
  }
  const float m = ex.scale / ey.scale;
  const float lo = static_cast<float>(ey.qmin - ey.zero_point), hi = static_cast<float>(ey.qmax - ey.zero_point);
  const bool htp_floor = w.block_size == 0 && htp_floors_accumulator(ex.qmax, w.bits);
  ThreadPool::global().parallel_for(
      n_out,
      [&](int64_t begin, int64_t end) {
        std::vector<int16_t> wr(static_cast<size_t>(n_in));
        std::vector<float> sc(static_cast<size_t>(nb));
        for (int64_t c = begin; c < end; ++c) {
          for (int64_t blk = 0; blk < nb; ++blk) sc[static_cast<size_t>(blk)] = w.scale(c, blk);
          int64_t wsum = 0;
          for (int64_t k = 0; k < n_in; ++k) {
            wr[static_cast<size_t>(k)] = weight_at(w.data, n_in, w.bits, c, k);
            wsum += wr[static_cast<size_t>(k)];
          }
          const float b = bias ? bias[c] / ex.scale : 0.0f;
          for (int64_t r = 0; r < rows; ++r) {
            const int32_t* xr = xi.data() + r * n_in;
            float t = 0.0f;
            for (int64_t blk = 0; blk < nb; ++blk) {
              int64_t acc = 0;
              for (int64_t k = blk * width; k < (blk + 1) * width; ++k)
                acc += static_cast<int64_t>(xr[k]) * wr[static_cast<size_t>(k)];
              if (htp_floor) acc = htp_accumulator(acc, wsum, ex.zero_point);
              t += static_cast<float>(acc) * sc[static_cast<size_t>(blk)];
            }
            if (bias) t += b;
            const int32_t v = static_cast<int32_t>(requantize(t * m, lo, hi)) + ey.zero_point;
            if (yt == ActType::kU8) static_cast<uint8_t*>(y)[r * n_out + c] = static_cast<uint8_t>(v);
            else static_cast<uint16_t*>(y)[r * n_out + c] = static_cast<uint16_t>(v);
          }
        }
      },
      8);
}

// The QDQ fp16 linear: float products summed in column order, plus the float16-rounded bias.
void linear_f16(const float* x, int64_t rows, const uint16_t* w, int64_t out_features, int64_t in_features,
                const float* bias, float* y) {
  ThreadPool::global().parallel_for(
      out_features,
      [&](int64_t begin, int64_t end) {
        std::vector<float> wr(static_cast<size_t>(in_features));
        for (int64_t c = begin; c < end; ++c) {
          for (int64_t k = 0; k < in_features; ++k) wr[static_cast<size_t>(k)] = f16_to_f32(w[c * in_features + k]);
          const float b = bias ? f16_to_f32(f32_to_f16(bias[c])) : 0.0f;
          for (int64_t r = 0; r < rows; ++r) {
            const float* xr = x + r * in_features;
            float s = 0.0f;
            for (int64_t k = 0; k < in_features; ++k) s += xr[k] * wr[static_cast<size_t>(k)];
            y[r * out_features + c] = s + b;
          }
        }
      },
      8);
}

void linear_f32(const float* x, int64_t rows, const float* w, int64_t out_features, int64_t in_features,
                const float* bias, float* y) {
  // Split over output features so each weight row is read once for all input rows.
  ThreadPool::global().parallel_for(
      out_features,
      [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c)
          for (int64_t r = 0; r < rows; ++r)
            y[r * out_features + c] = dot8_f32(x + r * in_features, w + c * in_features, in_features) + (bias ? bias[c] : 0.0f);
      },
      16);
}

}  // namespace scalar

namespace {

void check_linear(const PackedLinear& w, const QParams& ex, const QParams& ey) {
  check_bits(w.bits, "linear_q");
  const bool meta_only = w.block_size > 0 && w.block_meta;
  if (w.rows <= 0 || w.cols <= 0 || !w.data || (!w.scales && !meta_only))
    throw_failure("kernels: linear_q on an empty or unset weight [{}, {}]", w.rows, w.cols);
  if (w.block_size < 0 || (w.block_size > 0 && w.cols % w.block_size != 0))
    throw_failure("kernels: linear_q block size {} does not divide {} input columns", w.block_size, w.cols);
  if (!(ex.scale > 0) || !(ey.scale > 0)) throw_failure("kernels: linear_q with non-positive scale");
}

// The vectorised linear keeps block sums in int32 lanes: blocks of at most 128 columns (|sum| <
// 2^31 for any 16-bit activation and 8-bit weight), in whole steps of 4 columns; per-channel
// weights flush to exact doubles regularly; 16-bit weights only per channel.
bool linear_simd_ok(const PackedLinear& w) {
  if (!w.block_sums && !(w.block_size > 0 && w.block_meta)) return false;
  if (w.bits == 16) return w.block_size == 0;
  return w.block_size == 0 || (w.block_size % 4 == 0 && w.block_size <= 128);
}

}  // namespace

void linear_q(const void* x, ActType xt, int64_t rows, const QParams& ex, const PackedLinear& w, const float* bias,
              const QParams& ey, ActType yt, void* y) {
  if (rows <= 0) return;
  check_linear(w, ex, ey);
  if (use_simd() && linear_simd_ok(w)) simd::linear_q(x, xt, rows, ex, w, bias, ey, yt, y);
  else scalar::linear_q(x, xt, rows, ex, w, bias, ey, yt, y);
}

void linear_f16(const float* x, int64_t rows, const uint16_t* w, int64_t out_features, int64_t in_features,
                const float* bias, float* y) {
  if (rows <= 0 || out_features <= 0) return;
  if (use_simd()) simd::linear_f16(x, rows, w, out_features, in_features, bias, y);
  else scalar::linear_f16(x, rows, w, out_features, in_features, bias, y);
}

void linear_f32(const float* x, int64_t rows, const float* w, int64_t out_features, int64_t in_features,
                const float* bias, float* y) {
  if (rows <= 0 || out_features <= 0) return;
  if (use_simd()) simd::linear_f32(x, rows, w, out_features, in_features, bias, y);
  else scalar::linear_f32(x, rows, w, out_features, in_features, bias, y);
}

}  // namespace genai::kernels
