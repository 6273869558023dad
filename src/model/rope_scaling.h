// Llama 3 rope scaling as GGUF stores it: llama.cpp's converter writes no scaling keys but a
// `rope_freqs` tensor of per-frequency divisors (1 for high frequencies, `factor` for low ones,
// a smooth blend in between). These convert between that tensor and RopeScaling.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/model_config.h"

namespace genai {

// Divisors of the head_dim/2 rotary frequencies, as llama.cpp's convert_hf_to_gguf computes them.
std::vector<float> llama3_rope_freq_factors(const RopeScaling& s, float rope_theta, int64_t head_dim);

// RopeScaling whose divisors equal `factors` (relative tolerance 1e-4), with the given original
// context length; nullopt when no llama3 scaling reproduces them.
std::optional<RopeScaling> fit_llama3_rope_scaling(const std::vector<float>& factors, float rope_theta,
                                                   int64_t head_dim, int64_t original_max_positions);

}  // namespace genai
