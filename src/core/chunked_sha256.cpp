#include "core/chunked_sha256.h"

#include <algorithm>
#include <vector>

#include "core/mapped_file.h"
#include "core/sha256.h"
#include "core/thread_pool.h"

namespace genai {

std::string chunked_sha256_hex(std::span<const uint8_t> bytes) {
  const int64_t chunks = static_cast<int64_t>((bytes.size() + kChunkedSha256ChunkBytes - 1) / kChunkedSha256ChunkBytes);
  std::vector<Sha256::Digest> digests(static_cast<size_t>(chunks));
  ThreadPool::global().parallel_for(chunks, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const size_t offset = static_cast<size_t>(c) * kChunkedSha256ChunkBytes;
      Sha256 h;
      h.update(bytes.subspan(offset, std::min(kChunkedSha256ChunkBytes, bytes.size() - offset)));
      digests[static_cast<size_t>(c)] = h.finish();
    }
  });
  Sha256 top;
  for (const auto& d : digests) top.update(std::span<const uint8_t>(d));
  const auto digest = top.finish();
  return to_hex(digest);
}

std::string chunked_sha256_file_hex(const std::filesystem::path& path) {
  const auto file = MappedFile::open(path);
  return chunked_sha256_hex(file->bytes());
}

}  // namespace genai
