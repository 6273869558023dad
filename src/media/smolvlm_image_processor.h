// SmolVLM's (Idefics3's) image processor, as transformers' Pillow path computes it: the longest
// edge resized to `longest_edge`, then to multiples of the encoder's tile size, cut into tiles
// row by row with the whole image shrunk to one more tile at the end; each tile rescaled and
// normalised into float CHW.
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

namespace genai::media {

struct SmolVlmImageConfig {
  bool do_convert_rgb = true, do_resize = true, do_image_splitting = true;
  int64_t longest_edge = 4 * 364;  // size.longest_edge
  int64_t tile = 364;              // max_image_size.longest_edge
  Resample resample = Resample::kLanczos;
  TileNormalization normalization;  // rescale 1/255, mean and std 0.5
};

// preprocessor_config.json of a SmolVLM / Idefics3 folder. A field this does not handle, or a
// value it cannot honour, is an InputError naming the file and the field.
SmolVlmImageConfig smolvlm_image_config(const nlohmann::json& config, const std::string& origin);
SmolVlmImageConfig read_smolvlm_image_config(const std::filesystem::path& path);

struct ProcessedImage {
  int64_t rows = 0, cols = 0;  // the tile grid; 0 x 0 when the image is one tile
  int64_t tile_height = 0, tile_width = 0;
  std::vector<float> pixels;   // [tiles, 3, tile_height, tile_width], the whole image last
  int64_t tiles() const { return tile_height * tile_width == 0 ? 0 : static_cast<int64_t>(pixels.size()) / (3 * tile_height * tile_width); }
};

ProcessedImage preprocess_smolvlm(const RgbImage& image, const SmolVlmImageConfig& config);

// The text that stands for one image in the prompt, as SmolVLM's processor expands "<image>":
// per tile "<fake_token_around_image><row_r_col_c>" + tokens_per_tile x "<image>" (a newline
// after each row), then "\n<fake_token_around_image><global-img>" + tokens_per_tile x "<image>"
// + "<fake_token_around_image>"; an unsplit image (0 x 0) is only the global part, without the
// leading newline.
std::string smolvlm_image_prompt(int64_t rows, int64_t cols, int64_t tokens_per_tile);

// The sizes of its steps, exposed for tests: the longest edge to `longest_edge` (the other side
// truncated, then made even), capped at 4096.
std::array<int64_t, 2> smolvlm_resized_size(int64_t height, int64_t width, int64_t longest_edge);
// Then to multiples of the tile size.
std::array<int64_t, 2> smolvlm_tiled_size(int64_t height, int64_t width, int64_t tile);

}  // namespace genai::media
