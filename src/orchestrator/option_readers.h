// The stage settings (pipeline/stage_settings.h) as the types of the layers that use them: graph
// shapes, calibration, the run's attention sink and lookahead decoding. The OptionValues overloads
// resolve the settings first (orchestrator/stage_settings.h): for tests and direct callers.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "graph/decoder_graphs.h"
#include "llm/attention_sink.h"
#include "llm/lookahead_decoding.h"
#include "options/option_values.h"
#include "pipeline/stage_settings.h"
#include "quant/calibration.h"

namespace genai::orchestrator {

// --model_mode as a graph mode (lookahead builds hybrid's graphs).
graph::ModelMode graph_mode(const pipeline::GraphShapeSettings& graphs);
// kv_forward's AR length: 1, or with --model_mode lookahead
// next_pow2((--window + --gcap) * (--ngram - 1)).
int64_t decode_ar_len(const pipeline::GraphShapeSettings& graphs);
// The decoder graphs the settings describe: mode, --max_context_len (default --max_seq_len),
// --prefill_ar_len, the decode AR length.
graph::DecoderGraphOptions decoder_graph_options(const pipeline::GraphShapeSettings& graphs);
graph::DecoderGraphOptions decoder_graph_options(const options::OptionValues& values);
// Calibration text: --calib_samples files (else the built-in text), --seed;
// --calib_max_windows windows of --calib_len tokens (at most the context length), ranges by
// --calib_range: the options and defaults `genai eval` calibrates with.
quant::CalibrationOptions calibration_options(const pipeline::CalibrationSettings& calibration);
quant::CalibrationOptions calibration_options(const options::OptionValues& values);

// Run settings as given, else as the programs were compiled with them (`compiled`: their
// manifest's "options", or null).
// --use_attention_sink.
std::optional<AttentionSinkOptions> attention_sink_setting(const pipeline::InferenceSettings& run,
                                                           const nlohmann::json& compiled);
// Lookahead decoding when --model_mode is lookahead; --ngram/--window/--gcap.
std::optional<LookaheadOptions> lookahead_setting(const pipeline::InferenceSettings& run, const nlohmann::json& compiled);

}  // namespace genai::orchestrator
