// The one DecoderSession over a decoder's static methods, as upstream's runner schedules them:
// the prompt in chunks of AR-N through prefill_forward (hybrid mode) while a chunk fits the
// context, the rest and generation through kv_forward (in chunks of its own AR length), with a
// smart-mask KV cache between calls. What executes the methods is a MethodRunner: the float
// interpreter, the QDQ reference or compiled programs (graph_method_runner.h,
// program_method_runner.h), so layout discovery, padding, positions, the mask, chunking and the
// cache-fit fallback behave the same on every executor.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "kernels/quantize.h"
#include "llm/attention_sink.h"
#include "llm/decoder_session.h"
#include "llm/method_runner.h"
#include "llm/smart_mask_kv_cache.h"

namespace genai {

class DecoderScheduler : public TreeDecoderSession {
 public:
  // Reads the layout from the signatures of kv_forward (and prefill_forward when present):
  // context and AR from atten_mask [1, 1, ar, CL], vocab from logits [1, ar, vocab], layers,
  // heads and head_dim from the K/V caches; decoder methods taking inputs_embeds get them from
  // tok_embedding_<method>. Constants the runner has (get_max_context_len, get_n_layers, ...)
  // must agree; uint16 logits need get_logits_scale / get_logits_zero_point. InputError naming
  // the runner's origin otherwise. Every buffer a call exchanges (tokens, positions, mask,
  // logits, new K/V, the cache itself) is allocated once here and bound by pointer.
  explicit DecoderScheduler(std::unique_ptr<MethodRunner> runner);
  ~DecoderScheduler() override;

  // InputError before any work when position() + n exceeds max_context() or an id is outside
  // the vocabulary. Returns the last token's (dequantized) logits.
  std::span<const float> forward(std::span<const int32_t> tokens) override;
  // Replaced rows are written over what tok_embedding_<method> gives (inputs_embeds is float32 on
  // every executor). InputError when the decoder methods take tokens, a row's width is not
  // theirs, or an index is outside the call or not ascending.
  std::span<const float> forward_replacing(std::span<const int32_t> tokens, const EmbeddingRows& replaced) override;
  // The same, returning every token's logits, row-major [n, vocab] (tests).
  std::vector<float> forward_all(std::span<const int32_t> tokens, const EmbeddingRows& replaced = {});
  int64_t position() const override { return position_; }
  // CL with a decode AR of 1. A kv_forward of AR a > 1 caches CL - a entries, so single tokens
  // can be decoded up to position CL - a only: CL - a + 1 positions.
  int64_t max_context() const override;
  int32_t vocab_size() const override { return static_cast<int32_t>(vocab_); }
  void reset() override;

  // Token trees through kv_forward (decoder_session.h).
  int64_t tree_capacity() const override;
  bool has_single_token_method() const override { return single_ != nullptr; }
  void forward_tree(std::span<const int32_t> tokens, std::span<const int32_t> depth,
                    std::span<const int32_t> parent) override;
  std::span<const float> tree_logits(int64_t row) override;
  void accept_tree_rows(std::span<const int64_t> rows) override;

  // Attention sink (attention_sink.h): a call that would overflow the cache evicts first, so
  // max_context() is unbounded and positions are cache slots. InputError naming
  // --use_attention_sink when EVICTION is below a method's AR length (upstream's rule) or SINK
  // plus two AR lengths exceed the context (no room for a call after evicting everything else).
  void set_attention_sink(const AttentionSinkOptions& options, KeyRerotation rerotation);
  // The same with the keys' rotation from the runner's constant methods (compiled programs).
  void set_attention_sink(const AttentionSinkOptions& options);
  int64_t evictions() const { return evictions_; }

  // LoRA adapters compiled beside the base (pipeline/adapter_graphs.h): their names, from the
  // runner's <kv_forward>_lora_<name> methods, sorted.
  std::vector<std::string> adapters() const;
  // Runs the adapter's methods from now on (nullopt: the base's), and clears the KV cache: an
  // adapter changes every layer's keys and values. InputError naming the valid adapters for a
  // name the runner has no methods for, and with an attention sink (its key re-rotation uses the
  // base methods' KV encodings).
  void set_adapter(const std::optional<std::string>& adapter);
  const std::optional<std::string>& adapter() const { return adapter_; }

  const MethodRunner& runner() const { return *runner_; }
  int64_t prefill_ar_len() const { return prefill_ar_; }  // 0 without prefill_forward
  int64_t decode_ar_len() const;                          // kv_forward's AR length
  DType kv_dtype() const { return kv_dtype_; }
  // Method calls so far (tests and stats).
  int64_t kv_calls() const { return kv_calls_; }
  int64_t prefill_calls() const { return prefill_calls_; }

 private:
  struct Binding;  // one method's buffers and their places in its signature
  std::unique_ptr<Binding> bind(const std::string& method);
  // `first`: the chunk's index in the call (for the replaced embeddings).
  void run_chunk(Binding& b, std::span<const int32_t> tokens, std::vector<float>* all, int64_t first = 0);
  void process(std::span<const int32_t> tokens, std::vector<float>* all);
  void check_replaced(const EmbeddingRows& replaced, int64_t n) const;
  void write_replaced_rows(Binding& b, int64_t first, int64_t n) const;
  // process() with replaced_ set for its duration.
  void process_replacing(std::span<const int32_t> tokens, std::vector<float>* all, const EmbeddingRows& replaced);
  void dequantize_row(const Binding& b, int64_t row, float* out) const;
  void check_ids(std::span<const int32_t> tokens) const;
  // The AR length of the layout with the longest cache (the smallest of the methods').
  int64_t longest_cache_ar() const;
  [[noreturn]] void refuse_sink_with_adapter(const std::string& adapter) const;
  // With an attention sink: evicts until `take` new entries fit the cache of a method of AR `ar`.
  void make_room(int64_t ar, int64_t take);

  std::unique_ptr<MethodRunner> runner_;
  std::string origin_;
  int64_t n_layers_ = 0, context_len_ = 0, vocab_ = 0, prefill_ar_ = 0;  // n_layers_: layers with a KV cache
  std::vector<KvLayerShape> kv_shapes_;  // per cached layer, from its k_cache input
  DType kv_dtype_ = DType::kF32, mask_dtype_ = DType::kF32, logits_dtype_ = DType::kF32;
  float logits_scale_ = 1.0f;
  int32_t logits_zero_point_ = 0;
  std::unique_ptr<SmartMaskKvCache> cache_;
  std::unique_ptr<Binding> kv_, prefill_, single_;  // single_: kv_forward_ar1, when kv_forward takes trees
  int64_t position_ = 0, kv_calls_ = 0, prefill_calls_ = 0;
  int64_t tree_rows_ = 0;  // rows of the last forward_tree (0: none since the cache changed)
  std::vector<float> logits_;
  const EmbeddingRows* replaced_ = nullptr;  // during a forward_replacing()
  std::optional<DType> embeds_dtype_;        // the methods' inputs_embeds, when they take them
  std::optional<kernels::QParams> embeds_q_;  // a quantized inputs_embeds' encoding (constants)
  std::optional<AttentionSinkOptions> sink_;
  std::optional<std::string> adapter_;
  std::optional<KeyRerotation> rerotation_;
  int64_t evictions_ = 0;
};

}  // namespace genai
