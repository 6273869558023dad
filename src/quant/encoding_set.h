// The encodings of one quantized model: per-tensor activation encodings by tensor name (the same
// name has the same encoding in every graph after reconciliation) and weight encodings by
// canonical weight name (shared by every graph, as the weights are).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graph/graph.h"
#include "quant/encoding.h"
#include "quant/recipe.h"

namespace genai::quant {

struct EncodingSet {
  std::string recipe;                                 // scheme_name / recipe name, for reports
  std::map<std::string, Encoding> activations;        // tensor name -> encoding
  std::map<std::string, std::shared_ptr<const WeightEncoding>> weights;  // weight name -> encoding
  bool is_float() const;  // fp16 recipe
};

// Per-tensor min/max seen during calibration, and optionally a histogram of the values over
// [min(lo, 0), max(hi, 0)] for the MSE range search.
struct Range {
  float lo = 0.0f, hi = 0.0f;
  bool seen = false;
  std::vector<double> histogram;  // empty unless calibrated with RangeMethod::kMse
  // For the inputs of linear ops: the sum of squares of each input column (the last dimension)
  // over `column_rows` rows, what the weight range search weighs a weight's error by.
  std::vector<double> column_squares;
  int64_t column_rows = 0;
  // With GPTQ: the lower triangle of X^T X [cols, cols] over the same rows (float sums).
  std::vector<float> gram;
  void add(const float* data, int64_t n);
  void add_columns(const float* data, int64_t rows, int64_t cols);
  void add_gram(const float* data, int64_t rows, int64_t cols);
  void add_to_histogram(const float* data, int64_t n);
};
enum class RangeMethod { kMinMax, kMse };
std::string_view range_method_name(RangeMethod m);  // "minmax", "mse"
RangeMethod range_method_from_name(std::string_view name, std::string_view option = "--calib_range");
// The clipping range [lo', hi'] (a shrink of [min(lo,0), max(hi,0)] by one factor) minimising
// the expected squared error of a `levels`-step uniform quantizer over the histogram: clipped
// values cost their distance to the edge, others step^2/12. Min/max when there is no histogram.
std::pair<float, float> mse_range(const Range& r, int64_t levels);
using RangeMap = std::map<std::string, Range>;

// Values whose result only moves or regroups its operand's elements (reshape, transpose, slice,
// concat): they share the operand's encoding, so no requantization happens there.
bool is_passthrough(graph::OpKind kind);
// The fixed encoding of the attention mask input: uint16, 65535 = attend (0.0), 0 = masked (-255).
Encoding mask_encoding();

// Encodings of `g` (normally the calibration graph) from calibrated ranges and the recipe: every
// float op result and float input gets one; passthrough results inherit their operand's; the
// values feeding k_out_l / v_out_l get the recipe's KV type; logits are uint16; weights read by
// linear ops (and gathered tables) are quantized per the scheme of the op that reads them.
// Failure naming the tensor when a needed range was never observed.
EncodingSet derive_encodings(const graph::Graph& g, const RangeMap& ranges, const Recipe& recipe);

// Carries `source` onto graph `g` by tensor name: names present in both keep the source
// encoding; cache inputs k_cache_l / v_cache_l take the encoding of the output k_out_l / v_out_l
// (the runner copies raw integers from one to the other); passthrough results inherit their
// operand's. Failure naming the tensor when some float value of `g` gets no encoding.
EncodingSet reconcile_encodings(const graph::Graph& g, const EncodingSet& source);

// Writes `set` (restricted to graph `g`'s tensors) as <dir>/<stem>.json + <stem>.bin (weight
// scales and values), atomically and deterministically. Returns the json path.
std::filesystem::path save_encodings(const EncodingSet& set, const graph::Graph& g, const std::filesystem::path& dir,
                                     const std::string& stem);
// Reads what save_encodings wrote; InputError naming the file and key on anything malformed.
EncodingSet load_encodings(const std::filesystem::path& json_path);

}  // namespace genai::quant
