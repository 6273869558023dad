// The quantization stage: float decoder graphs -> one quantized GraphBundle per graph name.
// Calibrates on the calibration graph only (ar = CL), derives encodings there, reconciles them
// onto kv_forward / prefill_forward by tensor name, and sets the quantized I/O types.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "graph/decoder_graphs.h"
#include "model/lora_adapter.h"
#include "model/model.h"
#include "pipeline/graph_bundle.h"
#include "quant/calibration.h"
#include "quant/encoding_set.h"
#include "quant/recipe.h"

namespace genai::quant {

struct QuantizeOptions {
  graph::ModelMode mode = graph::ModelMode::kHybrid;
  int64_t max_context_len = 512;
  int64_t prefill_ar_len = 32;
  int64_t decode_ar_len = 1;  // kv_forward's AR (lookahead decoding: its token tree)
  Recipe recipe;
  CalibrationOptions calibration;  // calibration.context_len is clamped to max_context_len
  // Calibration windows prepared earlier (the pipeline's preparation stage), all of one length
  // <= max_context_len; empty: calibration_windows(model, calibration).
  std::vector<std::vector<int32_t>> windows;
  // The decoder graphs take inputs_embeds, with tok_embedding_<graph> beside them (a vision
  // model's decoder, whose image tokens take the encoder's features). Quantized, the embeddings
  // keep the lookup's encoding (embed.out), published as get_inputs_embeds_scale / _zero_point.
  bool separate_embedding = false;
  // LoRA adapters kept beside the frozen weights (--lora_adapter): each gets its own copy of the
  // decoder graphs (adapter graphs, pipeline/adapter_graphs.h) with its low-rank paths,
  // calibrated on its own windows (LoraAdapter::calibration_windows, of the same length) or these,
  // on the base weights' encodings.
  std::vector<std::shared_ptr<const LoraAdapter>> adapters;
};

struct QuantizedModel {
  Recipe recipe;
  graph::GraphMap graphs;  // kv_forward (+ prefill_forward), float IR
  // Per graph name; every graph's set covers all its float tensors, identical where names meet.
  std::map<std::string, std::shared_ptr<const EncodingSet>> encodings;
  // Absent quant_io_dtypes for fp16 (float program I/O).
  pipeline::GraphBundles bundles;
  RangeMap ranges;       // calibration ranges
  double calibration_seconds = 0.0;
};

// Element types of the program I/O of `g` under `set`: KV cache uint8/uint16 per recipe, logits
// and mask uint16, tokens/positions int32.
pipeline::QuantIoDtypes quant_io_dtypes(const graph::Graph& g, const EncodingSet& set);

// Runs the stage. InputError for bad options (naming the option).
QuantizedModel quantize_model(std::shared_ptr<const Model> model, const QuantizeOptions& options);

// Writes the decode graph's QDQ evaluation file, <dir>/decode_qdq.json + decode_qdq.bin (our
// format, read by `genai eval --qdq`). Returns the json path.
std::filesystem::path write_decode_qdq(const QuantizedModel& q, const std::filesystem::path& dir);

}  // namespace genai::quant
