// Writing GGUF v3 files: metadata in insertion order, tensors in insertion order at aligned
// offsets, zero padding. Same calls give the same bytes; the file is written atomically.
// Tensor bytes are produced one tensor at a time while writing, so a writer of a large model
// holds at most one converted tensor in memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "formats/ggml_types.h"
#include "formats/gguf_value.h"

namespace genai {

class GgufWriter {
 public:
  using Producer = std::function<std::vector<uint8_t>()>;

  explicit GgufWriter(uint64_t alignment = 32);

  // Sets a metadata key; a second set of the same key replaces the value in place.
  void set(const std::string& key, GgufValue value);
  // `shape` is row-major (outermost first); the innermost dimension must be a multiple of the
  // type's block size. `produce` must return exactly ggml_nbytes(type, numel) bytes.
  void add_tensor(const std::string& name, GgmlType type, const Shape& shape, Producer produce);
  void add_tensor(const std::string& name, GgmlType type, const Shape& shape, std::vector<uint8_t> bytes);
  // Convenience: float32 data stored as `type` (quantized with ggml_quantize).
  void add_tensor_f32(const std::string& name, GgmlType type, const Shape& shape, std::vector<float> values);

  void write(const std::filesystem::path& path) const;

 private:
  struct PendingTensor {
    std::string name;
    GgmlType type;
    Shape shape;
    uint64_t nbytes;
    Producer produce;
  };
  uint64_t alignment_;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<PendingTensor> tensors_;
};

// Bytes of `values` stored as `type` (any type ggml_can_quantize accepts).
std::vector<uint8_t> ggml_encode(GgmlType type, const float* values, int64_t n);

}  // namespace genai
