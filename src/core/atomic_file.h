// Artifacts are written atomically: bytes go to a hidden temp file beside the target, are flushed
// to disk, and renamed over the target only when complete. A crash or kill leaves the previous
// file (or none) and at most a hidden ".<name>.tmp-*" file, never a partial artifact.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

namespace genai {

class AtomicFileWriter {
 public:
  // sync: fsync before the rename, so a committed artifact survives a power cut. False for a
  // private temporary file nobody needs after a crash (the flush of a 1.5 GB program is 5 s here).
  explicit AtomicFileWriter(std::filesystem::path target, bool sync = true);
  ~AtomicFileWriter();  // removes the temp file unless commit() succeeded
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(std::span<const uint8_t> bytes);
  void write(std::string_view text);
  void write_zeros(size_t count);
  uint64_t bytes_written() const { return written_; }
  // Flushes, fsyncs and renames onto the target.
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;
  int fd_ = -1;
  uint64_t written_ = 0;
  bool committed_ = false;
  bool sync_ = true;
};

void write_file_atomic(const std::filesystem::path& target, std::span<const uint8_t> bytes);
void write_file_atomic(const std::filesystem::path& target, std::string_view text);

// Removes hidden temp files an interrupted earlier writer left in `dir`.
void remove_stale_temp_files(const std::filesystem::path& dir);

}  // namespace genai
