// File digests that every core helps compute: the bytes are cut into 4 MiB chunks, each chunk is
// hashed on its own (in parallel on ThreadPool::global()), and the digest is the hash of the chunk
// digests in order. manifest.json records "chunked_xxh3_128": XXH3 with 128 bits (xxHash, Debian's
// libxxhash) runs at tens of GB/s a core, so checking a 165 MB program at load costs a few
// milliseconds; it detects corruption, truncation and swapped files (what load verification is
// for), not deliberate forgery. Manifests written before it record "chunked_sha256" (SHA-256 of
// the same chunks, about 1.7 GB/s a core), which is still checked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace genai {

inline constexpr size_t kChunkedDigestChunkBytes = size_t{4} << 20;

enum class DigestKind : uint8_t { kXxh3_128, kSha256 };

// The manifest field that holds a digest of this kind, and its length in hex digits.
std::string_view digest_field(DigestKind kind);
size_t digest_hex_digits(DigestKind kind);

class MappedFile;

std::string chunked_digest_hex(std::span<const uint8_t> bytes, DigestKind kind);
// The same over a whole mapped file, whose pages leave the resident set as they are hashed.
std::string chunked_digest_hex(const MappedFile& file, DigestKind kind);
// The digest of a file's bytes (memory-mapped); InputError naming the path when it cannot be read.
std::string chunked_digest_file_hex(const std::filesystem::path& path, DigestKind kind);

}  // namespace genai
