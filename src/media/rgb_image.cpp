#include "media/rgb_image.h"

#include <cstring>

namespace genai::media {

RgbImage RgbImage::crop(int64_t x, int64_t y, int64_t w, int64_t h) const {
  RgbImage out(w, h);
  for (int64_t r = 0; r < h; ++r) std::memcpy(out.row(r), row(y + r) + x * 3, static_cast<size_t>(w * 3));
  return out;
}

}  // namespace genai::media
