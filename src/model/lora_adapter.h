// A PEFT LoRA adapter shipped in a model folder (adapter_config.json + adapter_model.safetensors),
// as Granite Speech ships the text model's audio adapter: merged into the decoder's weights,
// W += scale * B A per adapted linear layer (scale = lora_alpha / r, or / sqrt(r) with rsLoRA),
// with B A formed first as PEFT's merge forms it. Only plain LoRA on the decoder's linear layers:
// every other setting that changes the arithmetic (DoRA, biases, per-module ranks or alphas,
// fan-in-fan-out storage, extra trained modules) is an InputError naming the file and the field.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "model/model_config.h"
#include "model/weights.h"

namespace genai {

struct LoraAdapterConfig {
  int64_t rank = 0;
  double alpha = 0.0;
  bool rslora = false;
  std::vector<std::string> target_modules;  // q_proj, v_proj, ... (the decoder's linear layers)
  double scale() const;
};

LoraAdapterConfig read_lora_adapter_config(const std::filesystem::path& adapter_config_json);

// Merges the adapter in `dir` into the decoder weights of `config` (canonical names). InputError
// naming the file for a missing file, a tensor of a module the decoder has not (or of the
// encoder), shapes that do not fit, or a module with only one of its two factors. Returns the
// number of layers merged.
int64_t merge_lora_adapter(const std::filesystem::path& dir, const ModelConfig& config, Weights& weights);

}  // namespace genai
