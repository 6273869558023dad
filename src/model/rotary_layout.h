// Row order of the q/k projections. Hugging Face rotates "halves": within each head, element i
// pairs with i + head_dim/2. Meta's checkpoints, llama2.c and llama-arch GGUF files rotate
// interleaved pairs (2i, 2i+1), so their q/k rows are stored permuted (llama.cpp's
// convert_hf_to_gguf applies this permutation with n_head for q and n_head_kv for k):
//
//     interleaved row  h*head_dim + 2*i + j   ==   rotate-half row  h*head_dim + j*head_dim/2 + i
//
// for head h, pair i < head_dim/2, j in {0, 1}. Rotating interleaved pairs of the permuted rows
// gives the same attention scores as rotating halves of the original rows.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace genai {

// float32 [n_heads*head_dim, ...] (weights or 1-D biases); returns a new owned tensor. With
// `rotary_dims` (partial rotary, GLM), only each head's leading rotary_dims rows are paired; the
// rest stay where they are. 0: the whole head.
Tensor interleaved_to_half_rows(const Tensor& w, int64_t n_heads, int64_t rotary_dims = 0);
Tensor half_to_interleaved_rows(const Tensor& w, int64_t n_heads, int64_t rotary_dims = 0);

}  // namespace genai
