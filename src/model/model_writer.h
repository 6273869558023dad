// Writing a model (config + canonical weights + tokenizer vocabulary) in each checkpoint format,
// converting from the canonical HF layout the way each format's own tools do (GGUF llama-arch
// and llama2.c store q/k rows in the interleaved rotary order). Weights come from a
// WeightSource one tensor at a time, so writing a large model holds one converted tensor.
#pragma once

#include <filesystem>
#include <functional>
#include <variant>

#include "core/dtype.h"
#include "formats/ggml_types.h"
#include "model/gguf_metadata.h"
#include "model/model_config.h"
#include "model/speech_tower.h"
#include "model/vision_tower.h"
#include "model/weight_layout.h"
#include "model/weights.h"
#include "tokenizer/vocab.h"

namespace genai {

struct WeightSource {
  // float32 tensor of spec.shape for a canonical name of expected_weights(config).
  std::function<Tensor(const WeightSpec& spec)> get;
  static WeightSource of(const Weights& weights);
};

// GGUF v3: 2-D weights as `weight_type` (F32, F16, BF16, Q8_0, Q4_0, Q4_1; rows that are not a
// multiple of the block size fall back to F16), norms and biases as F32, llama3 rope scaling as
// a rope_freqs tensor. `vocab` goes into the tokenizer.ggml.* metadata.
void write_gguf_model(const std::filesystem::path& path, const ModelConfig& config, const WeightSource& weights,
                      GgmlType weight_type, const GgufVocab& vocab);

// Hugging Face folder: config.json, model.safetensors (sharded with an index above
// `max_shard_bytes`), and for a BPE vocabulary tokenizer.json + tokenizer_config.json. With a
// vision tower: a SmolVLM or InternVL checkpoint (the decoder under the family's prefix,
// config.json wrapping its text_config, the tower's tensors float32, its processor config copied
// when it has one); with a speech tower likewise a Granite Speech checkpoint.
void write_hf_model(const std::filesystem::path& dir, const ModelConfig& config, const WeightSource& weights,
                    DType dtype, const BpeVocab* vocab, uint64_t max_shard_bytes = uint64_t{2} << 30,
                    const VisionTower* vision = nullptr, const SpeechTower* speech = nullptr);

// llama2.c .bin (legacy float32 layout run.c reads) and, given a vocabulary, tokenizer.bin beside
// it. Configs llama2.c cannot express (qwen2 biases, rope scaling, rope_theta != 10000, head_dim
// != dim / n_heads) are an InputError.
void write_llama2c_model(const std::filesystem::path& path, const ModelConfig& config, const WeightSource& weights,
                         const SpmVocab* vocab);

}  // namespace genai
