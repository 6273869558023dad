// Bundles for the float programs (htp --use_fp16, gpu): quantization is skipped, so compilation
// receives the model's float decoder graphs directly — no encodings, no quant_io_dtypes (program
// I/O stays float32 / int32) — with the complete decoder metadata (decoder_metadata.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "graph/decoder_graphs.h"
#include "model/model.h"
#include "pipeline/graph_bundle.h"

namespace genai::compile {

// kv_forward (+ prefill_forward in hybrid mode) (+ tok_embedding_* with separate_embedding); the
// calibration graph is never built. InputError for bad graph options (naming the option).
pipeline::GraphBundles float_bundles(std::shared_ptr<const Model> model, graph::DecoderGraphOptions options,
                                     std::optional<int64_t> max_seq_len = std::nullopt);

}  // namespace genai::compile
