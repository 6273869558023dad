// A vision model's image processor and prompt spelling, by family: SmolVLM's (longest-edge
// resize, tiles, "<image>" items expanded into row/column markers and image tokens) or InternVL's
// (closest-aspect tile grid, thumbnail, "<IMG_CONTEXT>\n" items expanded into <img>...</img>).
#pragma once

#include <filesystem>
#include <string>
#include <variant>

#include "media/internvl_image_processor.h"
#include "media/smolvlm_image_processor.h"
#include "model/vision_tower.h"

namespace genai::modality {

class ImageProcessing {
 public:
  // Reads the processor's settings; InputError naming the file for bad ones.
  ImageProcessing(VisionFamily family, const std::filesystem::path& processor_config);

  VisionFamily family() const { return family_; }
  int64_t tile_size() const;
  media::ProcessedImage process(const media::RgbImage& image) const;
  // The text one image stands for in the prompt, after the chat template.
  std::string expansion(const media::ProcessedImage& image, int64_t tokens_per_tile) const;
  // What the chat template writes for an image item, and the marker the expansion replaces.
  std::string_view content_item() const;
  std::string_view placeholder() const;

 private:
  VisionFamily family_;
  std::variant<media::SmolVlmImageConfig, media::InternVlImageConfig> config_;
};

// The family a vision_encoder program names in its get_vision_family constant; InputError
// naming `origin` and the valid names.
VisionFamily vision_family_from_name(std::string_view name, const std::string& origin);

}  // namespace genai::modality
