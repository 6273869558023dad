#include "support/image_files.h"

#include <png.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <vector>

namespace genai::testing {

void write_test_png(const std::filesystem::path& path, int width, int height, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> rgb(static_cast<size_t>(width) * static_cast<size_t>(height) * 3);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const bool square = (x / 8 + y / 8) % 2 == 0;
      const int noise = static_cast<int>(rng() % 41) - 20;
      uint8_t* p = rgb.data() + (static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 3;
      p[0] = static_cast<uint8_t>(std::clamp(255 * x / std::max(width - 1, 1) + noise, 0, 255));
      p[1] = static_cast<uint8_t>(std::clamp(255 * y / std::max(height - 1, 1) - noise, 0, 255));
      p[2] = static_cast<uint8_t>(square ? 220 : 30);
    }
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  image.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&image, path.c_str(), 0, rgb.data(), 0, nullptr))
    throw std::runtime_error("cannot write " + path.string() + ": " + image.message);
}

}  // namespace genai::testing
