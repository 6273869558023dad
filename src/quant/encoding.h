// Quantization encodings and the one quantize/dequantize arithmetic every quantized path uses
// (docs/quantization.md): q = clamp(round_half_to_even(x / scale) + zero_point, qmin, qmax),
// x = (q - zero_point) * scale, all in float32. fp16 "encodings" round to half precision instead.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"
#include "kernels/quantize.h"

namespace genai::quant {

// Element type of a quantized tensor. kF16 means "no integer encoding, round to float16".
enum class QDType : uint8_t { kU8, kU16, kI4, kI8, kI16, kF16 };
std::string_view qdtype_name(QDType t);  // "uint8", "uint16", "int4", "int8", "int16", "float16"
bool qdtype_from_name(std::string_view name, QDType* out);
int qdtype_bits(QDType t);
int64_t qdtype_min(QDType t);
int64_t qdtype_max(QDType t);
// Storage dtype of program I/O of this element type (int4 has none: Failure).
DType qdtype_storage(QDType t);

// Per-tensor activation encoding (asymmetric, unsigned types) or a float16 pass-through.
struct Encoding {
  QDType dtype = QDType::kU16;
  float scale = 1.0f;
  int32_t zero_point = 0;
  int64_t qmin = 0, qmax = 65535;
  bool is_float() const { return dtype == QDType::kF16; }
  bool operator==(const Encoding&) const = default;
};

// Asymmetric encoding covering [min(lo, 0), max(hi, 0)] (zero exactly representable). A
// degenerate range gets a tiny positive scale so quantize never divides by zero.
Encoding asymmetric_encoding(QDType dtype, float lo, float hi);
// Symmetric encoding of an unsigned type: zero point 2^(b-1) (128 for uint8), scale
// max(|lo|, |hi|) / (2^(b-1) - 1), so +-max are both codes. The HTP multiplies two activations
// natively only when the second one is symmetric 8-bit (docs/quantization.md, "HTP rules").
Encoding symmetric_encoding(QDType dtype, float lo, float hi);
Encoding float16_encoding();
// The kernels' view of an integer encoding, and an encoding of `dtype` from it.
kernels::QParams qparams(const Encoding& e);
Encoding encoding_of(QDType dtype, const kernels::QParams& p);
// A float constant of an integer program that the HTP receives as 16-bit codes (a norm's weight
// and bias): the asymmetric uint16 encoding of its range, and its values on that grid (what the
// HTP computes with; the QDQ reference, the lowering and the ONNX export all use these).
Encoding constant_encoding(const float* values, int64_t n);
std::vector<float> on_constant_grid(const float* values, int64_t n);

// The rounding rule and the clamp are kernels::round_half_even and kernels::requantize
// (kernels/requantize.h): q = requantize(x / scale, qmin - zp, qmax - zp) + zp.
int64_t quantize_value(float x, const Encoding& e);
// How an op's result is rounded onto its encoding: round half to even, except floor for rms_norm
// results (the HTP's RmsNorm; kernels::requantize_floor, docs/quantization.md "HTP rules").
enum class Rounding : uint8_t { kNearestEven, kFloor };
int64_t quantize_value(float x, const Encoding& e, Rounding rounding);
float dequantize_value(int64_t q, const Encoding& e);
// x -> dequantize(quantize(x)) (or the float16 round trip), element by element, in place.
void fake_quantize(float* data, int64_t n, const Encoding& e, Rounding rounding = Rounding::kNearestEven);
// Float16 round trip of one value (round to nearest even; beyond +-65504 becomes infinity).
float round_to_f16(float v);

// Symmetric weight encoding of a 2-D weight [rows (output channels), cols (input)]: one scale per
// row (block_size == 0) or per row and block of `block_size` input columns. zero point 0,
// q in [qmin, qmax] = [-2^(b-1), 2^(b-1)-1], scale = max|w| / qmax over the channel/block.
struct WeightEncoding {
  QDType dtype = QDType::kI8;
  int64_t rows = 0, cols = 0;
  int64_t block_size = 0;       // 0: per channel
  std::vector<float> scales;    // [rows * blocks()]
  // The codes [rows * cols] when they are not the weights rounded on `scales` (GPTQ's, an
  // encodings file's); empty otherwise (and for float16): weight_codes rounds them from the
  // float weights where a lowering or a reference reads them, so no copy of every weight's codes
  // lives from quantization to the program.
  std::vector<int16_t> stored_codes;
  int64_t blocks() const { return block_size > 0 ? cols / block_size : 1; }
  float scale(int64_t row, int64_t col) const {
    return scales[static_cast<size_t>(row * blocks() + (block_size > 0 ? col / block_size : 0))];
  }
  bool is_float() const { return dtype == QDType::kF16; }
};

// The weight range search (upstream's SeqMSE idea, per channel or block instead of per tensor):
// each channel's (block's) scale is max|w| / qmax times the factor c that minimises the error the
// layer's output sees, sum_k h_k (w_k - q_k(c))^2 with h_k the mean square of input column k on
// the calibration text (the diagonal of X^T X / rows). Candidates: c = 1/N, 2/N, ..., 1, then N
// between the best one's neighbours (upstream's coarse and fine sweeps).
struct WeightSearch {
  const float* importance = nullptr;  // [cols]; null: no search (4-bit weights keep the weight-MSE shrink)
  int64_t candidates = 0;             // N
};

// The scale of one channel's (block's) n weights: max|w| / qmax, the WeightSearch's choice when
// `importance` and candidates are given, else for 4-bit weights the shrink (1, 0.97, ..., 0.70)
// of least squared weight error; 1 for all-zero weights.
float weight_scale(const float* w, int64_t n, QDType dtype, const float* importance = nullptr, int64_t candidates = 0);
// InputError naming `name` when block_size does not divide cols; Failure for a non-integer dtype.
void check_weight_format(const std::string& name, int64_t cols, QDType dtype, int64_t block_size);

// Quantizes `w` ([rows, cols] float32). InputError naming `name` when block_size does not
// divide cols; dtype must be int4, int8, int16 or float16.
WeightEncoding quantize_weight(const std::string& name, const float* w, int64_t rows, int64_t cols, QDType dtype,
                               int64_t block_size, const WeightSearch& search = {});
// The codes of rows [r0, r1) of a weight quantized as `e`, given those rows' float32 values `w`
// ([r1 - r0, cols]): its stored codes, or each value rounded on its channel's (block's) scale
// exactly as quantize_weight rounds. Serial: callers split a weight into row blocks.
void weight_codes(const WeightEncoding& e, const float* w, int64_t r0, int64_t r1, int16_t* out);
// The same from the stored weight (float32, float16 or bfloat16: converted a block at a time).
void weight_codes(const WeightEncoding& e, const Tensor& weight, int64_t r0, int64_t r1, int16_t* out);
// Every code of the weight, [rows * cols], computed in parallel.
std::vector<int16_t> weight_codes(const WeightEncoding& e, const Tensor& weight);
// The float weights the QDQ reference computes with: q * scale (or the float16 round trip of w).
std::vector<float> dequantize_weight(const WeightEncoding& e, const float* original);

}  // namespace genai::quant
