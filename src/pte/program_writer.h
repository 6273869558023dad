// Writes a Program as an ExecuTorch .pte file that upstream's runtime loads: flatbuffer with
// file identifier "ET12", then (when there is segment data) the "eh00" extended header and the
// segments — constant tensors first, then mutable state, delegate payloads, named data. Identical
// delegate payloads and identical named data blobs are stored once. Same Program and options,
// same bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "pte/program.h"
#include "pte/program_layout.h"

namespace genai::pte {

struct WriteOptions {
  uint64_t segment_alignment = 128;         // start of every segment; a power of two
  uint64_t constant_tensor_alignment = 16;  // start of every constant tensor in the constant segment
  bool extract_delegate_segments = true;    // false: payloads inline in the flatbuffer
  bool sync = true;                         // AtomicFileWriter's: false for private temporary programs
};

// Atomic write (src/core/atomic_file.h). An inconsistent Program (find_program_problem) or bad
// options are a Failure naming the target. Returns the layout written.
ProgramLayout write_program(const std::filesystem::path& target, const Program& program,
                            const WriteOptions& options = {});

// The same bytes in memory (tests, fuzz seeds, small programs).
std::vector<uint8_t> serialize_program(const Program& program, const WriteOptions& options = {},
                                       ProgramLayout* layout = nullptr);

}  // namespace genai::pte
