// Helpers for fuzz targets whose reader takes a path, not bytes: the input is written to a file in
// a directory private to this process (removed at exit), so the reader sees it exactly as a user's.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>

namespace genai::fuzz {

// The scratch directory of this fuzzing process.
inline const std::filesystem::path& scratch_dir() {
  struct Dir {
    std::filesystem::path path;
    Dir() {
      // A RAM disk when there is one: the file is rewritten for every input.
      std::error_code ec;
      const std::filesystem::path base =
          std::filesystem::is_directory("/dev/shm", ec) ? std::filesystem::path("/dev/shm") : std::filesystem::temp_directory_path();
      path = base / ("genai_fuzz_" + std::to_string(::getpid()));
      std::filesystem::create_directories(path);
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static Dir dir;
  return dir.path;
}

inline void write_file(const std::filesystem::path& path, std::span<const uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline void write_file(const std::filesystem::path& path, std::string_view text) {
  write_file(path, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

// Text a loaded tokenizer is exercised on: ASCII, digits, multi-byte UTF-8, an invalid byte, and
// strings that are special tokens in common vocabularies.
inline constexpr std::string_view kProbeText =
    "Hello, world! 12345 <s></s><|im_start|>user\n  tabs\tand \xC3\xBC\xE2\x82\xAC\xF0\x9F\x98\x80 \xFF end";

}  // namespace genai::fuzz
