// Random-weight models of real shapes, written in any checkpoint format with a usable tokenizer,
// so tests and benchmarks never need a download. Everything is a pure function of the arguments:
// same shape, arch, seed, format and weight type -> byte-identical files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model/model_config.h"
#include "model/model_writer.h"

namespace genai {

// "tiny", "stories15m", "smollm2-135m", "smollm2-360m", "llama3.2-1b", "llama3.2-3b", "phi-4-mini".
std::vector<std::string> synth_shape_names();
// The shape's config for architecture `arch` (model_config.h's names; empty: the shape's own,
// llama for every shape but phi-4-mini, which is phi3), with the family's features
// on: qwen2's biases, qwen3's q/k norms, Granite 3.3's multipliers, SmolLM3's NoPE layers (at
// least 4 layers, so one of them has none), Phi-4-mini's partial rotary and longrope. Unknown names are
// InputErrors listing the valid ones.
ModelConfig synth_config(const std::string& shape, const std::string& arch = "");

// Deterministic weights for `config`: each tensor drawn from its own stream (seed + name), so a
// tensor does not depend on which others are generated. Matrices ~ N(0, 0.02²), norms 1 + N(0,
// 0.02²), biases N(0, 0.02²) (a sum of four uniforms, scaled: no libm, same on every platform).
// Phi-4-mini's rotary layout scaled to `c`: 3/4 of each head rotates, longrope factors over an
// original context of half of max_positions. Used by synth and by tests.
void set_phi4_mini_rope(ModelConfig& c);
// Gemma 4 E2B's features scaled to `c` (at least 6 layers; every third global, the last third
// sharing keys and values, per-layer embeddings). Used by synth and by tests.
void set_gemma4_features(ModelConfig& c);

WeightSource synth_weights(const ModelConfig& config, uint64_t seed);
Tensor synth_tensor(const WeightSpec& spec, uint64_t seed);

// A vision tower of `family` for a text decoder of `text`: "tiny" gets a tiny one (4 tokens per
// tile: SmolVLM tiles of 64 pixels in patches of 16, InternVL tiles of 56 in patches of 14),
// every other shape the real tower (SmolVLM-500M's SigLIP base: tiles of 512, patch 16, scale 4,
// 64 tokens; InternVL3-1B's InternViT-300M: tiles of 448, patch 14, scale 2, 256 tokens). Weights
// as synth_tensor draws them (norm weights around 1, InternVL's layer scales around 0.1);
// image_token_id as given.
VisionTower synth_vision_tower(const std::string& shape, const ModelConfig& text, int32_t image_token_id, uint64_t seed,
                               VisionFamily family = VisionFamily::kSmolVlm);
// The special tokens SmolVLM's vocabulary adds: <fake_token_around_image>, <image>,
// <global-img>, <end_of_utterance>, <row_R_col_C> for R, C in 1..6.
std::vector<std::string> smolvlm_special_tokens();
// InternVL's: <img>, </img>, <IMG_CONTEXT>, <quad>, </quad>, <ref>, </ref>, <box>, </box>.
std::vector<std::string> internvl_special_tokens();

// Granite Speech's audio side for a text decoder of `text`: "tiny" gets a tiny one (4 encoder
// layers of 32, attention blocks of 20 rows, kernel 5, a 2-layer Q-Former of 32), every other
// shape granite-speech-3.3-2b's (16 layers of 1024 in blocks of 200, kernel 15, Q-Former of 1024).
// BatchNorm statistics around 0 and 1.
SpeechTower synth_speech_tower(const std::string& shape, const ModelConfig& text, int32_t audio_token_id, uint64_t seed);

struct SynthRequest {
  std::string shape = "tiny";
  std::string arch;                // an architecture (empty: the shape's own), or smolvlm / internvl3 /
                                   // granite_speech (multimodal folders, hf only)
  std::string format = "gguf";     // gguf | hf | llama2c
  std::string weight_type = "f32"; // gguf: f32 | f16 | bf16 | q8_0 | q4_0; hf: f32 | f16 | bf16; llama2c: f32
  uint64_t seed = 0;
  std::filesystem::path out;       // gguf / llama2c: file; hf: directory
};

struct SynthResult {
  ModelConfig config;
  std::filesystem::path checkpoint;  // what load_model takes
  std::filesystem::path tokenizer;   // tokenizer file written
  int64_t parameters = 0;
};

SynthResult write_synth_model(const SynthRequest& request);

}  // namespace genai
