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

namespace {

// `file`: the map `bytes` belong to, whose pages leave the resident set once hashed (a digest of a
// 1.5 GB program then costs no 1.5 GB of memory); null for bytes owned elsewhere.
std::string digest_chunks(std::span<const uint8_t> bytes, DigestKind kind, const MappedFile* file) {
  const int64_t chunks = static_cast<int64_t>((bytes.size() + kChunkedDigestChunkBytes - 1) / kChunkedDigestChunkBytes);
  std::vector<Digest> digests(static_cast<size_t>(chunks));
  ThreadPool::global().parallel_for(chunks, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const size_t offset = static_cast<size_t>(c) * kChunkedDigestChunkBytes;
      const auto chunk = bytes.subspan(offset, std::min(kChunkedDigestChunkBytes, bytes.size() - offset));
      digests[static_cast<size_t>(c)] = hash(chunk, kind);
      if (file) file->release(chunk);
    }
  });
  Digest all;
  for (const auto& d : digests) all.insert(all.end(), d.begin(), d.end());
  return to_hex(hash(all, kind));
}

}  // namespace

std::string chunked_digest_hex(std::span<const uint8_t> bytes, DigestKind kind) {
  return digest_chunks(bytes, kind, nullptr);
}

std::string chunked_digest_hex(const MappedFile& file, DigestKind kind) {
  return digest_chunks(file.bytes(), kind, &file);
}

std::string chunked_digest_file_hex(const std::filesystem::path& path, DigestKind kind) {
  return chunked_digest_hex(*MappedFile::open(path), kind);
}

}  // namespace genai
