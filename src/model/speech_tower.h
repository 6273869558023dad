// The speech side of Granite Speech: a Conformer encoder (an input projection, Macaron blocks of
// half feed-forward, block-local self-attention with Shaw relative positions, a convolution
// module, half feed-forward and a LayerNorm; a self-conditioned CTC head after the middle block)
// and a windowed Q-Former projector (learned queries cross-attending each window of encoder
// frames, then one projection to the text model's width). What the audio_encoder artifact is
// built from; the text decoder of the same checkpoint is an ordinary Model (granite).
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

struct SpeechTowerConfig {
  // encoder_config
  int64_t input_dim = 160, n_layers = 0, dim = 0, ffn_mult = 4, n_heads = 0, head_dim = 0, ctc_dim = 0;
  int64_t context = 200, max_pos_emb = 512, conv_kernel = 15, conv_expansion = 2;
  // projector_config (BLIP-2's Q-Former) and the windows
  int64_t q_dim = 0, q_layers = 0, q_heads = 0, q_ffn = 0, q_encoder_dim = 0;
  float q_norm_eps = 1e-12f;
  int64_t window = 15, downsample = 5;
  int64_t text_dim = 0;
  int32_t audio_token_id = -1;
  // has_lora_adapter: the folder's PEFT adapter for the text model (model/lora_adapter.h), which
  // transformers switches on when audio is given; merged into the decoder at load.
  bool lora_adapter = false;

  int64_t queries() const { return window / downsample; }
  int64_t inner_dim() const { return n_heads * head_dim; }
  int64_t conv_dim() const { return dim * conv_expansion; }
  // InputError naming `source` for shapes the tower cannot have.
  void validate(const std::string& source) const;
};

// The tower's tensors under the checkpoint's own names ("encoder.*", "projector.*"), except the
// convolutions, held as matrices: pointwise [out, in, 1] -> [out, in], depthwise [ch, 1, k] ->
// [ch, k]. BatchNorm's counter (num_batches_tracked) is not read.
std::vector<WeightSpec> speech_tower_weights(const SpeechTowerConfig& config);

struct SpeechTower {
  SpeechTowerConfig config;
  Weights weights;
  std::filesystem::path processor_config;  // preprocessor_config.json (the feature extractor's)
};

bool is_speech_config(const nlohmann::json& config);  // model_type granite_speech
// InputError naming the file and the key for missing keys, unhandled ones, and values we do not
// build (a LoRA adapter, another Q-Former kind).
SpeechTowerConfig read_speech_tower_config(const nlohmann::json& config, const std::string& source);
SpeechTower load_speech_tower(const std::filesystem::path& dir, const nlohmann::json& config,
                              const SafetensorsCheckpoint& checkpoint);

// config.json's speech part for `c`, merged into `config` (model_type granite_speech, the
// encoder's and projector's configs, audio_token_index, the windows); the tensors under the
// checkpoint's names and shapes.
void add_speech_tower_config(const SpeechTowerConfig& c, nlohmann::json& config);
std::vector<SafetensorsTensorToWrite> speech_tower_tensors(const SpeechTowerConfig& c, const Weights& weights);

}  // namespace genai
