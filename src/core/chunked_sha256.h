// A SHA-256 based file digest that every core helps compute: the bytes are cut into 4 MiB chunks,
// each chunk is hashed with SHA-256 on its own (in parallel on ThreadPool::global()), and the
// digest is the SHA-256 of the chunk digests in order. A plain SHA-256 is one sequential stream;
// this keeps the collision resistance of SHA-256 while checking a compiled program at load takes
// a fraction of the single-core time. manifest.json records it as "chunked_sha256".
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace genai {

inline constexpr size_t kChunkedSha256ChunkBytes = size_t{4} << 20;

std::string chunked_sha256_hex(std::span<const uint8_t> bytes);
// The digest of a file's bytes (memory-mapped); InputError naming the path when it cannot be read.
std::string chunked_sha256_file_hex(const std::filesystem::path& path);

}  // namespace genai
