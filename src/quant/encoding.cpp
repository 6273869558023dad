#include "quant/encoding.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/quantize.h"
#include "kernels/requantize.h"
#include "model/weights.h"

namespace genai::quant {

using kernels::requantize;
using kernels::round_half_even;

std::string_view qdtype_name(QDType t) {
  switch (t) {
    case QDType::kU8: return "uint8";
    case QDType::kU16: return "uint16";
    case QDType::kI4: return "int4";
    case QDType::kI8: return "int8";
    case QDType::kI16: return "int16";
    case QDType::kF16: return "float16";
  }
  return "?";
}

bool qdtype_from_name(std::string_view name, QDType* out) {
  for (QDType t : {QDType::kU8, QDType::kU16, QDType::kI4, QDType::kI8, QDType::kI16, QDType::kF16})
    if (qdtype_name(t) == name) {
      *out = t;
      return true;
    }
  return false;
}

int qdtype_bits(QDType t) {
  switch (t) {
    case QDType::kU8: case QDType::kI8: return 8;
    case QDType::kU16: case QDType::kI16: case QDType::kF16: return 16;
    case QDType::kI4: return 4;
  }
  return 0;
}

int64_t qdtype_min(QDType t) {
  switch (t) {
    case QDType::kU8: case QDType::kU16: case QDType::kF16: return 0;
    case QDType::kI4: return -8;
    case QDType::kI8: return -128;
    case QDType::kI16: return -32768;
  }
  return 0;
}

int64_t qdtype_max(QDType t) {
  switch (t) {
    case QDType::kU8: return 255;
    case QDType::kU16: return 65535;
    case QDType::kI4: return 7;
    case QDType::kI8: return 127;
    case QDType::kI16: return 32767;
    case QDType::kF16: return 0;
  }
  return 0;
}

DType qdtype_storage(QDType t) {
  switch (t) {
    case QDType::kU8: return DType::kU8;
    case QDType::kU16: return DType::kU16;
    case QDType::kI8: return DType::kI8;
    case QDType::kI16: return DType::kI16;
    case QDType::kF16: return DType::kF16;
    case QDType::kI4: break;
  }
  throw_failure("quant: int4 has no program I/O storage type");
}

Encoding asymmetric_encoding(QDType dtype, float lo, float hi) {
  if (dtype == QDType::kF16) return float16_encoding();
  Encoding e;
  e.dtype = dtype;
  e.qmin = qdtype_min(dtype);
  e.qmax = qdtype_max(dtype);
  lo = std::min(lo, 0.0f);
  hi = std::max(hi, 0.0f);
  if (!std::isfinite(lo) || !std::isfinite(hi)) throw_failure("quant: non-finite calibration range [{}, {}]", lo, hi);
  const float levels = static_cast<float>(e.qmax - e.qmin);
  e.scale = std::max((hi - lo) / levels, 1e-9f);
  const float zp = static_cast<float>(e.qmin) - round_half_even(lo / e.scale);
  e.zero_point = static_cast<int32_t>(std::clamp<float>(zp, static_cast<float>(e.qmin), static_cast<float>(e.qmax)));
  return e;
}

kernels::QParams qparams(const Encoding& e) {
  return {e.scale, e.zero_point, static_cast<int32_t>(e.qmin), static_cast<int32_t>(e.qmax)};
}

Encoding encoding_of(QDType dtype, const kernels::QParams& p) {
  Encoding e;
  e.dtype = dtype;
  e.scale = p.scale;
  e.zero_point = p.zero_point;
  e.qmin = p.qmin;
  e.qmax = p.qmax;
  return e;
}

Encoding symmetric_encoding(QDType dtype, float lo, float hi) {
  if (dtype == QDType::kF16) return float16_encoding();
  if (qdtype_min(dtype) != 0) throw_failure("quant: symmetric activation encodings are unsigned, not {}", qdtype_name(dtype));
  if (!std::isfinite(lo) || !std::isfinite(hi)) throw_failure("quant: non-finite calibration range [{}, {}]", lo, hi);
  Encoding e;
  e.dtype = dtype;
  e.qmin = qdtype_min(dtype);
  e.qmax = qdtype_max(dtype);
  e.zero_point = static_cast<int32_t>((e.qmax + 1) / 2);
  const float m = std::max(std::fabs(lo), std::fabs(hi));
  e.scale = std::max(m / static_cast<float>(e.zero_point - 1), 1e-9f);
  return e;
}

Encoding float16_encoding() {
  Encoding e;
  e.dtype = QDType::kF16;
  e.scale = 1.0f;
  e.zero_point = 0;
  e.qmin = e.qmax = 0;
  return e;
}

int64_t quantize_value(float x, const Encoding& e) {
  const float lo = static_cast<float>(e.qmin - e.zero_point), hi = static_cast<float>(e.qmax - e.zero_point);
  return static_cast<int64_t>(requantize(x / e.scale, lo, hi)) + e.zero_point;
}

int64_t quantize_value(float x, const Encoding& e, Rounding rounding) {
  if (rounding == Rounding::kNearestEven) return quantize_value(x, e);
  const float lo = static_cast<float>(e.qmin - e.zero_point), hi = static_cast<float>(e.qmax - e.zero_point);
  return static_cast<int64_t>(kernels::requantize_floor(x / e.scale, lo, hi)) + e.zero_point;
}

float dequantize_value(int64_t q, const Encoding& e) { return static_cast<float>(q - e.zero_point) * e.scale; }

float round_to_f16(float v) { return f16_to_f32(f32_to_f16(v)); }

void fake_quantize(float* data, int64_t n, const Encoding& e, Rounding rounding) {
  if (e.is_float()) {
    for (int64_t i = 0; i < n; ++i) data[i] = round_to_f16(data[i]);
    return;
  }
  for (int64_t i = 0; i < n; ++i) data[i] = dequantize_value(quantize_value(data[i], e, rounding), e);
}

namespace {

// sum_i h_i (q_i s - w_i)^2 over one channel's block (h == null: unweighted).
float weighted_error(const float* w, const float* h, int64_t n, float s, float qmin, float qmax) {
  float err = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float d = requantize(w[i] / s, qmin, qmax) * s - w[i];
    err += (h ? h[i] : 1.0f) * d * d;
  }
  return err;
}

// The factor of max|w| / qmax with the least weighted error: the coarse sweep 1/N..1, then N
// factors between the best one's neighbours.
float searched_scale(const float* w, const float* h, int64_t n, float base, int64_t candidates, float qmin, float qmax) {
  const float step = 1.0f / static_cast<float>(candidates);
  float best_c = 1.0f, best = weighted_error(w, h, n, base, qmin, qmax);
  auto consider = [&](float c) {
    const float e = weighted_error(w, h, n, base * c, qmin, qmax);
    if (e < best) best = e, best_c = c;
  };
  for (int64_t k = 1; k < candidates; ++k) consider(step * static_cast<float>(k));
  const float lo = std::max(best_c - step, 0.001f), hi = std::min(best_c + step, 1.0f);
  for (int64_t k = 0; k < candidates; ++k)
    consider(lo + (hi - lo) * static_cast<float>(k) / static_cast<float>(std::max<int64_t>(candidates - 1, 1)));
  return base * best_c;
}

}  // namespace

float weight_scale(const float* w, int64_t n, QDType dtype, const float* importance, int64_t candidates) {
  const float qmin = static_cast<float>(qdtype_min(dtype)), qmax = static_cast<float>(qdtype_max(dtype));
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(w[i]));
  if (!(amax > 0.0f)) return 1.0f;
  const float scale = amax / qmax;
  if (importance && candidates > 0) return searched_scale(w, importance, n, scale, candidates, qmin, qmax);
  // 4-bit grids are coarse enough that shrinking the scale below max|w| / qmax (clipping the
  // largest values, using -8 too) lowers the block's squared error; search a few shrinks.
  if (qdtype_bits(dtype) > 4) return scale;
  constexpr int kShrinks = 11;
  float shrunk[kShrinks], errs[kShrinks];
  for (int k = 0; k < kShrinks; ++k) shrunk[k] = scale * (1.0f - 0.03f * static_cast<float>(k));
  kernels::shrink_errors(w, n, shrunk, kShrinks, qmin, qmax, errs);  // weighted_error's sums, all at once
  float best = -1.0f, best_scale = scale;
  for (int k = 0; k < kShrinks; ++k)
    if (best < 0.0f || errs[k] < best) {
      best = errs[k];
      best_scale = shrunk[k];
    }
  return best_scale;
}

void check_weight_format(const std::string& name, int64_t cols, QDType dtype, int64_t block_size) {
  if (dtype != QDType::kI4 && dtype != QDType::kI8 && dtype != QDType::kI16)
    throw_failure("quant: weight {} dtype {} (weights are int4, int8, int16 or float16)", name, qdtype_name(dtype));
  if (block_size < 0 || (block_size > 0 && cols % block_size != 0))
    throw_input_error("quant: weight {} has {} input columns, not a multiple of the block size {}", name, cols,
                      block_size);
}

WeightEncoding quantize_weight(const std::string& name, const float* w, int64_t rows, int64_t cols, QDType dtype,
                               int64_t block_size, const WeightSearch& ws) {
  WeightEncoding e;
  e.dtype = dtype;
  e.rows = rows;
  e.cols = cols;
  if (dtype == QDType::kF16) return e;
  check_weight_format(name, cols, dtype, block_size);
  e.block_size = block_size;
  const int64_t nb = e.blocks(), width = block_size > 0 ? block_size : cols;
  e.scales.resize(static_cast<size_t>(rows * nb));
  ThreadPool::global().parallel_for(
      rows,
      [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t b = 0; b < nb; ++b)
            e.scales[static_cast<size_t>(r * nb + b)] = weight_scale(
                w + r * cols + b * width, width, dtype, ws.importance ? ws.importance + b * width : nullptr, ws.candidates);
      },
      16);
  return e;
}

void weight_codes(const WeightEncoding& e, const float* w, int64_t r0, int64_t r1, int16_t* out) {
  if (e.is_float()) throw_failure("quant: codes of a float16 weight");
  if (r0 < 0 || r1 < r0 || r1 > e.rows) throw_failure("quant: rows [{}, {}) of a weight of {} rows", r0, r1, e.rows);
  const int64_t n = (r1 - r0) * e.cols;
  if (!e.stored_codes.empty()) {
    std::copy_n(e.stored_codes.data() + r0 * e.cols, n, out);
    return;
  }
  const int64_t nb = e.blocks(), width = e.block_size > 0 ? e.block_size : e.cols;
  // The activations' quantize with the range shifted to start at 0 (zero point -qmin): the same
  // division, rounding, clamp and NaN -> 0, vectorised; the shift is taken back after.
  const auto qlo = static_cast<int32_t>(qdtype_min(e.dtype)), qhi = static_cast<int32_t>(qdtype_max(e.dtype));
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t b = 0; b < nb; ++b) {
      const kernels::QParams p{e.scales[static_cast<size_t>(r * nb + b)], -qlo, 0, qhi - qlo};
      int16_t* dst = out + (r - r0) * e.cols + b * width;
      auto* shifted = reinterpret_cast<uint16_t*>(dst);  // the unsigned view of the same storage
      kernels::quantize(w + (r - r0) * e.cols + b * width, width, p, kernels::ActType::kU16, shifted);
      for (int64_t i = 0; i < width; ++i) dst[i] = static_cast<int16_t>(static_cast<int32_t>(shifted[i]) + qlo);
    }
}

void weight_codes(const WeightEncoding& e, const Tensor& weight, int64_t r0, int64_t r1, int16_t* out) {
  if (weight.rank() != 2 || weight.dim(0) != e.rows || weight.dim(1) != e.cols)
    throw_failure("quant: a weight of shape {} for an encoding of [{}, {}]", shape_to_string(weight.shape()), e.rows, e.cols);
  if (!e.stored_codes.empty()) return weight_codes(e, nullptr, r0, r1, out);
  constexpr int64_t kBlockRows = 64;  // the float32 rows converted at a time
  std::vector<float> f(static_cast<size_t>(std::min(kBlockRows, r1 - r0) * e.cols));
  for (int64_t b = r0; b < r1; b += kBlockRows) {
    const int64_t end = std::min(r1, b + kBlockRows);
    widen_to_f32(weight, b * e.cols, (end - b) * e.cols, f.data());
    weight_codes(e, f.data(), b, end, out + (b - r0) * e.cols);
  }
}

std::vector<int16_t> weight_codes(const WeightEncoding& e, const Tensor& weight) {
  std::vector<int16_t> out(static_cast<size_t>(e.rows * e.cols));
  ThreadPool::global().parallel_for(
      e.rows, [&](int64_t r0, int64_t r1) { weight_codes(e, weight, r0, r1, out.data() + r0 * e.cols); }, 64);
  return out;
}

std::vector<float> dequantize_weight(const WeightEncoding& e, const float* original) {
  std::vector<float> out(static_cast<size_t>(e.rows * e.cols));
  if (e.is_float()) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = round_to_f16(original[i]);
    return out;
  }
  std::vector<int16_t> q(out.size());
  ThreadPool::global().parallel_for(
      e.rows, [&](int64_t r0, int64_t r1) { weight_codes(e, original + r0 * e.cols, r0, r1, q.data() + r0 * e.cols); }, 64);
  for (int64_t r = 0; r < e.rows; ++r)
    for (int64_t c = 0; c < e.cols; ++c)
      out[static_cast<size_t>(r * e.cols + c)] = static_cast<float>(q[static_cast<size_t>(r * e.cols + c)]) * e.scale(r, c);
  return out;
}

Encoding constant_encoding(const float* values, int64_t n) {
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < n; ++i) lo = std::min(lo, values[i]), hi = std::max(hi, values[i]);
  return asymmetric_encoding(QDType::kU16, lo, hi);
}

std::vector<float> on_constant_grid(const float* values, int64_t n) {
  const Encoding e = constant_encoding(values, n);
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = dequantize_value(quantize_value(values[i], e), e);
  return out;
}

}  // namespace genai::quant
