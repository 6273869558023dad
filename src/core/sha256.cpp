#include "core/sha256.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "core/error.h"
#include "core/mapped_file.h"

namespace genai {

namespace {
EVP_MD_CTX* ctx_of(void* p) { return static_cast<EVP_MD_CTX*>(p); }

// OpenSSL initialises itself on first use, in whichever thread that is, and the error state it
// allocates then belongs to that thread: a thread-pool worker (chunked hashing) keeps it until
// exit, where LeakSanitizer reports it. Initialising during static initialisation puts it on the
// main thread, which OpenSSL's exit handler cleans up.
[[maybe_unused]] const int kOpenSslInitialised = OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, nullptr);
}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(ctx_of(ctx_), EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(ctx_of(ctx_));
    throw_failure("sha256: OpenSSL could not initialise a SHA-256 digest");
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_of(ctx_)); }

void Sha256::update(std::span<const uint8_t> bytes) {
  if (!bytes.empty() && EVP_DigestUpdate(ctx_of(ctx_), bytes.data(), bytes.size()) != 1)
    throw_failure("sha256: OpenSSL digest update failed");
}

void Sha256::update(std::string_view text) {
  update(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

Sha256::Digest Sha256::finish() {
  Digest d{};
  unsigned int n = 0;
  if (EVP_DigestFinal_ex(ctx_of(ctx_), d.data(), &n) != 1 || n != d.size())
    throw_failure("sha256: OpenSSL digest final failed");
  return d;
}

std::string to_hex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

std::string sha256_hex(std::span<const uint8_t> bytes) {
  Sha256 h;
  h.update(bytes);
  return to_hex(h.finish());
}

std::string sha256_hex(std::string_view text) {
  Sha256 h;
  h.update(text);
  return to_hex(h.finish());
}

std::string sha256_file_hex(const std::filesystem::path& path) {
  // A piece at a time, each piece's pages released once hashed: a checkpoint's checksum does not
  // hold the checkpoint in memory.
  const auto file = MappedFile::open(path);
  constexpr size_t kPiece = size_t{64} << 20;
  Sha256 h;
  for (size_t offset = 0; offset < file->size(); offset += kPiece) {
    const auto piece = file->bytes().subspan(offset, std::min(kPiece, file->size() - offset));
    h.update(piece);
    file->release(piece);
  }
  return to_hex(h.finish());
}

}  // namespace genai
