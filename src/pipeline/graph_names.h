// Graph names name the methods inside one .pte (kv_forward, prefill_forward, ...); they are also
// the QNN graph names the runtime selects by. A different name space from artifact keys.
#pragma once

#include <string_view>
#include <vector>

#include "pipeline/artifact_keys.h"

namespace genai::pipeline {

// kv_forward_ar1 (ours): the single-token decode method beside a lookahead kv_forward.
// vision_encoder: the one method of the vision_encoder artifact (a tile of pixels -> features);
// audio_encoder likewise (a clip's feature rows -> audio embeddings).
enum class GraphName {
  kKvForward,
  kPrefillForward,
  kTokEmbeddingKvForward,
  kTokEmbeddingPrefillForward,
  kKvForwardAr1,
  kTokEmbeddingKvForwardAr1,
  kVisionEncoder,
  kAudioEncoder
};

std::string_view graph_name_str(GraphName name);  // "kv_forward", ...
GraphName parse_graph_name(std::string_view name);  // InputError naming the valid graph names

// Decode first (upstream's DECODER_GRAPH_NAMES order); kv mode builds no prefill graph.
std::vector<GraphName> decoder_graph_names(ModelMode mode);
std::vector<GraphName> tok_embedding_graph_names(ModelMode mode);

}  // namespace genai::pipeline
