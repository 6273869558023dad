// Calibration: token windows of calibration text run through the full-autoregressive calibration
// graph (ar = CL, no cache) by the float interpreter, whose observer records each tensor's range.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "graph/graph.h"
#include "graph/interpreter.h"
#include "model/model.h"
#include "quant/encoding_set.h"

namespace genai::quant {

struct CalibrationOptions {
  int64_t context_len = 128;  // tokens per calibration window (the calibration graph's CL)
  int64_t max_windows = 4;    // at most this many windows are run
  // --calib_samples: JSON files holding a list of strings (as upstream), or plain text files.
  std::vector<std::filesystem::path> sample_files;
  // Without sample files: the built-in text (quant/calibration_text.h); for a model without a
  // tokenizer, max_windows sequences sampled from the float model from BOS.
  float temperature = 0.8f;
  uint64_t seed = 0;
  // kMse runs the windows twice (min/max, then histograms) and picks clipping ranges by MSE.
  RangeMethod range_method = RangeMethod::kMinMax;
};

// The texts of one --calib_samples file: a JSON list of strings, or the whole file as one text
// when it is not JSON. InputError naming the file when it cannot be read, is an empty list, or
// holds a non-string.
std::vector<std::string> read_calibration_texts(const std::filesystem::path& file);

// Windows of exactly context_len tokens: the sample texts, else the built-in calibration text
// (each with BOS when the tokenizer adds one) concatenated, cut into windows, the last completed
// by wrapping around to the start; with neither files nor a tokenizer, max_windows sequences of
// context_len tokens sampled from the float reference. The windows then run through the
// calibration graph as whole AR-N prefills (calibrate), never a token at a time.
std::vector<std::vector<int32_t>> calibration_windows(const Model& model, const CalibrationOptions& options);

// Runs every window through `calibration_graph` (inputs tokens, atten_mask (causal), input_pos)
// and returns the min/max of every float op result (plus histograms for kMse: a second pass),
// with a progress bar.
// With `gram`, the inputs of linear ops also get their Gram matrices (GPTQ).
RangeMap calibrate(const graph::Graph& calibration_graph, const std::vector<std::vector<int32_t>>& windows,
                   RangeMethod method = RangeMethod::kMinMax, bool gram = false);

// Any graph on samples of its inputs (by name; an encoder's pixels): the min/max of every float
// input (first pass) and op result (plus histograms for kMse, linear inputs' column statistics,
// Gram matrices with `gram`), with a progress bar named `what`.
RangeMap calibrate_samples(const graph::Graph& g, const std::vector<graph::TensorMap>& samples,
                           RangeMethod method = RangeMethod::kMinMax, bool gram = false,
                           const std::string& what = "calibrating");

}  // namespace genai::quant
