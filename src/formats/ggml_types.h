// ggml tensor element types that GGUF files store, their block layouts, and conversion to and
// from float32. Block layouts follow ggml's published definitions (docs/gguf.md, ggml-common.h):
// a block of `block_size` elements occupies `type_size` bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace genai {

enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ8_0 = 8,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kBF16 = 30,
};

struct GgmlTypeInfo {
  int64_t block_size;  // elements per block
  int64_t type_size;   // bytes per block
  std::string_view name;
};

// The supported type with this raw id, or nullopt (unsupported or unknown).
std::optional<GgmlType> ggml_type_from_id(uint32_t id);
const GgmlTypeInfo& ggml_type_info(GgmlType t);
std::string_view ggml_type_name(GgmlType t);
// Name for messages, also for ids we do not support ("Q5_0", "IQ2_XS", "id 99").
std::string ggml_type_id_name(uint32_t id);
// Type by name ("f32", "Q8_0", case-insensitive) or nullopt.
std::optional<GgmlType> ggml_type_from_name(std::string_view name);
// Names of every supported type, for error messages.
std::string ggml_supported_type_names();

// Bytes taken by `n` elements; n must be a multiple of the block size (checked by callers).
uint64_t ggml_nbytes(GgmlType t, uint64_t n);

// float32 values of `n` elements (n a multiple of the block size) stored at `src`.
void ggml_dequantize(GgmlType t, const uint8_t* src, float* dst, int64_t n);
// Stores `n` floats as type t. Supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1, matching ggml's
// reference (round-to-nearest) quantizers bit for bit. Throws Failure for other types.
void ggml_quantize(GgmlType t, const float* src, uint8_t* dst, int64_t n);
bool ggml_can_quantize(GgmlType t);

}  // namespace genai
