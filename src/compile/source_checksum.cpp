#include "compile/source_checksum.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/sha256.h"

namespace genai::compile {

std::string source_checksum(const std::filesystem::path& checkpoint) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(checkpoint, ec);
  if (ec || !fs::exists(status)) throw_input_error("--checkpoint {}: no such file or folder", checkpoint.string());
  if (fs::is_regular_file(status)) return sha256_file_hex(checkpoint);
  if (!fs::is_directory(status)) throw_input_error("--checkpoint {}: not a file or folder", checkpoint.string());
  std::vector<std::string> files;
  for (fs::recursive_directory_iterator it(checkpoint, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file()) files.push_back(fs::relative(it->path(), checkpoint).generic_string());
  }
  if (ec) throw_input_error("--checkpoint {}: cannot list the folder: {}", checkpoint.string(), ec.message());
  std::sort(files.begin(), files.end());
  Sha256 listing;
  for (const std::string& rel : files) {
    listing.update(rel);
    listing.update(std::string_view("\0", 1));
    listing.update(sha256_file_hex(checkpoint / rel));
    listing.update(std::string_view("\n"));
  }
  const auto digest = listing.finish();
  return to_hex(digest);
}

}  // namespace genai::compile
