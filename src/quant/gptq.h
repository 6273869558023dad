// GPTQ (Frantar et al., 2022): a linear layer's weights quantized one input column at a time,
// each column's rounding error spread over the columns not yet quantized through the inverse of
// H = X^T X (the Gram matrix of the layer's calibration inputs). That minimises the error the
// layer's output sees, ||X W^T - X Q^T||^2, column by column, where rounding each weight alone
// ignores how the inputs correlate; at 4 bits it is the difference between a usable model and
// not. The result is an ordinary WeightEncoding (codes and scales): programs and the QDQ
// reference use it as any other, exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quant/encoding.h"

namespace genai::quant {

// U with H^-1 = U^T U (the upper Cholesky factor of the inverse), for H = gram / rows plus
// damp x mean(diag) on the diagonal; columns no calibration input ever touched get H_ii = 1.
struct GptqFactor {
  int64_t n = 0;
  std::vector<float> u;         // [n * n], row-major, upper triangle
  std::vector<bool> dead;       // columns whose inputs were always 0
  std::vector<float> diagonal;  // diag(H) (the range search's importance)
};
// Failure when H is not positive definite even with the damping.
GptqFactor gptq_factor(const std::vector<double>& gram, int64_t rows, int64_t n, double damp = 0.01);

// Quantizes w [rows, cols] with `factor` (n == cols). Scales: per channel from the original row;
// per block when the column loop reaches the block, from the updated weights (so a block's scale
// sees the error its earlier columns pushed into it). `candidates` > 0: each scale by the weight
// range search with importance diag(H).
WeightEncoding gptq_quantize(const std::string& name, const float* w, int64_t rows, int64_t cols, QDType dtype,
                             int64_t block_size, const GptqFactor& factor, int64_t candidates = 0);

}  // namespace genai::quant
