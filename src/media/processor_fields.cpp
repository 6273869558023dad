#include "media/processor_fields.h"

#include <fstream>

#include "core/error.h"

namespace genai::media {

void append_normalized_tile(const RgbImage& tile, const TileNormalization& n, std::vector<float>& out) {
  const int64_t plane = tile.width * tile.height;
  const size_t base = out.size();
  out.resize(base + static_cast<size_t>(3 * plane));
  for (int64_t i = 0; i < plane; ++i)
    for (int ch = 0; ch < 3; ++ch) {
      float v = tile.pixels[static_cast<size_t>(i * 3 + ch)];
      if (n.do_rescale) v = static_cast<float>(static_cast<double>(v) * n.rescale_factor);
      if (n.do_normalize) v = (v - n.mean[static_cast<size_t>(ch)]) / n.std[static_cast<size_t>(ch)];
      out[base + static_cast<size_t>(ch * plane + i)] = v;
    }
}

int64_t positive_int_field(const nlohmann::json& v, const std::string& origin, const std::string& field) {
  if (!v.is_number_integer() || v.get<int64_t>() <= 0)
    throw_input_error("{}: {} must be a positive integer, not {}", origin, field, v.dump());
  return v.get<int64_t>();
}

bool bool_field(const nlohmann::json& v, const std::string& origin, const std::string& field) {
  if (!v.is_boolean()) throw_input_error("{}: {} must be true or false, not {}", origin, field, v.dump());
  return v.get<bool>();
}

std::array<float, 3> three_floats_field(const nlohmann::json& v, const std::string& origin, const std::string& field) {
  std::array<float, 3> out{};
  if (v.is_number()) {
    out.fill(v.get<float>());
    return out;
  }
  if (!v.is_array() || v.size() != 3 || !v[0].is_number() || !v[1].is_number() || !v[2].is_number())
    throw_input_error("{}: {} must be a number or three numbers, not {}", origin, field, v.dump());
  for (size_t i = 0; i < 3; ++i) out[i] = v[i].get<float>();
  return out;
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw_input_error("{}: cannot be read", path.string());
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw_input_error("{}: not valid JSON: {}", path.string(), e.what());
  }
  return j;
}

bool read_pixel_field(const std::string& key, const nlohmann::json& v, const std::string& origin, TileNormalization& n,
                      Resample& resample) {
  if (key == "do_rescale") n.do_rescale = bool_field(v, origin, key);
  else if (key == "do_normalize") n.do_normalize = bool_field(v, origin, key);
  else if (key == "rescale_factor") {
    if (!v.is_number()) throw_input_error("{}: rescale_factor must be a number, not {}", origin, v.dump());
    n.rescale_factor = v.get<double>();
  } else if (key == "image_mean") n.mean = three_floats_field(v, origin, key);
  else if (key == "image_std") n.std = three_floats_field(v, origin, key);
  else if (key == "resample") {
    if (!v.is_number_integer() || !resample_from_pillow(v.get<int64_t>(), resample))
      throw_input_error("{}: resample {} is not handled (valid: 1 LANCZOS, 2 BILINEAR, 3 BICUBIC)", origin, v.dump());
  } else {
    return false;
  }
  return true;
}

}  // namespace genai::media
