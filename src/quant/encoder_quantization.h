// Quantizing an encoder (a modality's: the vision encoder, the audio encoder, ...): one static
// graph calibrated on samples of its inputs (an image's tiles, a clip's features), its encodings under its own recipe (upstream
// quantizes each encoder on its own), and a bundle with the quantized I/O types and the constants
// its runner needs to move between floats and codes: get_<io>_scale / get_<io>_zero_point for
// every quantized float input and output.
#pragma once

#include <memory>
#include <vector>

#include "graph/graph.h"
#include "graph/interpreter.h"
#include "pipeline/graph_bundle.h"
#include "quant/encoding_set.h"
#include "quant/recipe.h"

namespace genai::quant {

struct QuantizedEncoder {
  std::shared_ptr<const EncodingSet> encodings;
  pipeline::GraphBundle bundle;
};

// `metadata` is kept and completed. A float recipe (fp16) gives a float program's bundle (no I/O
// types, no scale constants). InputError when there are no samples.
QuantizedEncoder quantize_encoder(std::shared_ptr<const graph::Graph> g,
                                  const std::vector<graph::TensorMap>& samples, const Recipe& recipe,
                                  pipeline::Metadata metadata, RangeMethod method = RangeMethod::kMinMax);

// The SQNR (dB) of output `output` of the QDQ reference of `g` under `encodings` against the float
// graph, over `samples` (+inf when they agree exactly).
double qdq_output_sqnr_db(const std::shared_ptr<const graph::Graph>& g, const std::shared_ptr<const EncodingSet>& encodings,
                          const std::vector<graph::TensorMap>& samples, const std::string& output);

}  // namespace genai::quant
