// Reading and writing safetensors files (8-byte header length, JSON header, raw data), and
// checkpoints split into shards by model.safetensors.index.json. The header is size-limited and
// validated (dtype, shape, data_offsets inside the file, byte counts, no overlaps) before any
// tensor is touched.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/mapped_file.h"
#include "core/tensor.h"

namespace genai {

inline constexpr uint64_t kSafetensorsMaxHeader = 100u << 20;  // as the reference implementation

struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::kF32;
  std::string dtype_name;  // as stored: "F32", "BF16", ...
  Shape shape;
  uint64_t begin = 0, end = 0;  // relative to the data section
};

class SafetensorsFile {
 public:
  static SafetensorsFile open(const std::filesystem::path& path);
  static SafetensorsFile parse(std::span<const uint8_t> bytes, std::string source,
                               std::shared_ptr<const void> keepalive = nullptr);

  const std::string& source() const { return source_; }
  const std::vector<SafetensorsEntry>& tensors() const { return tensors_; }  // sorted by name
  const SafetensorsEntry* find(const std::string& name) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  std::span<const uint8_t> tensor_bytes(const SafetensorsEntry& e) const;
  // The stored tensor as a view (any dtype). Copies only when the data is misaligned.
  Tensor tensor(const SafetensorsEntry& e) const;
  // float32: a view when stored as aligned F32, else a converted copy (F16, BF16), after which a
  // file opened by open() releases the stored bytes' pages from the resident set.
  Tensor tensor_f32(const SafetensorsEntry& e) const;
  // F32, F16 or BF16 as stored (a view when aligned); other dtypes are tensor_f32's InputError.
  Tensor tensor_float(const SafetensorsEntry& e) const;
  // open()'s map (null for parse()d bytes): what views of this file keep alive and may release.
  const std::shared_ptr<const MappedFile>& map() const { return map_; }

 private:
  std::string source_;
  std::shared_ptr<const void> keepalive_;
  std::shared_ptr<const MappedFile> map_;  // open()'s map; null for parse()d bytes
  std::span<const uint8_t> data_;
  std::vector<SafetensorsEntry> tensors_;
  std::map<std::string, size_t> index_;
  std::map<std::string, std::string> metadata_;
};

// Safetensors dtype name <-> DType ("F32" <-> kF32, "BF16", "F16", "F64", "I8", "U8", "I16",
// "U16", "I32", "U32", "I64", "U64", "BOOL").
bool safetensors_dtype_from_name(const std::string& name, DType* out);
std::string_view safetensors_dtype_name(DType d);

struct SafetensorsTensorToWrite {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  std::function<std::vector<uint8_t>()> produce;  // exactly numel * dtype_size bytes
};

// Writes tensors sorted by name (offsets in that order), header JSON with sorted keys padded
// with spaces to a multiple of 8. Deterministic and atomic.
void write_safetensors(const std::filesystem::path& path, std::vector<SafetensorsTensorToWrite> tensors,
                       const std::map<std::string, std::string>& metadata = {});

// A checkpoint folder: model.safetensors, or shards listed by model.safetensors.index.json.
class SafetensorsCheckpoint {
 public:
  // `dir` holds the files; throws InputError when neither layout is present.
  static SafetensorsCheckpoint open(const std::filesystem::path& dir);

  struct Located {
    const SafetensorsFile* file;
    const SafetensorsEntry* entry;
  };
  // nullptr file when absent.
  Located find(const std::string& name) const;
  std::vector<std::string> names() const;
  const std::vector<std::unique_ptr<SafetensorsFile>>& files() const { return files_; }

 private:
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, Located> by_name_;
};

// Writes `tensors` as shards of at most `max_shard_bytes` (by sorted name) plus
// model.safetensors.index.json, or a single model.safetensors when everything fits.
void write_safetensors_checkpoint(const std::filesystem::path& dir, std::vector<SafetensorsTensorToWrite> tensors,
                                  uint64_t max_shard_bytes);

}  // namespace genai
