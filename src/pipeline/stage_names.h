// The four pipeline stages by name, as upstream's pipeline_types spells them.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace genai::pipeline {

inline constexpr std::string_view kStageModelPreparation = "model_preparation";
inline constexpr std::string_view kStageQuantization = "quantization";
inline constexpr std::string_view kStageCompilation = "compilation";
inline constexpr std::string_view kStageInference = "inference";

// In execution order.
inline constexpr std::array<std::string_view, 4> kAllStages = {kStageModelPreparation, kStageQuantization,
                                                               kStageCompilation, kStageInference};

bool is_stage_name(std::string_view name);
// "compilation, inference, model_preparation, quantization" (sorted, as upstream's message).
std::string valid_stage_names();

}  // namespace genai::pipeline
