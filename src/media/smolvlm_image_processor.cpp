#include "media/smolvlm_image_processor.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "core/error.h"
#include "media/processor_fields.h"

namespace genai::media {
namespace {

constexpr int64_t kMaxImageSize = 4096;  // transformers' MAX_IMAGE_SIZE

int64_t longest_edge_of(const nlohmann::json& v, const std::string& origin, const std::string& field) {
  if (!v.is_object() || !v.contains("longest_edge") || v.size() != 1)
    throw_input_error("{}: {} must be {{\"longest_edge\": N}}, not {}", origin, field, v.dump());
  return positive_int_field(v["longest_edge"], origin, field + ".longest_edge");
}

}  // namespace

SmolVlmImageConfig smolvlm_image_config(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw_input_error("{}: not a JSON object", origin);
  SmolVlmImageConfig c;
  for (const auto& [key, v] : j.items()) {
    if (key == "do_convert_rgb") c.do_convert_rgb = bool_field(v, origin, key);
    else if (key == "do_resize") c.do_resize = bool_field(v, origin, key);
    else if (key == "do_image_splitting") c.do_image_splitting = bool_field(v, origin, key);
    else if (key == "do_pad") (void)bool_field(v, origin, key);  // pads a batch to its largest image only
    else if (key == "size") c.longest_edge = longest_edge_of(v, origin, key);
    else if (key == "max_image_size") c.tile = longest_edge_of(v, origin, key);
    else if (read_pixel_field(key, v, origin, c.normalization, c.resample)) {
      // rescaling, normalisation and the resampling filter, read as every processor reads them
    } else if (key == "image_processor_type" || key == "processor_class") {
      const std::string name = v.is_string() ? v.get<std::string>() : std::string();
      if (name.rfind("Idefics3", 0) != 0 && name.rfind("SmolVLM", 0) != 0)
        throw_input_error("{}: {} {} is not SmolVLM's or Idefics3's", origin, key, v.dump());
    } else if (key == "return_row_col_info" || key == "data_format" || key == "input_data_format") {
      // What the Python call returns or how it lays arrays out: no effect on the values.
    } else {
      throw_input_error(
          "{}: field '{}' is not handled (handled: do_convert_rgb, do_resize, size, resample, do_image_splitting, "
          "max_image_size, do_rescale, rescale_factor, do_normalize, image_mean, image_std, do_pad)",
          origin, key);
    }
  }
  if (!c.do_convert_rgb) throw_input_error("{}: do_convert_rgb false is not handled (images are read as RGB)", origin);
  return c;
}

SmolVlmImageConfig read_smolvlm_image_config(const std::filesystem::path& path) {
  return smolvlm_image_config(read_json_file(path), path.string());
}

std::array<int64_t, 2> smolvlm_resized_size(int64_t height, int64_t width, int64_t longest_edge) {
  const double aspect = static_cast<double>(width) / static_cast<double>(height);
  int64_t h = height, w = width;
  if (w >= h) {
    w = longest_edge;
    h = static_cast<int64_t>(static_cast<double>(w) / aspect);
    if (h % 2 != 0) ++h;
  } else {
    h = longest_edge;
    w = static_cast<int64_t>(static_cast<double>(h) * aspect);
    if (w % 2 != 0) ++w;
  }
  h = std::max<int64_t>(h, 1);
  w = std::max<int64_t>(w, 1);
  const double aspect2 = static_cast<double>(w) / static_cast<double>(h);
  if (w >= h && w > kMaxImageSize) {
    w = kMaxImageSize;
    h = static_cast<int64_t>(static_cast<double>(w) / aspect2);
  } else if (h > w && h > kMaxImageSize) {
    h = kMaxImageSize;
    w = static_cast<int64_t>(static_cast<double>(h) * aspect2);
  }
  return {std::max<int64_t>(h, 1), std::max<int64_t>(w, 1)};
}

std::array<int64_t, 2> smolvlm_tiled_size(int64_t height, int64_t width, int64_t tile) {
  const double aspect = static_cast<double>(width) / static_cast<double>(height);
  const auto up = [tile](int64_t v) { return (v + tile - 1) / tile * tile; };
  int64_t h = height, w = width;
  if (w >= h) {
    w = up(w);
    h = up(static_cast<int64_t>(static_cast<double>(w) / aspect));
  } else {
    h = up(h);
    w = up(static_cast<int64_t>(static_cast<double>(h) * aspect));
  }
  return {h, w};
}

ProcessedImage preprocess_smolvlm(const RgbImage& input, const SmolVlmImageConfig& c) {
  RgbImage image = input;
  if (c.do_resize) {
    const auto [h, w] = smolvlm_resized_size(image.height, image.width, c.longest_edge);
    image = resize(image, w, h, c.resample);
  }
  ProcessedImage out;
  std::vector<RgbImage> tiles;
  if (c.do_image_splitting) {
    const auto [h, w] = smolvlm_tiled_size(image.height, image.width, c.tile);
    image = resize(image, w, h, c.resample);
    if (image.height > c.tile || image.width > c.tile) {
      out.rows = (image.height - c.tile) / c.tile + 1;
      out.cols = (image.width - c.tile) / c.tile + 1;
      for (int64_t r = 0; r < out.rows; ++r)
        for (int64_t col = 0; col < out.cols; ++col) tiles.push_back(image.crop(col * c.tile, r * c.tile, c.tile, c.tile));
      tiles.push_back(resize(image, c.tile, c.tile, c.resample));
    } else {
      tiles.push_back(image);
    }
  } else {
    tiles.push_back(resize(image, c.tile, c.tile, c.resample));
  }
  // Tiles of one image share one size (a lone small tile is padded to it by the batch's padding).
  out.tile_height = tiles.front().height;
  out.tile_width = tiles.front().width;
  for (const RgbImage& t : tiles) append_normalized_tile(t, c.normalization, out.pixels);
  return out;
}

std::string smolvlm_image_prompt(int64_t rows, int64_t cols, int64_t tokens_per_tile) {
  std::string image_tokens;
  for (int64_t i = 0; i < tokens_per_tile; ++i) image_tokens += "<image>";
  const std::string fake = "<fake_token_around_image>";
  std::string out;
  for (int64_t r = 1; r <= rows; ++r) {
    for (int64_t c = 1; c <= cols; ++c) out += fake + fmt::format("<row_{}_col_{}>", r, c) + image_tokens;
    out += "\n";
  }
  if (rows > 0 || cols > 0) out += "\n";
  return out + fake + "<global-img>" + image_tokens + fake;
}

}  // namespace genai::media
