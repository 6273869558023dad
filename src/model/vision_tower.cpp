#include "model/vision_tower.h"

#include <cstring>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace genai {
namespace {

using nlohmann::json;

constexpr const char* kVisionPrefix = "model.vision_model.";

// Keys of vision_config that change nothing at inference (training settings, bookkeeping, and
// the processor's sizes that some checkpoints repeat here), beside the ones read below.
const std::set<std::string>& ignored_vision_keys() {
  static const std::set<std::string> k = {"attention_dropout", "initializer_range", "model_type",  "dtype",
                                          "torch_dtype",       "_name_or_path",     "architectures", "transformers_version",
                                          "max_image_size",    "size",              "tie_word_embeddings", "use_base_siglip"};
  return k;
}

int64_t positive_int(const json& j, const char* key, const std::string& source) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) throw_input_error("{}: missing key {}", source, key);
  if (!it->is_number_integer() || it->get<int64_t>() <= 0)
    throw_input_error("{}: key {} must be a positive integer, got {}", source, key, it->dump());
  return it->get<int64_t>();
}

}  // namespace

void VisionTowerConfig::validate(const std::string& source) const {
  if (dim <= 0 || n_layers <= 0 || n_heads <= 0 || ffn_dim <= 0 || image_size <= 0 || patch_size <= 0 || channels <= 0)
    throw_input_error("{}: vision tower sizes must be positive", source);
  if (dim % n_heads != 0)
    throw_input_error("{}: vision hidden_size {} is not a multiple of num_attention_heads {}", source, dim, n_heads);
  if (image_size % patch_size != 0)
    throw_input_error("{}: vision image_size {} is not a multiple of patch_size {} (leftover pixels are not supported)",
                      source, image_size, patch_size);
  if (scale_factor <= 0 || patches_per_side() % scale_factor != 0)
    throw_input_error("{}: scale_factor {} must divide the {} patches per side", source, scale_factor, patches_per_side());
  if (text_dim <= 0) throw_input_error("{}: text_config.hidden_size must be positive", source);
  if (image_token_id < 0) throw_input_error("{}: image_token_id must be a token id", source);
}

namespace vision_names {
std::string patch_weight() { return std::string(kVisionPrefix) + "embeddings.patch_embedding.weight"; }
std::string patch_bias() { return std::string(kVisionPrefix) + "embeddings.patch_embedding.bias"; }
std::string positions() { return std::string(kVisionPrefix) + "embeddings.position_embedding.weight"; }
std::string layer(int64_t i, const char* suffix) { return fmt::format("{}encoder.layers.{}.{}", kVisionPrefix, i, suffix); }
std::string post_norm_weight() { return std::string(kVisionPrefix) + "post_layernorm.weight"; }
std::string post_norm_bias() { return std::string(kVisionPrefix) + "post_layernorm.bias"; }
std::string projection() { return "model.connector.modality_projection.proj.weight"; }
}  // namespace vision_names

std::vector<WeightSpec> vision_tower_weights(const VisionTowerConfig& c) {
  namespace vn = vision_names;
  const int64_t D = c.dim, F = c.ffn_dim, s = c.scale_factor;
  std::vector<WeightSpec> w{{vn::patch_weight(), {D, c.channels * c.patch_size * c.patch_size}},
                            {vn::patch_bias(), {D}},
                            {vn::positions(), {c.patches(), D}}};
  for (int64_t l = 0; l < c.n_layers; ++l) {
    for (const char* n : {"layer_norm1", "layer_norm2"}) {
      w.push_back({vn::layer(l, fmt::format("{}.weight", n).c_str()), {D}});
      w.push_back({vn::layer(l, fmt::format("{}.bias", n).c_str()), {D}});
    }
    for (const char* p : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
      w.push_back({vn::layer(l, fmt::format("self_attn.{}.weight", p).c_str()), {D, D}});
      w.push_back({vn::layer(l, fmt::format("self_attn.{}.bias", p).c_str()), {D}});
    }
    w.push_back({vn::layer(l, "mlp.fc1.weight"), {F, D}});
    w.push_back({vn::layer(l, "mlp.fc1.bias"), {F}});
    w.push_back({vn::layer(l, "mlp.fc2.weight"), {D, F}});
    w.push_back({vn::layer(l, "mlp.fc2.bias"), {D}});
  }
  w.push_back({vn::post_norm_weight(), {D}});
  w.push_back({vn::post_norm_bias(), {D}});
  w.push_back({vn::projection(), {c.text_dim, D * s * s}});
  return w;
}

bool is_vision_language_config(const json& config) {
  auto mt = config.find("model_type");
  if (mt == config.end() || !mt->is_string()) return false;
  const std::string t = mt->get<std::string>();
  return t == "smolvlm" || t == "idefics3";
}

VisionTowerConfig read_vision_tower_config(const json& top, const std::string& file) {
  auto vc = top.find("vision_config");
  if (vc == top.end() || !vc->is_object()) throw_input_error("{}: missing object vision_config", file);
  const std::string source = file + " vision_config";
  static const std::set<std::string> read = {"hidden_size",  "num_hidden_layers", "num_attention_heads",
                                             "intermediate_size", "image_size",   "patch_size",
                                             "num_channels", "layer_norm_eps",    "hidden_act"};
  for (const auto& [key, value] : vc->items())
    if (!read.count(key) && !ignored_vision_keys().count(key))
      throw_input_error("{}: key {} is not handled (handled: hidden_size, num_hidden_layers, num_attention_heads, "
                        "intermediate_size, image_size, patch_size, num_channels, layer_norm_eps, hidden_act)",
                        source, key);
  VisionTowerConfig c;
  c.dim = positive_int(*vc, "hidden_size", source);
  c.n_layers = positive_int(*vc, "num_hidden_layers", source);
  c.n_heads = positive_int(*vc, "num_attention_heads", source);
  c.ffn_dim = positive_int(*vc, "intermediate_size", source);
  c.image_size = positive_int(*vc, "image_size", source);
  c.patch_size = positive_int(*vc, "patch_size", source);
  if (vc->contains("num_channels")) c.channels = positive_int(*vc, "num_channels", source);
  if (auto e = vc->find("layer_norm_eps"); e != vc->end()) {
    if (!e->is_number() || e->get<double>() <= 0.0) throw_input_error("{}: layer_norm_eps must be a positive number", source);
    c.norm_eps = e->get<float>();
  }
  if (auto a = vc->find("hidden_act"); a != vc->end() && !(a->is_string() && a->get<std::string>() == "gelu_pytorch_tanh"))
    throw_input_error("{}: hidden_act {} is not supported (supported: gelu_pytorch_tanh)", source, a->dump());
  c.scale_factor = top.contains("scale_factor") ? positive_int(top, "scale_factor", file) : 2;
  c.image_token_id = static_cast<int32_t>(positive_int(top, "image_token_id", file));
  auto tc = top.find("text_config");
  if (tc == top.end() || !tc->is_object()) throw_input_error("{}: missing object text_config", file);
  c.text_dim = positive_int(*tc, "hidden_size", file + " text_config");
  c.validate(file);
  return c;
}

VisionTower load_vision_tower(const std::filesystem::path& dir, const json& config, const SafetensorsCheckpoint& ckpt) {
  VisionTower t;
  t.config = read_vision_tower_config(config, (dir / "config.json").string());
  t.weights.set_source(dir.string());
  const int64_t p = t.config.patch_size, ch = t.config.channels;
  for (const WeightSpec& spec : vision_tower_weights(t.config)) {
    auto loc = ckpt.find(spec.name);
    if (!loc.file) throw_input_error("{}: missing tensor {}", dir.string(), spec.name);
    if (spec.name == vision_names::patch_weight()) {  // the convolution [D, C, p, p] as a matrix
      check_weight_shape(loc.file->source(), spec.name, {spec.name, {spec.shape[0], ch, p, p}}, loc.entry->shape);
      t.weights.add(spec.name, loc.file->tensor_f32(*loc.entry).reshaped(spec.shape));
      continue;
    }
    check_weight_shape(loc.file->source(), spec.name, spec, loc.entry->shape);
    t.weights.add(spec.name, loc.file->tensor_f32(*loc.entry));
  }
  t.processor_config = dir / "preprocessor_config.json";
  if (!std::filesystem::exists(t.processor_config))
    throw_input_error("{}: no preprocessor_config.json (the image processor's settings)", dir.string());
  return t;
}

void add_vision_tower_config(const VisionTowerConfig& c, json& config) {
  config["model_type"] = "smolvlm";
  config["architectures"] = json::array({"SmolVLMForConditionalGeneration"});
  config["scale_factor"] = c.scale_factor;
  config["image_token_id"] = c.image_token_id;
  config["vision_config"] = {{"hidden_act", "gelu_pytorch_tanh"},
                             {"hidden_size", c.dim},
                             {"image_size", c.image_size},
                             {"intermediate_size", c.ffn_dim},
                             {"layer_norm_eps", static_cast<double>(c.norm_eps)},
                             {"model_type", "smolvlm_vision"},
                             {"num_attention_heads", c.n_heads},
                             {"num_channels", c.channels},
                             {"num_hidden_layers", c.n_layers},
                             {"patch_size", c.patch_size}};
}

std::vector<SafetensorsTensorToWrite> vision_tower_tensors(const VisionTowerConfig& c, const Weights& weights) {
  std::vector<SafetensorsTensorToWrite> out;
  for (const WeightSpec& spec : vision_tower_weights(c)) {
    const Tensor& t = weights.get(spec.name);
    if (t.shape() != spec.shape)
      throw_failure("vision tower: tensor {} has shape {}, expected {}", spec.name, shape_to_string(t.shape()),
                    shape_to_string(spec.shape));
    Shape stored = spec.shape;
    if (spec.name == vision_names::patch_weight()) stored = {c.dim, c.channels, c.patch_size, c.patch_size};
    out.push_back({spec.name, DType::kF32, stored, [t] {
                     std::vector<uint8_t> bytes(static_cast<size_t>(t.numel()) * sizeof(float));
                     std::memcpy(bytes.data(), t.data<float>(), bytes.size());
                     return bytes;
                   }});
  }
  return out;
}

}  // namespace genai
