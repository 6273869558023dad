// Reading GGUF (v2/v3) files: header, metadata, tensor infos and tensor data, memory-mapped.
// Every count, length, dimension and offset is checked against the file before use; anything
// inconsistent is an InputError naming the file and the key or tensor.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/mapped_file.h"
#include "core/tensor.h"
#include "formats/ggml_types.h"
#include "formats/gguf_value.h"

namespace genai {

inline constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" little-endian
inline constexpr uint64_t kGgufDefaultAlignment = 32;

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> ne;  // ggml order: ne[0] is the contiguous (innermost) dimension
  GgmlType type = GgmlType::kF32;
  uint64_t offset = 0;  // relative to the data section
  uint64_t nbytes = 0;

  // Row-major shape (outermost first), i.e. ne reversed: a [out, in] matrix has ne = {in, out}.
  Shape shape() const;
  int64_t numel() const;
};

class GgufFile {
 public:
  // Memory-maps and parses `path`.
  static GgufFile open(const std::filesystem::path& path);
  // Parses an in-memory image; `keepalive` owns `bytes` (may be null when the caller keeps them).
  static GgufFile parse(std::span<const uint8_t> bytes, std::string source,
                        std::shared_ptr<const void> keepalive = nullptr);

  const std::string& source() const { return source_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }

  // Metadata in file order.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }
  const GgufValue* find(const std::string& key) const;
  // Typed lookups; a wrong type is an InputError naming the key. Missing keys: nullopt / throw.
  std::optional<std::string> get_string(const std::string& key) const;
  std::optional<int64_t> get_int(const std::string& key) const;
  std::optional<double> get_number(const std::string& key) const;
  std::optional<bool> get_bool(const std::string& key) const;
  std::string require_string(const std::string& key) const;
  int64_t require_int(const std::string& key) const;
  std::vector<std::string> get_string_array(const std::string& key) const;  // empty when missing
  std::vector<float> get_float_array(const std::string& key) const;
  std::vector<int32_t> get_int_array(const std::string& key) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(const std::string& name) const;
  std::span<const uint8_t> tensor_bytes(const GgufTensorInfo& t) const;
  // float32 values in row-major shape: a view into the map when stored as F32 (and aligned),
  // otherwise a dequantized owned copy (rows dequantized in parallel), after which a file opened
  // by open() releases the stored bytes' pages from the resident set (MappedFile::release).
  Tensor tensor_f32(const GgufTensorInfo& t) const;
  // The tensor in a float type a model keeps as stored: a view into the map when stored as F32,
  // F16 or BF16 (and aligned), otherwise tensor_f32's.
  Tensor tensor_float(const GgufTensorInfo& t) const;
  // open()'s map (null for parse()d bytes): what views of this file keep alive and may release.
  const std::shared_ptr<const MappedFile>& map() const { return map_; }

 private:
  std::string source_;
  std::shared_ptr<const void> keepalive_;
  std::shared_ptr<const MappedFile> map_;  // open()'s map; null for parse()d bytes
  std::span<const uint8_t> bytes_;
  uint32_t version_ = 0;
  uint64_t alignment_ = kGgufDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::map<std::string, size_t> metadata_index_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t> tensor_index_;
};

// True when the file starts with the GGUF magic (false for short or unreadable files).
bool is_gguf_file(const std::filesystem::path& path);

}  // namespace genai
