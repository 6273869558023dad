// A loaded decoder: config + canonical float weights + the tokenizer that belongs to it.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "model/lora_adapter.h"
#include "model/model_config.h"
#include "model/speech_tower.h"
#include "model/vision_tower.h"
#include "model/weights.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace genai {

enum class CheckpointFormat { kGguf, kHuggingFace, kLlama2c };
std::string_view checkpoint_format_name(CheckpointFormat f);  // "gguf", "hf", "llama2c"

struct Model {
  ModelConfig config;
  Weights weights;                              // float32, HF layout and names (weights.h)
  std::shared_ptr<const Tokenizer> tokenizer;   // null only when none was found or asked for
  ChatFormat chat_format = ChatFormat::kNone;   // from the checkpoint's metadata when it says
  CheckpointFormat format = CheckpointFormat::kGguf;
  std::filesystem::path checkpoint_path;
  std::filesystem::path tokenizer_path;         // the file a runtime can load the tokenizer from
  // A vision-language checkpoint's vision tower and connector (SmolVLM); null for text-only models.
  std::shared_ptr<const VisionTower> vision;
  // A speech model's audio encoder and projector (Granite Speech); null otherwise.
  std::shared_ptr<const SpeechTower> speech;
  // LoRA adapters kept beside the frozen weights (--lora_adapter): compiled as methods of their own.
  std::vector<std::shared_ptr<const LoraAdapter>> lora_adapters;
};

struct LoadOptions {
  std::filesystem::path tokenizer_path;  // --tokenizer_model / --tokenizer_bin; empty = from checkpoint
  bool load_tokenizer = true;
};

// Detects the format (GGUF magic, HF folder with config.json, llama2.c .bin) and loads it.
// Bad input throws InputError naming the file and the key or tensor.
Model load_model(const std::filesystem::path& checkpoint, const LoadOptions& options = {});

// A tied model gets its own output head (a copy of the embedding table as lm_head.weight), so the
// two can be quantized differently (-E/--embedding_quantize). No-op for an untied model.
void untie_output_head(Model& model);

// The float model of an adapter's graphs: `base` with the adapter's factors among its weights
// (weights_with_adapter; the base tensors shared, not copied) and no adapters of its own.
std::shared_ptr<const Model> model_with_adapter(const Model& base, const LoraAdapter& adapter);

}  // namespace genai
