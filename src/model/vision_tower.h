// The vision side of a vision-language checkpoint: a ViT tower (patch embedding, learned
// positions, pre-LN encoder layers) and the connector that turns its patches into text-model
// embeddings (pixel shuffle by scale_factor, then a projection). Two families, told apart by
// features, as ModelConfig tells decoders apart:
//   SmolVLM / Idefics3: SigLIP tower (tanh GELU, post LayerNorm), one bias-free projection.
//   InternVL: a CLS token (dropped before the shuffle), per-channel layer scales, exact GELU, no
//   post norm; projector LayerNorm -> Linear -> GELU -> Linear.
// The text decoder of the same checkpoint is an ordinary Model; this is what the vision_encoder
// artifact is built from.
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

enum class VisionFamily { kSmolVlm, kInternVl };
std::string_view vision_family_name(VisionFamily f);  // "smolvlm", "internvl"

struct VisionTowerConfig {
  VisionFamily family = VisionFamily::kSmolVlm;
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
  // Family features.
  bool cls_token = false;      // a learned token ahead of the patches (its own position row)
  bool layer_scale = false;    // each block's attention and MLP outputs times a per-channel vector
  bool exact_gelu = false;     // erf GELU (else the tanh form)
  bool post_norm = true;       // a LayerNorm after the last layer
  bool mlp_projector = false;  // LayerNorm + Linear + GELU + Linear (biased), else one bias-free Linear
  float projector_norm_eps = 1e-5f;

  int64_t patches_per_side() const { return image_size / patch_size; }
  int64_t patches() const { return patches_per_side() * patches_per_side(); }
  int64_t positions() const { return patches() + (cls_token ? 1 : 0); }
  // Image tokens per tile: patches / scale_factor².
  int64_t tokens_per_image() const { return patches() / (scale_factor * scale_factor); }
  // InputError naming `source` for shapes the tower cannot have.
  void validate(const std::string& source) const;
};

// The family's features on `c` (cls token, layer scale, activation, norms, projector).
void set_vision_family(VisionTowerConfig& c, VisionFamily family);

// Canonical names of the tower's tensors (SmolVLM's own checkpoint names; InternVL's map onto
// them). The patch embedding's convolution is held as the equivalent matrix [dim, channels *
// patch²] (a patch's pixels in channel, row, column order); the CLS token as [1, dim]; the
// position table as [positions, dim].
namespace vision_names {
std::string patch_weight();
std::string patch_bias();
std::string positions();
std::string cls_token();
std::string layer(int64_t i, const char* suffix);  // layer(0, "self_attn.q_proj.weight"); "layer_scale1"
std::string post_norm_weight();
std::string post_norm_bias();
std::string projection();              // SmolVLM's connector
std::string projector(const char* suffix);  // InternVL's: "norm.weight", "fc1.bias", ...
}  // namespace vision_names

std::vector<WeightSpec> vision_tower_weights(const VisionTowerConfig& config);

struct VisionTower {
  VisionTowerConfig config;
  Weights weights;
  std::filesystem::path processor_config;  // preprocessor_config.json beside config.json
};

// True when config.json's model_type is a vision-language checkpoint whose vision side we build
// (smolvlm, idefics3, internvl).
bool is_vision_language_config(const nlohmann::json& config);
// The tower's config from config.json (vision_config, the connector's settings, image_token_id;
// text_dim from text_config.hidden_size). InputError naming the file and the key for missing
// keys, unhandled ones, and values we do not build.
VisionTowerConfig read_vision_tower_config(const nlohmann::json& config, const std::string& source);
// The tower's tensors from the checkpoint (shapes checked), and the processor config's path.
VisionTower load_vision_tower(const std::filesystem::path& dir, const nlohmann::json& config,
                              const SafetensorsCheckpoint& checkpoint);

// config.json's vision part for `c`, merged into `config` (model_type, vision_config, the
// connector's keys, image_token_id); the tensors under the family's checkpoint names and shapes.
void add_vision_tower_config(const VisionTowerConfig& c, nlohmann::json& config);
std::vector<SafetensorsTensorToWrite> vision_tower_tensors(const VisionTowerConfig& c, const Weights& weights);

}  // namespace genai
