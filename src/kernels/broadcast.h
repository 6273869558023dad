// Numpy broadcasting strides, shared by every op that reads operands of different shapes
// (elementwise add/mul, batched matmul) in the interpreter, the QDQ reference and the backends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace genai::kernels {

// Row-major element strides of `shape` (`rank` axes) seen as a tensor of `out_rank` >= rank axes
// under numpy broadcasting: the missing leading axes and every size-1 axis get stride 0. Writes
// out_rank values to `strides`.
inline void broadcast_strides(const int64_t* shape, size_t rank, size_t out_rank, int64_t* strides) {
  for (size_t o = 0; o < out_rank - rank; ++o) strides[o] = 0;
  int64_t s = 1;
  for (size_t i = rank; i-- > 0;) {
    strides[i + (out_rank - rank)] = shape[i] == 1 ? 0 : s;
    s *= shape[i];
  }
}

inline std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& shape, size_t out_rank) {
  std::vector<int64_t> strides(out_rank, 0);
  broadcast_strides(shape.data(), shape.size(), out_rank, strides.data());
  return strides;
}

// Calls fn(i, a_offset, b_offset) for every element i of a row-major result with `rank` dims,
// walking each operand by its broadcast strides (as broadcast_strides gives them).
template <typename Fn>
void for_each_broadcast(size_t rank, const int64_t* dims, const int64_t* stride_a, const int64_t* stride_b, Fn&& fn) {
  int64_t n = 1;
  for (size_t d = 0; d < rank; ++d) n *= dims[d];
  std::vector<int64_t> idx(rank, 0);
  int64_t oa = 0, ob = 0;
  for (int64_t i = 0; i < n; ++i) {
    fn(i, oa, ob);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < dims[d]) {
        oa += stride_a[d];
        ob += stride_b[d];
        break;
      }
      oa -= stride_a[d] * (dims[d] - 1);
      ob -= stride_b[d] * (dims[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace genai::kernels
