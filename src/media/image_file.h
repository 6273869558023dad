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

// A missing, unreadable, truncated or corrupt file, one that is neither PNG nor JPEG, or one past
// Pillow's decompression-bomb limit (twice its MAX_IMAGE_PIXELS, checked before allocating), is
// an InputError naming the file.
RgbImage read_image(const std::filesystem::path& path);
// The same for bytes in memory; `origin` names them in messages.
RgbImage decode_image(std::span<const uint8_t> bytes, const std::string& origin);

}  // namespace genai::media
