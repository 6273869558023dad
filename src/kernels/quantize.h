// Moving between float32 and quantized activations with the one arithmetic of
// docs/quantization.md: q = clamp(round_half_even(x / scale) + zero_point, qmin, qmax),
// x = (q - zero_point) * scale (float32, in that order).
#pragma once

#include <cstdint>

namespace genai::kernels {

// Storage type of a quantized activation.
enum class ActType : uint8_t { kU8, kU16 };

struct QParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
  int32_t qmin = 0, qmax = 65535;
};

// The stored code of element i of a quantized activation buffer.
inline int32_t code_at(const void* p, ActType t, int64_t i) {
  return t == ActType::kU8 ? static_cast<const uint8_t*>(p)[i] : static_cast<const uint16_t*>(p)[i];
}

void quantize(const float* x, int64_t n, const QParams& p, ActType t, void* q);
// The same with floor instead of round half to even (kernels::requantize_floor): rms_norm results,
// as the HTP rounds them.
void quantize_floor(const float* x, int64_t n, const QParams& p, ActType t, void* q);
void dequantize(const void* q, ActType t, int64_t n, const QParams& p, float* x);
// Float16 round trip in place (round to nearest even; beyond +-65504 becomes infinity): the fp16
// program's "quantization".
void round_to_f16(float* x, int64_t n);
// IEEE half bits to float32 (exact): a 16-bit checkpoint's weights where an op reads them.
void widen_f16(const uint16_t* h, int64_t n, float* x);
// The weight quantizer's scale search: errs[k] = sum over i in order of d * d, d = requantize(w[i] /
// scales[k], qmin, qmax) * scales[k] - w[i] (symmetric codes, float32). The vectorised build puts
// one candidate scale in each lane, so every sum is the scalar build's, bit for bit.
void shrink_errors(const float* w, int64_t n, const float* scales, int64_t m, float qmin, float qmax, float* errs);

}  // namespace genai::kernels
