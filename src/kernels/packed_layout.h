// Internal: the byte layout of packed linear weights (pack_linear_weights), shared by the scalar
// and vectorised kernels. Output channels come in groups of 16 (zero rows pad the last group);
// input columns are padded with zeros to a multiple of 4. Inside a group, columns advance in
// pairs ("steps"); one step holds, for each of the 16 channels i, the two weights of columns
// (2s, 2s+1) next to each other: lane pair (2i, 2i+1). That is the operand order of a pairwise
// multiply-add (vpmaddwd / vpdpwssd): one broadcast pair of activations times one step of
// weights accumulates 16 channels at once, and no horizontal sums are ever needed.
//   8 bits: one step = 32 int8.   16 bits: one step = 32 int16 (little endian).
//   4 bits: two steps share 32 bytes: byte 2i+t holds step 2u in its low nibble and step 2u+1
//           in its high nibble, each stored as q + 8 (0..15), like ggml's Q4_0 halves.
#pragma once

#include <cstdint>

namespace genai::kernels::layout {

inline constexpr int64_t kGroup = 16;      // output channels per group
inline constexpr int64_t kColAlign = 4;    // input columns are padded to a multiple of this

// block_meta: per group and block, 16 float scales then 16 int32 block sums.
inline constexpr int64_t kMetaBytes = kGroup * 8;

inline int64_t padded_rows(int64_t rows) { return (rows + kGroup - 1) / kGroup * kGroup; }
inline int64_t padded_cols(int64_t cols) { return (cols + kColAlign - 1) / kColAlign * kColAlign; }
inline int64_t groups(int64_t rows) { return (rows + kGroup - 1) / kGroup; }
// Bytes of one group (16 channels x padded cols).
inline int64_t group_bytes(int64_t cols, int bits) { return kGroup * padded_cols(cols) * bits / 8; }

}  // namespace genai::kernels::layout
