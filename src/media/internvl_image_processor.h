// InternVL's image processor (transformers' GotOcr2ImageProcessor, Pillow path), as
// InternVLProcessor calls it (crop_to_patches on): the tile grid whose aspect ratio is closest to
// the image's among the grids of min_patches..max_patches tiles, the image resized to that grid
// (BICUBIC) and cut row by row, then, when there is more than one tile, the whole image resized to
// one more tile (the thumbnail); each tile rescaled and normalised into float CHW.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "media/pil_resample.h"
#include "media/processor_fields.h"
#include "media/rgb_image.h"
#include "media/smolvlm_image_processor.h"

namespace genai::media {

struct InternVlImageConfig {
  bool crop_to_patches = true;  // InternVLProcessor's default, whatever the file says
  int64_t tile = 448;           // size.height == size.width
  int64_t min_patches = 1, max_patches = 12;
  Resample resample = Resample::kBicubic;
  // GotOcr2's defaults: rescale 1/255, OpenAI CLIP's mean and std (InternVL3 ships ImageNet's).
  TileNormalization normalization{true, true, 1.0 / 255.0, {0.48145466f, 0.4578275f, 0.40821073f},
                                  {0.26862954f, 0.26130258f, 0.27577711f}};
};

// preprocessor_config.json of an InternVL folder; unhandled fields and values are InputErrors
// naming the file and the field.
InternVlImageConfig internvl_image_config(const nlohmann::json& config, const std::string& origin);
InternVlImageConfig read_internvl_image_config(const std::filesystem::path& path);

// The grid (columns, rows) for an image of `height` x `width` (GotOcr2's get_optimal_tiled_canvas).
std::array<int64_t, 2> internvl_grid(int64_t height, int64_t width, int64_t tile, int64_t min_patches, int64_t max_patches);

// rows x cols of the grid (0 x 0 for a single tile, which has no thumbnail), tiles row-major, the
// thumbnail last.
ProcessedImage preprocess_internvl(const RgbImage& image, const InternVlImageConfig& config);

// The text standing for one image: "<img>" + tiles x tokens_per_tile "<IMG_CONTEXT>" + "</img>".
std::string internvl_image_prompt(int64_t tiles, int64_t tokens_per_tile);

}  // namespace genai::media
