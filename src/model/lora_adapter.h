// A PEFT LoRA adapter (adapter_config.json + adapter_model.safetensors) on the decoder's linear
// layers. Either merged into the weights, W += scale * B A (scale = lora_alpha / r, or / sqrt(r)
// with rsLoRA), with B A formed first as PEFT's merge forms it (Granite Speech's audio adapter,
// shipped in its model folder); or read unmerged, its factors kept beside the frozen weights for
// the graphs' low-rank path x A^T (scale B)^T (scale folded into B) (--lora_adapter). Only plain LoRA:
// every other setting that changes the arithmetic (DoRA, biases, per-module ranks or alphas,
// fan-in-fan-out storage, extra trained modules) is an InputError naming the file and the field.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
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

// An adapter's name (--lora_adapter NAME=DIR, --lora NAME): letters, digits and '_', as it
// becomes part of method and QNN graph names. InputError naming `option` otherwise.
void check_lora_adapter_name(std::string_view name, std::string_view option);

LoraAdapterConfig read_lora_adapter_config(const std::filesystem::path& adapter_config_json);

// One adapted linear layer's factors as float32, as stored: A [r, in] and B [out, r].
struct LoraFactors {
  Tensor a, b;
};

struct LoraAdapter {
  std::string name;  // how programs and runs name it (--lora_adapter NAME=DIR, --lora NAME)
  std::filesystem::path dir;
  LoraAdapterConfig config;
  std::map<std::string, LoraFactors> layers;  // canonical weight name -> its factors
  // Token windows of the adapter's own calibration text (--lora_calib_samples); empty: it is
  // calibrated on the base model's windows.
  std::vector<std::vector<int32_t>> calibration_windows;
};

// Reads the adapter in `dir` for the decoder of `config` whose weights are `weights`: InputError
// naming the file for a missing file, a tensor of a module the decoder has not (or of the
// encoder), shapes that do not fit, or a module with only one of its two factors.
LoraAdapter read_lora_adapter(std::string name, const std::filesystem::path& dir, const ModelConfig& config,
                              const Weights& weights);

// The base weights (shared, not copied) and the adapter's factors named lora_a_of / lora_b_of
// their layer's weight, B scaled: the weights of the adapter's decoder graphs, in which each
// adapted linear layer gains the low-rank path.
std::shared_ptr<const Weights> weights_with_adapter(const Weights& base, const LoraAdapter& adapter);

// The constant method a program describes an adapter by, "get_lora_adapter_<name>", and its
// value: JSON {"rank", "alpha", "rslora", "target_modules", "layers"}.
std::string lora_adapter_constant(std::string_view name);
inline constexpr std::string_view kLoraAdapterConstantPrefix = "get_lora_adapter_";
std::string lora_adapter_description(const LoraAdapter& adapter);

// Merges the adapter in `dir` into the decoder weights of `config` (canonical names), with
// read_lora_adapter's errors. Returns the number of layers merged.
int64_t merge_lora_adapter(const std::filesystem::path& dir, const ModelConfig& config, Weights& weights);

}  // namespace genai
