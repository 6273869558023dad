// A DecoderSession that runs a decoder's static graphs, as upstream's runner does: the prompt in
// chunks of AR-N through prefill_forward (hybrid mode), generation one token at a time through
// kv_forward, with a smart-mask KV cache between calls. What executes the graphs is behind
// graph::GraphExecutor (the interpreter today, compiled programs later).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "graph/decoder_graphs.h"
#include "graph/executor.h"
#include "llm/decoder_session.h"
#include "llm/smart_mask_kv_cache.h"
#include "model/model.h"

namespace genai {

struct GraphSessionOptions {
  graph::ModelMode mode = graph::ModelMode::kHybrid;
  int64_t max_context_len = 512;
  int64_t prefill_ar_len = 32;  // hybrid only
  // The embedding lookup runs as its own graph (tok_embedding_<graph>) feeding inputs_embeds.
  bool separate_embedding = false;
};

class GraphDecoderSession : public DecoderSession {
 public:
  // Reads the layout (layers, kv heads, head_dim, context, AR lengths, vocab) from the signatures
  // of kv_forward and, when present, prefill_forward. Throws InputError when they are missing or
  // disagree, or when prefill_forward has no cache (AR-N == context). When the decoder graphs
  // take inputs_embeds, tok_embedding_<graph> graphs compute them from the tokens.
  explicit GraphDecoderSession(std::unique_ptr<graph::GraphExecutor> executor);

  // Runs `tokens`: with prefill_forward in chunks of AR-N (the last one padded; only its real
  // rows enter the cache) while a chunk fits the context, the rest (and single tokens) with
  // kv_forward. Returns the last token's logits. InputError before any work when position() + n
  // exceeds max_context() or an id is outside the vocabulary.
  std::span<const float> forward(std::span<const int32_t> tokens) override;
  // The same, returning every token's logits, row-major [n, vocab].
  std::vector<float> forward_all(std::span<const int32_t> tokens);

  int64_t position() const override { return position_; }
  int64_t max_context() const override { return context_len_; }
  int32_t vocab_size() const override { return static_cast<int32_t>(vocab_); }
  void reset() override;

  int64_t prefill_ar_len() const { return prefill_ar_; }  // 0 without prefill_forward
  // Graph calls so far, per graph (for tests and stats).
  int64_t kv_calls() const { return kv_calls_; }
  int64_t prefill_calls() const { return prefill_calls_; }

 private:
  // Runs one call of graph `name` (AR `ar`) on `tokens` (at most ar; padded); appends the logits
  // of the real rows to `all` when given, and keeps the last real row in logits_.
  void run_chunk(std::string_view name, int64_t ar, std::span<const int32_t> tokens, std::vector<float>* all);
  void process(std::span<const int32_t> tokens, std::vector<float>* all);

  std::unique_ptr<graph::GraphExecutor> executor_;
  int64_t n_layers_ = 0, context_len_ = 0, vocab_ = 0, prefill_ar_ = 0;
  DType mask_dtype_ = DType::kF32;
  bool embeds_input_ = false;
  std::unique_ptr<SmartMaskKvCache> cache_;
  int64_t position_ = 0;
  int64_t kv_calls_ = 0, prefill_calls_ = 0;
  std::vector<float> logits_;
};

// The decoder graphs of `model` (kv: kv_forward; hybrid: + prefill_forward) run by the float
// interpreter behind a GraphDecoderSession. Bad options are InputErrors naming the option.
std::unique_ptr<GraphDecoderSession> make_graph_session(std::shared_ptr<const Model> model,
                                                        const GraphSessionOptions& options);

}  // namespace genai
