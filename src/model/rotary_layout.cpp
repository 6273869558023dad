#include "model/rotary_layout.h"

#include <cstring>

#include "core/error.h"

namespace genai {
namespace {

// Rows move whole, so any element type keeps its stored bytes (a 16-bit checkpoint stays 16-bit).
Tensor permute_rows(const Tensor& w, int64_t n_heads, int64_t rotary_dims, bool to_half) {
  const Tensor& src = w;
  if (src.rank() < 1 || n_heads <= 0 || src.dim(0) % (2 * n_heads) != 0)
    throw_failure("internal: cannot permute rotary rows of {} into {} heads", shape_to_string(src.shape()), n_heads);
  const int64_t rows = src.dim(0), head_dim = rows / n_heads;
  const int64_t rd = rotary_dims > 0 ? rotary_dims : head_dim, half = rd / 2;
  if (rd > head_dim || rd % 2 != 0)
    throw_failure("internal: {} rotary dims in heads of {}", rd, head_dim);
  const int64_t row_len = rows > 0 ? src.numel() / rows * static_cast<int64_t>(dtype_size(src.dtype())) : 0;  // bytes
  Tensor out = Tensor::zeros(src.dtype(), src.shape());  // pass-through rows copied, rotary rows moved below
  if (src.numel() > 0) std::memcpy(out.mutable_raw(), src.raw(), src.nbytes());
  const auto* s = static_cast<const uint8_t*>(src.raw());
  auto* d = static_cast<uint8_t*>(out.mutable_raw());
  for (int64_t h = 0; h < n_heads; ++h)
    for (int64_t i = 0; i < half; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        const int64_t inter = h * head_dim + 2 * i + j, halfr = h * head_dim + j * half + i;
        const int64_t from = to_half ? inter : halfr, to = to_half ? halfr : inter;
        std::memcpy(d + to * row_len, s + from * row_len, static_cast<size_t>(row_len));
      }
  return out;
}

}  // namespace

Tensor interleaved_to_half_rows(const Tensor& w, int64_t n_heads, int64_t rotary_dims) {
  return permute_rows(w, n_heads, rotary_dims, true);
}
Tensor half_to_interleaved_rows(const Tensor& w, int64_t n_heads, int64_t rotary_dims) {
  return permute_rows(w, n_heads, rotary_dims, false);
}

}  // namespace genai
