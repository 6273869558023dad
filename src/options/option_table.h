// The one typed table of every option: the 67 of upstream's llama.py flow (export_utils common
// args + llama.py) plus ours (checkpoint formats, quant recipe, sampling, threads, json, lowering).
// `genai pipeline|compile|run|eval` CLIs and the --config_file reader are derived from it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "options/option_spec.h"

namespace genai::options {

std::span<const OptionSpec> option_table();

// By snake_case name, kebab-case alias or upstream spelling; nullptr when unknown.
const OptionSpec* find_option(std::string_view name);

// The upstream choices of --decoder_model (SUPPORTED_LLM_MODELS).
std::span<const std::string> supported_decoder_models();
// Upstream's --num_sharding for a --decoder_model name (1 for a model upstream does not shard or an
// unknown name).
int64_t upstream_num_sharding(std::string_view decoder_model);

}  // namespace genai::options
