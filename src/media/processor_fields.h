// What every image processor of transformers' Pillow path shares: preprocessor_config.json's
// typed fields (errors naming the file and field), and a tile's rescale and normalisation into
// float CHW: f32(f64(v) * factor) as numpy rescales (in double), then f32(f32(x - mean) / std).
#pragma once

#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "media/pil_resample.h"
#include "media/rgb_image.h"

namespace genai::media {

struct TileNormalization {
  bool do_rescale = true, do_normalize = true;
  double rescale_factor = 1.0 / 255.0;
  std::array<float, 3> mean{0.5f, 0.5f, 0.5f}, std{0.5f, 0.5f, 0.5f};
};

// Appends `tile` as [3, height, width] float32.
void append_normalized_tile(const RgbImage& tile, const TileNormalization& n, std::vector<float>& out);

// InputErrors name `origin` and `field`.
int64_t positive_int_field(const nlohmann::json& v, const std::string& origin, const std::string& field);
bool bool_field(const nlohmann::json& v, const std::string& origin, const std::string& field);
// A number, or three numbers (per channel).
std::array<float, 3> three_floats_field(const nlohmann::json& v, const std::string& origin, const std::string& field);
// The fields every processor reads alike: do_rescale, do_normalize, rescale_factor, image_mean,
// image_std into `n`, resample (Pillow's numbering) into `resample`. False for any other key.
bool read_pixel_field(const std::string& key, const nlohmann::json& v, const std::string& origin, TileNormalization& n,
                      Resample& resample);
// The file as a JSON value; InputError naming it when unreadable or not JSON.
nlohmann::json read_json_file(const std::filesystem::path& path);

}  // namespace genai::media
