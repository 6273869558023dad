// A read-only memory map of a whole file. Shared ownership so that tensor views into the map
// (weights, .pte segments) keep it alive without copying.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

namespace genai {

class MappedFile {
 public:
  // Maps `path`; a missing or unreadable file is an InputError naming the path.
  static std::shared_ptr<const MappedFile> open(const std::filesystem::path& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::filesystem::path& path() const { return path_; }
  // Drops the whole pages inside `range` (a part of this map) from the process's resident set.
  // The map is read-only, so the next read of them faults the same bytes back in from the page
  // cache: a caller that has converted a tensor calls this so the file's pages do not count
  // towards its peak memory beside the converted copy.
  void release(std::span<const uint8_t> range) const;

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::filesystem::path path_;
};

}  // namespace genai
