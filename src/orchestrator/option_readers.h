// Typed views of the option set shared by the built-in strategies.
#pragma once

#include "graph/decoder_graphs.h"
#include "options/option_values.h"
#include "quant/calibration.h"

namespace genai::orchestrator {

// --model_mode as a graph mode; lookahead is an InputError (its graphs are not built natively).
graph::ModelMode graph_mode(const options::OptionValues& values);
// The decoder graphs the options describe: mode, --max_context_len (default --max_seq_len),
// --prefill_ar_len.
graph::DecoderGraphOptions decoder_graph_options(const options::OptionValues& values);
// Calibration text: --calib_samples files (else text sampled from the float model), --seed; two
// windows of 128 tokens (at most the context length), as `genai eval` calibrates by default.
quant::CalibrationOptions calibration_options(const options::OptionValues& values);

}  // namespace genai::orchestrator
