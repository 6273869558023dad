#include "model/vision_tower.h"

#include <cmath>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/tower_tensors.h"

namespace genai {
namespace {

using nlohmann::json;

constexpr const char* kVisionPrefix = "model.vision_model.";

int64_t positive_int(const json& j, const char* key, const std::string& source) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) throw_input_error("{}: missing key {}", source, key);
  if (!it->is_number_integer() || it->get<int64_t>() <= 0)
    throw_input_error("{}: key {} must be a positive integer, got {}", source, key, it->dump());
  return it->get<int64_t>();
}

// An int, or InternVL's [height, width] of one value.
int64_t square_int(const json& j, const char* key, const std::string& source) {
  auto it = j.find(key);
  if (it != j.end() && it->is_array()) {
    if (it->size() != 2 || !(*it)[0].is_number_integer() || (*it)[0] != (*it)[1] || (*it)[0].get<int64_t>() <= 0)
      throw_input_error("{}: key {} must be one positive size or [n, n], got {}", source, key, it->dump());
    return (*it)[0].get<int64_t>();
  }
  return positive_int(j, key, source);
}

// Rejects a key whose value is not the one we build (its absence is the default).
void require_value(const json& j, const char* key, const json& want, const std::string& source) {
  if (auto it = j.find(key); it != j.end() && !it->is_null() && *it != want)
    throw_input_error("{}: {} = {} is not supported (supported: {})", source, key, it->dump(), want.dump());
}

void check_keys(const json& j, const std::set<std::string>& handled, const std::set<std::string>& ignored,
                const std::string& source) {
  for (const auto& [key, value] : j.items())
    if (!handled.count(key) && !ignored.count(key)) {
      std::string list;
      for (const auto& k : handled) list += (list.empty() ? "" : ", ") + k;
      throw_input_error("{}: key {} is not handled (handled: {})", source, key, list);
    }
}

// Keys that change nothing at inference: training settings and bookkeeping (and the processor's
// sizes some SmolVLM checkpoints repeat here).
const std::set<std::string>& bookkeeping_keys() {
  static const std::set<std::string> k = {"attention_dropout", "initializer_range", "model_type", "dtype", "torch_dtype",
                                          "_name_or_path", "architectures", "transformers_version", "max_image_size",
                                          "size", "tie_word_embeddings", "use_base_siglip", "hidden_dropout_prob",
                                          "projection_dropout", "layer_scale_init_value", "use_mask_token"};
  return k;
}

// Where the family's checkpoint keeps the canonical tensor `spec`, and in which shape.
TowerTensor stored_tensor(const VisionTowerConfig& c, const WeightSpec& spec) {
  namespace vn = vision_names;
  const Shape conv{c.dim, c.channels, c.patch_size, c.patch_size};
  if (c.family == VisionFamily::kSmolVlm) {
    if (spec.name == vn::patch_weight()) return {spec.name, conv};
    return {spec.name, spec.shape};
  }
  // InternVL, as transformers saves it (its module layout has "model." in front; the loader tries both).
  const std::string tower = "vision_tower.", emb = tower + "embeddings.";
  if (spec.name == vn::patch_weight()) return {emb + "patch_embeddings.projection.weight", conv};
  if (spec.name == vn::patch_bias()) return {emb + "patch_embeddings.projection.bias", spec.shape};
  if (spec.name == vn::cls_token()) return {emb + "cls_token", {1, 1, c.dim}};
  if (spec.name == vn::positions()) return {emb + "position_embeddings", {1, c.positions(), c.dim}};
  const std::string layers = fmt::format("{}encoder.layers.", kVisionPrefix);
  if (spec.name.rfind(layers, 0) == 0) {
    const size_t dot = spec.name.find('.', layers.size());
    const std::string index = spec.name.substr(layers.size(), dot - layers.size()), rest = spec.name.substr(dot + 1);
    static const std::vector<std::pair<std::string, std::string>> renames = {
        {"layer_norm1.", "layernorm_before."}, {"layer_norm2.", "layernorm_after."},
        {"self_attn.out_proj.", "attention.projection_layer."}, {"self_attn.", "attention."},
        {"layer_scale1", "lambda_1"}, {"layer_scale2", "lambda_2"}};
    std::string name = rest;
    for (const auto& [from, to] : renames)
      if (name.rfind(from, 0) == 0) {
        name = to + name.substr(from.size());
        break;
      }
    return {tower + "encoder.layer." + index + "." + name, spec.shape};
  }
  static const std::vector<std::pair<std::string, std::string>> projector = {
      {"norm.", "layer_norm."}, {"fc1.", "linear_1."}, {"fc2.", "linear_2."}};
  const std::string connector = "model.connector.";
  if (spec.name.rfind(connector, 0) == 0) {
    const std::string rest = spec.name.substr(connector.size());
    for (const auto& [from, to] : projector)
      if (rest.rfind(from, 0) == 0) return {"multi_modal_projector." + to + rest.substr(from.size()), spec.shape};
  }
  throw_failure("vision tower: {} has no InternVL name", spec.name);
}

}  // namespace

std::string_view vision_family_name(VisionFamily f) { return f == VisionFamily::kInternVl ? "internvl" : "smolvlm"; }

void set_vision_family(VisionTowerConfig& c, VisionFamily family) {
  c.family = family;
  const bool internvl = family == VisionFamily::kInternVl;
  c.cls_token = c.layer_scale = c.exact_gelu = c.mlp_projector = internvl;
  c.post_norm = !internvl;
}

void VisionTowerConfig::validate(const std::string& source) const {
  if (dim <= 0 || n_layers <= 0 || n_heads <= 0 || ffn_dim <= 0 || image_size <= 0 || patch_size <= 0 || channels <= 0)
    throw_input_error("{}: vision tower sizes must be positive", source);
  if (dim % n_heads != 0)
    throw_input_error("{}: vision hidden_size {} is not a multiple of num_attention_heads {}", source, dim, n_heads);
  if (image_size % patch_size != 0)
    throw_input_error("{}: vision image_size {} is not a multiple of patch_size {} (leftover pixels are not supported)",
                      source, image_size, patch_size);
  if (scale_factor <= 0 || patches_per_side() % scale_factor != 0)
    throw_input_error("{}: the pixel shuffle's factor {} must divide the {} patches per side", source, scale_factor,
                      patches_per_side());
  if (text_dim <= 0) throw_input_error("{}: text_config.hidden_size must be positive", source);
  if (image_token_id < 0) throw_input_error("{}: image_token_id must be a token id", source);
}

namespace vision_names {
std::string patch_weight() { return fmt::format("{}embeddings.patch_embedding.weight", kVisionPrefix); }
std::string patch_bias() { return fmt::format("{}embeddings.patch_embedding.bias", kVisionPrefix); }
std::string positions() { return fmt::format("{}embeddings.position_embedding.weight", kVisionPrefix); }
std::string cls_token() { return fmt::format("{}embeddings.class_embedding", kVisionPrefix); }
std::string layer(int64_t i, const char* suffix) { return fmt::format("{}encoder.layers.{}.{}", kVisionPrefix, i, suffix); }
std::string post_norm_weight() { return fmt::format("{}post_layernorm.weight", kVisionPrefix); }
std::string post_norm_bias() { return fmt::format("{}post_layernorm.bias", kVisionPrefix); }
std::string projection() { return "model.connector.modality_projection.proj.weight"; }
std::string projector(const char* suffix) { return fmt::format("model.connector.{}", suffix); }
}  // namespace vision_names

std::vector<WeightSpec> vision_tower_weights(const VisionTowerConfig& c) {
  namespace vn = vision_names;
  const int64_t D = c.dim, F = c.ffn_dim, S = D * c.scale_factor * c.scale_factor;
  std::vector<WeightSpec> w{{vn::patch_weight(), {D, c.channels * c.patch_size * c.patch_size}}, {vn::patch_bias(), {D}}};
  if (c.cls_token) w.push_back({vn::cls_token(), {1, D}});
  w.push_back({vn::positions(), {c.positions(), D}});
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
    if (c.layer_scale) {
      w.push_back({vn::layer(l, "layer_scale1"), {D}});
      w.push_back({vn::layer(l, "layer_scale2"), {D}});
    }
  }
  if (c.post_norm) {
    w.push_back({vn::post_norm_weight(), {D}});
    w.push_back({vn::post_norm_bias(), {D}});
  }
  if (c.mlp_projector) {
    w.push_back({vn::projector("norm.weight"), {S}});
    w.push_back({vn::projector("norm.bias"), {S}});
    w.push_back({vn::projector("fc1.weight"), {c.text_dim, S}});
    w.push_back({vn::projector("fc1.bias"), {c.text_dim}});
    w.push_back({vn::projector("fc2.weight"), {c.text_dim, c.text_dim}});
    w.push_back({vn::projector("fc2.bias"), {c.text_dim}});
  } else {
    w.push_back({vn::projection(), {c.text_dim, S}});
  }
  return w;
}

bool is_vision_language_config(const json& config) {
  auto mt = config.find("model_type");
  if (mt == config.end() || !mt->is_string()) return false;
  const std::string t = mt->get<std::string>();
  return t == "smolvlm" || t == "idefics3" || t == "internvl";
}

VisionTowerConfig read_vision_tower_config(const json& top, const std::string& file) {
  auto vc = top.find("vision_config");
  if (vc == top.end() || !vc->is_object()) throw_input_error("{}: missing object vision_config", file);
  const std::string source = file + " vision_config";
  const bool internvl = top.value("model_type", "") == "internvl";
  VisionTowerConfig c;
  set_vision_family(c, internvl ? VisionFamily::kInternVl : VisionFamily::kSmolVlm);
  std::set<std::string> handled = {"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                                   "image_size", "patch_size", "num_channels", "layer_norm_eps", "hidden_act"};
  if (internvl)
    for (const char* k : {"attention_bias", "use_qk_norm", "norm_type", "use_absolute_position_embeddings", "use_mean_pooling"})
      handled.insert(k);
  check_keys(*vc, handled, bookkeeping_keys(), source);
  c.dim = positive_int(*vc, "hidden_size", source);
  c.n_layers = positive_int(*vc, "num_hidden_layers", source);
  c.n_heads = positive_int(*vc, "num_attention_heads", source);
  c.ffn_dim = positive_int(*vc, "intermediate_size", source);
  c.image_size = square_int(*vc, "image_size", source);
  c.patch_size = square_int(*vc, "patch_size", source);
  if (vc->contains("num_channels")) c.channels = positive_int(*vc, "num_channels", source);
  if (auto e = vc->find("layer_norm_eps"); e != vc->end()) {
    if (!e->is_number() || e->get<double>() <= 0.0) throw_input_error("{}: layer_norm_eps must be a positive number", source);
    c.norm_eps = e->get<float>();
  }
  require_value(*vc, "hidden_act", internvl ? "gelu" : "gelu_pytorch_tanh", source);
  if (internvl) {
    // What InternVL3 ships; the others would change the tower we build.
    require_value(*vc, "attention_bias", true, source);
    require_value(*vc, "use_qk_norm", false, source);
    require_value(*vc, "norm_type", "layer_norm", source);
    require_value(*vc, "use_absolute_position_embeddings", true, source);
    require_value(*vc, "use_mean_pooling", true, source);
    require_value(top, "projector_hidden_act", "gelu", file);
    require_value(top, "vision_feature_layer", -1, file);
    require_value(top, "vision_feature_select_strategy", "default", file);
    auto r = top.find("downsample_ratio");
    if (r == top.end() || !r->is_number() || r->get<double>() <= 0.0 || r->get<double>() > 1.0)
      throw_input_error("{}: downsample_ratio must be a number in (0, 1]", file);
    const double inv = 1.0 / r->get<double>();
    c.scale_factor = static_cast<int64_t>(std::lround(inv));
    if (std::fabs(inv - static_cast<double>(c.scale_factor)) > 1e-9)
      throw_input_error("{}: downsample_ratio {} is not 1 / an integer", file, r->get<double>());
  } else {
    c.scale_factor = top.contains("scale_factor") ? positive_int(top, "scale_factor", file) : 2;
  }
  c.image_token_id = static_cast<int32_t>(positive_int(top, "image_token_id", file));
  auto tc = top.find("text_config");
  if (tc == top.end() || !tc->is_object()) throw_input_error("{}: missing object text_config", file);
  c.text_dim = positive_int(*tc, "hidden_size", file + " text_config");
  c.validate(file);
  if (internvl)
    if (auto n = top.find("image_seq_length"); n != top.end() && *n != c.tokens_per_image())
      throw_input_error("{}: image_seq_length {} is not the {} tokens a tile gives ((image_size / patch_size)² / {}²)", file,
                        n->dump(), c.tokens_per_image(), c.scale_factor);
  return c;
}

VisionTower load_vision_tower(const std::filesystem::path& dir, const json& config, const SafetensorsCheckpoint& ckpt) {
  VisionTower t;
  t.config = read_vision_tower_config(config, (dir / "config.json").string());
  t.weights = read_tower_tensors(dir, vision_tower_weights(t.config), ckpt,
                                 [&](const WeightSpec& spec) { return stored_tensor(t.config, spec); });
  t.processor_config = tower_processor_config(dir, "the image processor's settings");
  return t;
}

void add_vision_tower_config(const VisionTowerConfig& c, json& config) {
  json vc = {{"hidden_size", c.dim},
             {"image_size", c.image_size},
             {"intermediate_size", c.ffn_dim},
             {"layer_norm_eps", static_cast<double>(c.norm_eps)},
             {"num_attention_heads", c.n_heads},
             {"num_channels", c.channels},
             {"num_hidden_layers", c.n_layers},
             {"patch_size", c.patch_size}};
  config["image_token_id"] = c.image_token_id;
  if (c.family == VisionFamily::kInternVl) {
    vc["model_type"] = "internvl_vision";
    vc["hidden_act"] = "gelu";
    vc["attention_bias"] = true;
    vc["use_qk_norm"] = false;
    vc["norm_type"] = "layer_norm";
    vc["use_absolute_position_embeddings"] = true;
    vc["use_mean_pooling"] = true;
    config["model_type"] = "internvl";
    config["architectures"] = json::array({"InternVLForConditionalGeneration"});
    config["downsample_ratio"] = 1.0 / static_cast<double>(c.scale_factor);
    config["projector_hidden_act"] = "gelu";
    config["vision_feature_layer"] = -1;
    config["vision_feature_select_strategy"] = "default";
    config["image_seq_length"] = c.tokens_per_image();
  } else {
    vc["model_type"] = "smolvlm_vision";
    vc["hidden_act"] = "gelu_pytorch_tanh";
    config["model_type"] = "smolvlm";
    config["architectures"] = json::array({"SmolVLMForConditionalGeneration"});
    config["scale_factor"] = c.scale_factor;
  }
  config["vision_config"] = std::move(vc);
}

std::vector<SafetensorsTensorToWrite> vision_tower_tensors(const VisionTowerConfig& c, const Weights& weights) {
  return tower_tensors_to_write("vision tower", vision_tower_weights(c), weights,
                                [&](const WeightSpec& spec) { return stored_tensor(c, spec); });
}

}  // namespace genai
