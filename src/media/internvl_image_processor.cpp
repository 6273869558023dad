#include "media/internvl_image_processor.h"

#include <cmath>
#include <limits>

#include "core/error.h"

namespace genai::media {
namespace {

// Pillow's size for a square tile: {"height": N, "width": N}.
int64_t square_size(const nlohmann::json& v, const std::string& origin) {
  if (!v.is_object() || !v.contains("height") || !v.contains("width") || v.size() != 2)
    throw_input_error("{}: size must be {{\"height\": N, \"width\": N}}, not {}", origin, v.dump());
  const int64_t h = positive_int_field(v["height"], origin, "size.height"), w = positive_int_field(v["width"], origin, "size.width");
  if (h != w) throw_input_error("{}: size {} x {} is not square (InternVL's tiles are)", origin, h, w);
  return h;
}

}  // namespace

InternVlImageConfig internvl_image_config(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw_input_error("{}: not a JSON object", origin);
  InternVlImageConfig c;
  for (const auto& [key, v] : j.items()) {
    if (key == "do_convert_rgb" || key == "do_resize") {
      if (!bool_field(v, origin, key)) throw_input_error("{}: {} false is not handled", origin, key);
    } else if (key == "crop_to_patches") {
      (void)bool_field(v, origin, key);  // InternVLProcessor passes crop_to_patches=True
    } else if (key == "size") c.tile = square_size(v, origin);
    else if (key == "min_patches") c.min_patches = positive_int_field(v, origin, key);
    else if (key == "max_patches") c.max_patches = positive_int_field(v, origin, key);
    else if (read_pixel_field(key, v, origin, c.normalization, c.resample)) {
      // rescaling, normalisation and the resampling filter, read as every processor reads them
    } else if (key == "image_processor_type" || key == "processor_class") {
      const std::string name = v.is_string() ? v.get<std::string>() : std::string();
      if (name.rfind("GotOcr2", 0) != 0 && name.rfind("InternVL", 0) != 0)
        throw_input_error("{}: {} {} is not InternVL's (GotOcr2ImageProcessor)", origin, key, v.dump());
    } else if (key == "data_format" || key == "input_data_format" || key == "return_tensors" || key == "device" ||
               key == "disable_grouping" || key == "default_to_square") {
      // How the Python call lays out or returns arrays: no effect on the values.
    } else if ((key == "crop_size" || key == "do_center_crop" || key == "do_pad") && (v.is_null() || v == false)) {
      // Steps this processor does not have, switched off.
    } else {
      throw_input_error(
          "{}: field '{}' is not handled (handled: do_convert_rgb, do_resize, size, resample, crop_to_patches, "
          "min_patches, max_patches, do_rescale, rescale_factor, do_normalize, image_mean, image_std)",
          origin, key);
    }
  }
  if (c.min_patches > c.max_patches)
    throw_input_error("{}: min_patches {} exceeds max_patches {}", origin, c.min_patches, c.max_patches);
  return c;
}

InternVlImageConfig read_internvl_image_config(const std::filesystem::path& path) {
  return internvl_image_config(read_json_file(path), path.string());
}

std::array<int64_t, 2> internvl_grid(int64_t height, int64_t width, int64_t tile, int64_t min_patches, int64_t max_patches) {
  // Grids by tile count (stable: columns, then rows ascending within a count).
  std::vector<std::array<int64_t, 2>> grids;
  for (int64_t n = min_patches; n <= max_patches; ++n)
    for (int64_t cols = 1; cols <= max_patches; ++cols)
      for (int64_t rows = 1; rows <= max_patches; ++rows)
        if (cols * rows == n) grids.push_back({cols, rows});
  const double aspect = static_cast<double>(width) / static_cast<double>(height);
  const double area = static_cast<double>(width * height);
  double best_diff = std::numeric_limits<double>::infinity();
  std::array<int64_t, 2> best{1, 1};
  for (const auto& g : grids) {
    const double diff = std::fabs(aspect - static_cast<double>(g[0]) / static_cast<double>(g[1]));
    if (diff < best_diff) {
      best_diff = diff;
      best = g;
    } else if (diff == best_diff && area > 0.5 * static_cast<double>(tile * tile * g[0] * g[1])) {
      best = g;  // a tie: more tiles while the image covers more than half of them
    }
  }
  return best;
}

ProcessedImage preprocess_internvl(const RgbImage& image, const InternVlImageConfig& c) {
  ProcessedImage out;
  out.tile_height = out.tile_width = c.tile;
  std::vector<RgbImage> tiles;
  const auto [cols, rows] = c.crop_to_patches && c.max_patches > 1
                                ? internvl_grid(image.height, image.width, c.tile, c.min_patches, c.max_patches)
                                : std::array<int64_t, 2>{1, 1};
  if (cols * rows == 1) {
    tiles.push_back(resize(image, c.tile, c.tile, c.resample));
  } else {
    const RgbImage canvas = resize(image, c.tile * cols, c.tile * rows, c.resample);
    for (int64_t i = 0; i < cols * rows; ++i) tiles.push_back(canvas.crop((i % cols) * c.tile, (i / cols) * c.tile, c.tile, c.tile));
    tiles.push_back(resize(image, c.tile, c.tile, c.resample));
    out.rows = rows;
    out.cols = cols;
  }
  for (const RgbImage& t : tiles) append_normalized_tile(t, c.normalization, out.pixels);
  return out;
}

std::string internvl_image_prompt(int64_t tiles, int64_t tokens_per_tile) {
  std::string out = "<img>";
  for (int64_t i = 0; i < tiles * tokens_per_tile; ++i) out += "<IMG_CONTEXT>";
  return out + "</img>";
}

}  // namespace genai::media
