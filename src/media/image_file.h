// PNG and JPEG files to RGB, as transformers' image processors see them: Pillow opens the file and
// convert_to_rgb() turns it into RGB (grey and palette images expanded, transparency composited
// over white with Pillow's arithmetic).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "media/rgb_image.h"

namespace genai::media {

// Pillow refuses images past twice its MAX_IMAGE_PIXELS (a decompression bomb); so does this,
// before allocating them.
inline constexpr int64_t kMaxImagePixels = 2 * 89478485;
void check_image_size(int64_t width, int64_t height, const std::string& origin);

// A missing, unreadable, truncated or corrupt file, one that is neither PNG nor JPEG, or one too
// large, is an InputError naming the file.
RgbImage read_image(const std::filesystem::path& path);
// The same for bytes in memory; `origin` names them in messages.
RgbImage decode_image(std::span<const uint8_t> bytes, const std::string& origin);

// Pillow's alpha_composite of `rgba` (width * height * 4 bytes) over opaque white, dropped to RGB.
RgbImage composite_over_white(const uint8_t* rgba, int64_t width, int64_t height);

}  // namespace genai::media
