// An 8-bit RGB image in memory: rows top to bottom, each pixel R, G, B.
#pragma once

#include <cstdint>
#include <cstddef>
#include <vector>

namespace genai::media {

struct RgbImage {
  int64_t width = 0, height = 0;
  std::vector<uint8_t> pixels;  // height * width * 3

  RgbImage() = default;
  RgbImage(int64_t w, int64_t h) : width(w), height(h), pixels(static_cast<size_t>(w * h * 3)) {}
  uint8_t* row(int64_t y) { return pixels.data() + y * width * 3; }
  const uint8_t* row(int64_t y) const { return pixels.data() + y * width * 3; }
  // The rectangle [x, x + w) x [y, y + h), which must lie inside.
  RgbImage crop(int64_t x, int64_t y, int64_t w, int64_t h) const;
};

}  // namespace genai::media
