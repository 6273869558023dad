// The decoder session over a model's static graphs run by the float interpreter: the
// DecoderScheduler over a GraphMethodRunner (the QDQ reference runs the same way with a
// quant::QdqExecutor in place of the interpreter).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "graph/decoder_graphs.h"
#include "llm/attention_sink.h"
#include "llm/decoder_scheduler.h"
#include "llm/graph_method_runner.h"
#include "model/model.h"

namespace genai {

struct GraphSessionOptions {
  graph::ModelMode mode = graph::ModelMode::kHybrid;
  int64_t max_context_len = 512;
  int64_t prefill_ar_len = 32;  // hybrid only
  // The embedding lookup runs as its own graph (tok_embedding_<graph>) feeding inputs_embeds.
  bool separate_embedding = false;
  int64_t decode_ar_len = 1;  // kv_forward's AR (lookahead decoding: its token tree)
  // --use_attention_sink: evict instead of stopping at the context (attention_sink.h).
  std::optional<AttentionSinkOptions> attention_sink = std::nullopt;
};

// The scheduler over graphs run by `executor` (the interpreter, the QDQ reference ...).
std::unique_ptr<DecoderScheduler> make_graph_session(std::unique_ptr<graph::GraphExecutor> executor);

// The decoder graphs of `model` (kv: kv_forward; hybrid: + prefill_forward) run by the float
// interpreter. Bad options are InputErrors naming the option.
std::unique_ptr<DecoderScheduler> make_graph_session(std::shared_ptr<const Model> model,
                                                     const GraphSessionOptions& options);

}  // namespace genai
