#include "modality/image_processing.h"

#include "core/error.h"

namespace genai::modality {

ImageProcessing::ImageProcessing(VisionFamily family, const std::filesystem::path& processor_config) : family_(family) {
  if (family == VisionFamily::kInternVl)
    config_ = media::read_internvl_image_config(processor_config);
  else
    config_ = media::read_smolvlm_image_config(processor_config);
}

int64_t ImageProcessing::tile_size() const {
  return std::visit([](const auto& c) { return c.tile; }, config_);
}

media::ProcessedImage ImageProcessing::process(const media::RgbImage& image) const {
  if (const auto* c = std::get_if<media::InternVlImageConfig>(&config_)) return media::preprocess_internvl(image, *c);
  return media::preprocess_smolvlm(image, std::get<media::SmolVlmImageConfig>(config_));
}

std::string ImageProcessing::expansion(const media::ProcessedImage& image, int64_t tokens_per_tile) const {
  if (family_ == VisionFamily::kInternVl) return media::internvl_image_prompt(image.tiles(), tokens_per_tile);
  return media::smolvlm_image_prompt(image.rows, image.cols, tokens_per_tile);
}

std::string_view ImageProcessing::content_item() const {
  return family_ == VisionFamily::kInternVl ? "<IMG_CONTEXT>\n" : "<image>";
}

std::string_view ImageProcessing::placeholder() const {
  return family_ == VisionFamily::kInternVl ? "<IMG_CONTEXT>" : "<image>";
}

VisionFamily vision_family_from_name(std::string_view name, const std::string& origin) {
  for (VisionFamily f : {VisionFamily::kSmolVlm, VisionFamily::kInternVl})
    if (vision_family_name(f) == name) return f;
  throw_input_error("{}: vision family '{}' is not known (valid: smolvlm, internvl)", origin, name);
}

}  // namespace genai::modality
