// The built-in calibration text: English prose of several kinds (narrative, instructions,
// dialogue, figures, a short list) written for this project, so that a checkpoint with a
// tokenizer calibrates on real text without --calib_samples. It is not the evaluation text
// (eval/quant_evaluation.h): calibrating on the text that measures the result would flatter it.
#pragma once

#include <string>

namespace genai::quant {

const std::string& default_calibration_text();

}  // namespace genai::quant
