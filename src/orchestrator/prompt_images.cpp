#include "orchestrator/prompt_images.h"

#include "core/error.h"
#include "core/log.h"
#include "media/image_file.h"
#include "media/smolvlm_image_processor.h"

namespace genai::orchestrator {

PromptImages prompt_images(const std::vector<std::string>& paths, ImageEncoder& encoder,
                           const std::filesystem::path& processor_config, int32_t image_token_id) {
  const media::SmolVlmImageConfig config = media::read_smolvlm_image_config(processor_config);
  if (config.tile != encoder.tile_size())
    throw_input_error("{}: max_image_size.longest_edge {} is not the vision encoder's tile size {}", processor_config.string(),
                      config.tile, encoder.tile_size());
  PromptImages images;
  images.image_token_id = image_token_id;
  images.dim = encoder.dim();
  for (const std::string& path : paths) {
    const media::ProcessedImage image = media::preprocess_smolvlm(media::read_image(path), config);
    const std::vector<float> features = encoder.encode(image.pixels);
    images.features.insert(images.features.end(), features.begin(), features.end());
    images.expansions.push_back(media::smolvlm_image_prompt(image.rows, image.cols, encoder.tokens_per_tile()));
    images.tiles += image.tiles();
    log::info("{}: {} tile(s) ({} x {} + the whole image), {} image tokens", path, image.tiles(), image.rows, image.cols,
              image.tiles() * encoder.tokens_per_tile());
  }
  return images;
}

}  // namespace genai::orchestrator
