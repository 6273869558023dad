#include "core/chunked_digest.h"

#include <xxhash.h>

#include <algorithm>
#include <vector>

#include "core/mapped_file.h"
#include "core/sha256.h"
#include "core/thread_pool.h"

namespace genai {
namespace {

// One digest of each kind as bytes: XXH3-128 in its canonical (big-endian) form, SHA-256 as is.
using Digest = std::vector<uint8_t>;

Digest hash(std::span<const uint8_t> bytes, DigestKind kind) {
  if (kind == DigestKind::kSha256) {
    Sha256 h;
    h.update(bytes);
    const auto d = h.finish();
    return Digest(d.begin(), d.end());
  }
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(bytes.data(), bytes.size()));
  return Digest(std::begin(c.digest), std::end(c.digest));
}

}  // namespace

std::string_view digest_field(DigestKind kind) {
  return kind == DigestKind::kSha256 ? "chunked_sha256" : "chunked_xxh3_128";
}

size_t digest_hex_digits(DigestKind kind) { return kind == DigestKind::kSha256 ? 64 : 32; }

std::string chunked_digest_hex(std::span<const uint8_t> bytes, DigestKind kind) {
  const int64_t chunks = static_cast<int64_t>((bytes.size() + kChunkedDigestChunkBytes - 1) / kChunkedDigestChunkBytes);
  std::vector<Digest> digests(static_cast<size_t>(chunks));
  ThreadPool::global().parallel_for(chunks, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const size_t offset = static_cast<size_t>(c) * kChunkedDigestChunkBytes;
      digests[static_cast<size_t>(c)] =
          hash(bytes.subspan(offset, std::min(kChunkedDigestChunkBytes, bytes.size() - offset)), kind);
    }
  });
  Digest all;
  for (const auto& d : digests) all.insert(all.end(), d.begin(), d.end());
  return to_hex(hash(all, kind));
}

std::string chunked_digest_file_hex(const std::filesystem::path& path, DigestKind kind) {
  const auto file = MappedFile::open(path);
  return chunked_digest_hex(file->bytes(), kind);
}

}  // namespace genai
