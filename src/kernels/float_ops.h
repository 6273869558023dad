// The non-linear ops, computed in float32 between dequantize and requantize (or on f16-rounded
// floats in the fp16 program). The scalar build computes exactly what the graph interpreter
// (src/graph/interpreter.cpp) computes, and the vectorised build the same bits: exp and the
// double sums of rms_norm and softmax follow float_arith.h lane by lane, every other step is one
// IEEE operation per element. So a quantized program matches the QDQ reference bit for bit in
// either kernel mode.
#pragma once

#include <cstdint>

namespace genai::kernels {

// x, y: [rows, dim]; weight [dim]; y may alias x.
void rms_norm(const float* x, int64_t rows, int64_t dim, const float* weight, float eps, float* y);
// LayerNorm (CodeGen): y = (x - mean) / sqrt(var + eps) * weight + bias per row, mean and
// variance in double; x, y: [rows, dim], y may alias x. Scalar in every mode (not on a hot path).
void layer_norm(const float* x, int64_t rows, int64_t dim, const float* weight, const float* bias, float eps, float* y);
// Softmax over the last axis of [rows, n], in place.
void softmax(float* x, int64_t rows, int64_t n);
// y = x * sigmoid(x), in place.
void silu(float* x, int64_t n);
// Gemma's GeGLU activation, GELU with tanh: y = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in
// place. One implementation (scalar) for every mode: it is not on a hot path.
void gelu_tanh(float* x, int64_t n);
void gelu(float* x, int64_t n);
// y = tanh(x), in place (Gemma 2's soft-capping: cap * tanh(x / cap)); scalar in every mode.
void tanh_inplace(float* x, int64_t n);
// HF rotate-half RoPE on x [heads, seq, head_dim] with tables cos, sin [seq, head_dim] shared by
// every head: y = x*cos + rotate_half(x)*sin. y may alias x.
void rope(const float* x, int64_t heads, int64_t seq, int64_t head_dim, const float* cos, const float* sin, float* y);
// Elementwise on equal-length rows: y = a + b, y = a * b (y may alias a or b).
void add(const float* a, const float* b, int64_t n, float* y);
void mul(const float* a, const float* b, int64_t n, float* y);

}  // namespace genai::kernels
