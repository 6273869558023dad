// SHA-256 (FIPS 180-4): checksums recorded in manifests and content-addressed keys. Ours because
// the only alternative on the image is OpenSSL, a large dependency for one hash function.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace genai {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  void update(std::span<const uint8_t> bytes);
  void update(std::string_view text);
  // Pads and returns the digest; the object must not be updated afterwards.
  Digest finish();

 private:
  void compress(const uint8_t* block);
  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string to_hex(std::span<const uint8_t> bytes);
std::string sha256_hex(std::span<const uint8_t> bytes);
std::string sha256_hex(std::string_view text);
// Hash of a file's bytes (memory-mapped); InputError naming the path when it cannot be read.
std::string sha256_file_hex(const std::filesystem::path& path);

}  // namespace genai
