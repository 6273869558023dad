// Test images written without Python: a deterministic RGB picture (gradients, a checkerboard and
// noise from `seed`) as a PNG file through libpng.
#pragma once

#include <cstdint>
#include <filesystem>

namespace genai::testing {

// Throws std::runtime_error when the file cannot be written.
void write_test_png(const std::filesystem::path& path, int width, int height, uint32_t seed);

}  // namespace genai::testing
