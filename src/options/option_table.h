// The one typed table of every option: the 67 of upstream's llama.py flow (export_utils common
// args + llama.py) plus ours (checkpoint formats, quant recipe, sampling, threads, json, lowering).
// `genai pipeline|compile|run|eval` CLIs and the --config_file reader are derived from it.
#pragma once

#include <span>
#include <string_view>

#include "options/option_spec.h"

namespace genai::options {

std::span<const OptionSpec> option_table();

// By snake_case name, kebab-case alias or upstream spelling; nullptr when unknown.
const OptionSpec* find_option(std::string_view name);

// The upstream choices of --decoder_model (SUPPORTED_LLM_MODELS).
std::span<const std::string> supported_decoder_models();

}  // namespace genai::options
