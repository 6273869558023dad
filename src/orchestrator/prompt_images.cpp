#include "orchestrator/prompt_images.h"

#include "core/error.h"
#include "core/log.h"
#include "media/image_file.h"

namespace genai::orchestrator {

PromptMedia prompt_images(const std::vector<std::string>& paths, ImageEncoder& encoder, const ImageProcessing& processing,
                           int32_t image_token_id) {
  if (processing.tile_size() != encoder.tile_size())
    throw_input_error("the image processor's tiles are {} pixels but the vision encoder takes {}", processing.tile_size(),
                      encoder.tile_size());
  PromptMedia images;
  images.content_item = processing.content_item();
  images.placeholder = processing.placeholder();
  images.token_id = image_token_id;
  images.dim = encoder.dim();
  for (const std::string& path : paths) {
    const media::ProcessedImage image = processing.process(media::read_image(path));
    const std::vector<float> features = encoder.encode(image.pixels);
    images.features.insert(images.features.end(), features.begin(), features.end());
    images.expansions.push_back(processing.expansion(image, encoder.tokens_per_tile()));
    images.tiles += image.tiles();
    log::info("{}: {} tile(s) ({} x {}{}), {} image tokens", path, image.tiles(), image.rows, image.cols,
              image.tiles() > 1 ? " + the whole image" : "", image.tiles() * encoder.tokens_per_tile());
  }
  return images;
}

}  // namespace genai::orchestrator
