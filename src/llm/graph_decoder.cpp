#include "llm/graph_decoder.h"

#include "core/error.h"

namespace genai {

std::unique_ptr<DecoderScheduler> make_graph_session(std::unique_ptr<graph::GraphExecutor> executor) {
  return std::make_unique<DecoderScheduler>(std::make_unique<GraphMethodRunner>(std::move(executor)));
}

std::unique_ptr<DecoderScheduler> make_graph_session(std::shared_ptr<const Model> model,
                                                     const GraphSessionOptions& options) {
  graph::DecoderGraphOptions g;
  g.mode = options.mode;
  g.max_context_len = options.max_context_len;
  g.prefill_ar_len = options.prefill_ar_len;
  g.decode_ar_len = options.decode_ar_len;
  g.separate_embedding = options.separate_embedding;
  if (g.mode == graph::ModelMode::kHybrid && g.prefill_ar_len >= g.max_context_len)
    throw_input_error("--prefill_ar_len ({}) must be smaller than --max_context_len ({}) in hybrid mode", g.prefill_ar_len,
                      g.max_context_len);
  const ModelConfig config = model->config;
  auto graphs = graph::build_decoder_graphs(std::move(model), g);
  auto session = make_graph_session(std::make_unique<graph::InterpreterExecutor>(std::move(graphs)));
  if (options.attention_sink)
    session->set_attention_sink(*options.attention_sink, key_rerotation_from_model(config, g.max_context_len));
  return session;
}

}  // namespace genai
