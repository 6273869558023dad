// The checksum manifest.json records for the checkpoint a program was compiled from: the SHA-256
// of the file, or for a folder (Hugging Face checkpoint) the SHA-256 of the listing
// "<relative path>\0<sha256 of the file>\n" over every regular file, sorted by relative path
// (generic '/' separators), so renaming, adding or changing any file changes it.
#pragma once

#include <filesystem>
#include <string>

namespace genai::compile {

// Lower-case hex. InputError naming the path when it is missing or unreadable.
std::string source_checksum(const std::filesystem::path& checkpoint);

}  // namespace genai::compile
