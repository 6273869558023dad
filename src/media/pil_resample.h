// Pillow's Image.resize for 8-bit RGB images, reproduced bit for bit: the image processors of
// transformers resize with Pillow, and an encoder's input is only the model's input when every
// pixel is the same. Separable convolution, weights computed in double and rounded to 22-bit
// fixed point, horizontal pass first into an 8-bit image, then vertical; an axis whose size does
// not change is not resampled. This is Pillow 12's arithmetic (tests pin pillow 12.3.0): Pillow
// 13 rounds some two-axis resizes differently (by one, in about a fifth of the sizes tried).
#pragma once

#include <cstdint>

#include "media/rgb_image.h"

namespace genai::media {

// Pillow's filter numbers, as preprocessor_config.json's "resample" gives them (NEAREST = 0,
// BOX = 4 and HAMMING = 5 are not among them).
enum class Resample { kLanczos = 1, kBilinear = 2, kBicubic = 3 };

// The filter of a preprocessor_config.json "resample" value; false for the others.
bool resample_from_pillow(int64_t value, Resample& out);

RgbImage resize(const RgbImage& image, int64_t width, int64_t height, Resample filter);

}  // namespace genai::media
