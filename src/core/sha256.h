// SHA-256: checksums recorded in manifests and content-addressed named-data keys, computed by
// OpenSSL's libcrypto (EVP); this header keeps OpenSSL out of every other file.
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
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::span<const uint8_t> bytes);
  void update(std::string_view text);
  // Returns the digest; the object must not be updated afterwards.
  Digest finish();

 private:
  void* ctx_;  // EVP_MD_CTX
};

std::string to_hex(std::span<const uint8_t> bytes);
std::string sha256_hex(std::span<const uint8_t> bytes);
std::string sha256_hex(std::string_view text);
// Hash of a file's bytes (memory-mapped); InputError naming the path when it cannot be read.
std::string sha256_file_hex(const std::filesystem::path& path);

}  // namespace genai
