// Reads a .pte file into the Program model, verifying everything before trusting it: the
// flatbuffer (flatbuffers Verifier, identifier "ET12"), the extended header, every segment against
// the file bounds, every index (values, operators, delegates, segments, constant entries, planned
// buffers) and every tensor's data size. Anything malformed is an InputError naming the file and
// the problem. Segment bytes are never copied: blobs in the result view the mapped file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string_view>

#include "pte/program.h"
#include "pte/program_layout.h"

namespace genai::pte {

struct LoadedProgram {
  Program program;
  ProgramLayout layout;
};

// Memory-maps `path` (src/core/mapped_file.h); the mapping lives as long as any blob viewing it.
LoadedProgram read_program(const std::filesystem::path& path);

// Reads from memory; `name` labels errors. Blobs view `bytes` and hold `keepalive` (may be null
// when the caller keeps `bytes` alive longer than the result).
LoadedProgram read_program_bytes(std::span<const uint8_t> bytes, std::string_view name,
                                 std::shared_ptr<const void> keepalive = nullptr);

}  // namespace genai::pte
