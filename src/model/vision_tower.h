// The vision side of a vision-language checkpoint: SmolVLM / Idefics3's SigLIP-style tower (patch
// embedding, learned positions, pre-LN encoder layers, post LayerNorm) and its connector (pixel
// shuffle by scale_factor, then one bias-free projection to the text model's width). The text
// decoder of the same checkpoint is an ordinary Model; this is what the vision_encoder artifact
// is built from.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "formats/safetensors_file.h"
#include "model/weight_layout.h"
#include "model/weights.h"

namespace genai {

struct VisionTowerConfig {
  int64_t dim = 0;        // vision_config.hidden_size
  int64_t n_layers = 0;
  int64_t n_heads = 0;
  int64_t ffn_dim = 0;    // intermediate_size
  int64_t image_size = 0; // the square tile the tower takes
  int64_t patch_size = 0;
  int64_t channels = 3;
  float norm_eps = 1e-6f;
  int64_t scale_factor = 1;   // the connector's pixel shuffle
  int64_t text_dim = 0;       // the text decoder's hidden size (the connector's output)
  int32_t image_token_id = -1;

  int64_t patches_per_side() const { return image_size / patch_size; }
  int64_t patches() const { return patches_per_side() * patches_per_side(); }
  // <image> tokens per tile: patches / scale_factor².
  int64_t tokens_per_image() const { return patches() / (scale_factor * scale_factor); }
  // InputError naming `source` for shapes the tower cannot have.
  void validate(const std::string& source) const;
};

// The tower's tensors under the checkpoint's own names ("model.vision_model.*",
// "model.connector.*"), except the patch embedding's convolution, which is held as the
// equivalent matrix [dim, channels * patch²] (the same numbers: a patch's pixels in channel,
// row, column order).
namespace vision_names {
std::string patch_weight();
std::string patch_bias();
std::string positions();
std::string layer(int64_t i, const char* suffix);  // layer(0, "self_attn.q_proj.weight")
std::string post_norm_weight();
std::string post_norm_bias();
std::string projection();
}  // namespace vision_names

std::vector<WeightSpec> vision_tower_weights(const VisionTowerConfig& config);

struct VisionTower {
  VisionTowerConfig config;
  Weights weights;
  std::filesystem::path processor_config;  // preprocessor_config.json beside config.json
};

// True when config.json's model_type is a vision-language checkpoint whose vision side we build
// (smolvlm, idefics3).
bool is_vision_language_config(const nlohmann::json& config);
// The tower's config from config.json (vision_config, scale_factor, image_token_id; text_dim from
// text_config.hidden_size). InputError naming the file and the key for missing keys, unhandled
// ones, and values we do not build (hidden_act other than gelu_pytorch_tanh).
VisionTowerConfig read_vision_tower_config(const nlohmann::json& config, const std::string& source);
// The tower's tensors from the checkpoint (shapes checked), and the processor config's path.
VisionTower load_vision_tower(const std::filesystem::path& dir, const nlohmann::json& config,
                              const SafetensorsCheckpoint& checkpoint);

// config.json's vision part for `c`, merged into `config` (model_type smolvlm, vision_config,
// scale_factor, image_token_id); the tensors as the checkpoint stores them (conv weight 4-D).
void add_vision_tower_config(const VisionTowerConfig& c, nlohmann::json& config);
std::vector<SafetensorsTensorToWrite> vision_tower_tensors(const VisionTowerConfig& c, const Weights& weights);

}  // namespace genai
