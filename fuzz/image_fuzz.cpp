// libFuzzer target: image files (PNG, JPEG) through the decoder, and small ones on through
// SmolVLM's preprocessing (Pillow's resampling, tiling). Anything but InputError is a finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/error.h"
#include "media/image_file.h"
#include "media/smolvlm_image_processor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const genai::media::RgbImage image = genai::media::decode_image(std::span<const uint8_t>(data, size), "fuzz.img");
    if (image.width * image.height <= 4096) {
      genai::media::SmolVlmImageConfig config;
      config.longest_edge = 48;
      config.tile = 16;
      (void)genai::media::preprocess_smolvlm(image, config);
    }
  } catch (const genai::InputError&) {
  }
  return 0;
}
