#include "llm/graph_decoder.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"

namespace genai {
namespace {

const graph::IoSpec& find_spec(const std::vector<graph::IoSpec>& specs, const std::string& name, std::string_view graph_name) {
  for (const auto& s : specs)
    if (s.name == name) return s;
  throw_input_error("graph {}: no input or output named '{}'", graph_name, name);
}

}  // namespace

GraphDecoderSession::GraphDecoderSession(std::unique_ptr<graph::GraphExecutor> executor) : executor_(std::move(executor)) {
  const std::string kv(graph::kKvForward), prefill(graph::kPrefillForward);
  if (!executor_->has_graph(kv)) throw_input_error("the decoder has no {} graph", kv);
  const auto kv_in = executor_->inputs(kv);
  const auto kv_out = executor_->outputs(kv);
  const auto& mask = find_spec(kv_in, "atten_mask", kv).type;
  if (mask.shape.size() != 4 || mask.shape[2] != 1)
    throw_input_error("graph {}: atten_mask {} is not [1, 1, 1, CL]", kv, type_to_string(mask));
  if (mask.dtype != DType::kF32 && mask.dtype != DType::kU16)
    throw_input_error("graph {}: atten_mask is {}; float32 or uint16 expected", kv, dtype_name(mask.dtype));
  mask_dtype_ = mask.dtype;
  context_len_ = mask.shape[3];
  const auto& logits = find_spec(kv_out, "logits", kv).type;
  if (logits.dtype != DType::kF32 || logits.shape.size() != 3)
    throw_input_error("graph {}: logits {} are not float32 [1, ar, vocab]", kv, type_to_string(logits));
  vocab_ = logits.shape[2];
  while (std::any_of(kv_in.begin(), kv_in.end(), [&](const auto& s) { return s.name == fmt::format("k_cache_{}", n_layers_); }))
    ++n_layers_;
  if (n_layers_ == 0) throw_input_error("graph {}: no k_cache_0 input", kv);
  const auto& k0 = find_spec(kv_in, "k_cache_0", kv).type;
  if (k0.shape.size() != 4) throw_input_error("graph {}: k_cache_0 {} is not [1, n_kv, head_dim, CL-1]", kv, type_to_string(k0));
  const KvCacheLayout layout{n_layers_, k0.shape[1], k0.shape[2], context_len_};
  embeds_input_ = std::any_of(kv_in.begin(), kv_in.end(), [](const auto& s) { return s.name == graph::kInputsEmbeds; });
  if (embeds_input_ && !executor_->has_graph(std::string(graph::kTokEmbeddingPrefix) + kv))
    throw_input_error("graph {} takes {} but there is no {}{} graph", kv, graph::kInputsEmbeds, graph::kTokEmbeddingPrefix,
                      kv);

  std::vector<int64_t> ar_lens{1};
  if (executor_->has_graph(prefill)) {
    const auto p_in = executor_->inputs(prefill);
    const auto& pmask = find_spec(p_in, "atten_mask", prefill).type;
    if (pmask.shape.size() != 4 || pmask.shape[3] != context_len_ || pmask.dtype != mask_dtype_)
      throw_input_error("graph {}: atten_mask {} does not match {}'s context of {}", prefill, type_to_string(pmask), kv,
                        context_len_);
    prefill_ar_ = pmask.shape[2];
    if (prefill_ar_ >= context_len_)
      throw_input_error("--prefill_ar_len ({}) must be smaller than --max_context_len ({}) to run with a KV cache",
                        prefill_ar_, context_len_);
    find_spec(p_in, "k_cache_0", prefill);
    ar_lens.push_back(prefill_ar_);
  }
  cache_ = std::make_unique<SmartMaskKvCache>(layout, k0.dtype, ar_lens);
}

void GraphDecoderSession::reset() {
  cache_->reset();
  position_ = 0;
  logits_.clear();
}

void GraphDecoderSession::run_chunk(std::string_view name, int64_t ar, std::span<const int32_t> tokens,
                                    std::vector<float>* all) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  cache_->set_ar_len(ar);
  const int64_t n_past = cache_->n_past();
  Tensor tok = Tensor::zeros(DType::kI32, {1, ar});
  Tensor pos = Tensor::zeros(DType::kI32, {1, ar});
  for (int64_t i = 0; i < ar; ++i) {
    // Padding rows repeat the last real token; causal masking keeps them out of the real rows.
    tok.mutable_data<int32_t>()[i] = tokens[std::min(i, n - 1)];
    pos.mutable_data<int32_t>()[i] = static_cast<int32_t>(n_past + i);
  }
  Tensor mask = Tensor::zeros(mask_dtype_, {1, 1, ar, context_len_});
  if (mask_dtype_ == DType::kF32)
    fill_smart_mask<float>(mask.mutable_data<float>(), ar, context_len_, n_past, 0.0f, graph::kMaskedValue);
  else
    fill_smart_mask<uint16_t>(mask.mutable_data<uint16_t>(), ar, context_len_, n_past, 65535, 0);

  std::vector<Tensor> caches;
  caches.reserve(2 * n_layers_);
  graph::InputMap inputs{{"atten_mask", &mask}, {"input_pos", &pos}};
  graph::TensorMap embedded;
  if (embeds_input_) {
    const std::string emb_graph = std::string(graph::kTokEmbeddingPrefix) + std::string(name);
    embedded = executor_->run(emb_graph, {{"tokens", &tok}});
    auto it = embedded.find(std::string(graph::kInputsEmbeds));
    if (it == embedded.end()) throw_failure("graph {}: output {} missing", emb_graph, graph::kInputsEmbeds);
    inputs[std::string(graph::kInputsEmbeds)] = &it->second;
  } else {
    inputs["tokens"] = &tok;
  }
  for (int64_t l = 0; l < n_layers_; ++l) {
    caches.push_back(cache_->k_input(l));
    inputs[fmt::format("k_cache_{}", l)] = &caches.back();
  }
  for (int64_t l = 0; l < n_layers_; ++l) {
    caches.push_back(cache_->v_input(l));
    inputs[fmt::format("v_cache_{}", l)] = &caches.back();
  }
  graph::TensorMap out = executor_->run(name, inputs);

  auto output = [&](const std::string& key) -> const Tensor& {
    auto it = out.find(key);
    if (it == out.end()) throw_failure("graph {}: output {} missing", name, key);
    return it->second;
  };
  const Tensor& logits = output("logits");
  if (logits.dtype() != DType::kF32 || logits.shape() != Shape{1, ar, vocab_})
    throw_failure("graph {}: logits are {}{}, expected float32[1, {}, {}]", name, dtype_name(logits.dtype()),
                  shape_to_string(logits.shape()), ar, vocab_);
  const float* rows = logits.data<float>();
  if (all) all->insert(all->end(), rows, rows + n * vocab_);
  logits_.assign(rows + (n - 1) * vocab_, rows + n * vocab_);

  // The last call of a full context has nowhere to store its entries, and needs not: no later
  // position exists. A chunk whose entries do not fit this layout's cache fits the AR-1 layout.
  if (!cache_->fits(n)) cache_->set_ar_len(1);
  if (cache_->fits(n)) {
    for (int64_t l = 0; l < n_layers_; ++l)
      cache_->update(l, output(fmt::format("k_out_{}", l)), output(fmt::format("v_out_{}", l)), n);
    cache_->advance(n);
  }
  position_ += n;
}

void GraphDecoderSession::process(std::span<const int32_t> tokens, std::vector<float>* all) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) throw_input_error("decoder: forward needs at least one token");
  if (position_ + n > context_len_)
    throw_input_error("decoder: {} tokens at position {} exceed the context of {} (--max_context_len)", n, position_,
                      context_len_);
  for (int64_t i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= vocab_)
      throw_input_error("decoder: token id {} outside the vocabulary of {}", tokens[i], vocab_);
  int64_t i = 0;
  if (prefill_ar_ > 0 && n > 1) {
    const std::string prefill(graph::kPrefillForward);
    while (i < n && position_ + prefill_ar_ <= context_len_) {
      const int64_t take = std::min(prefill_ar_, n - i);
      run_chunk(prefill, prefill_ar_, tokens.subspan(i, take), all);
      ++prefill_calls_;
      i += take;
    }
  }
  const std::string kv(graph::kKvForward);
  for (; i < n; ++i) {
    run_chunk(kv, 1, tokens.subspan(i, 1), all);
    ++kv_calls_;
  }
}

std::span<const float> GraphDecoderSession::forward(std::span<const int32_t> tokens) {
  process(tokens, nullptr);
  return logits_;
}

std::vector<float> GraphDecoderSession::forward_all(std::span<const int32_t> tokens) {
  std::vector<float> all;
  all.reserve(tokens.size() * vocab_);
  process(tokens, &all);
  return all;
}

std::unique_ptr<GraphDecoderSession> make_graph_session(std::shared_ptr<const Model> model,
                                                        const GraphSessionOptions& options) {
  graph::DecoderGraphOptions g;
  g.mode = options.mode;
  g.max_context_len = options.max_context_len;
  g.prefill_ar_len = options.prefill_ar_len;
  g.separate_embedding = options.separate_embedding;
  if (g.mode == graph::ModelMode::kHybrid && g.prefill_ar_len >= g.max_context_len)
    throw_input_error("--prefill_ar_len ({}) must be smaller than --max_context_len ({}) in hybrid mode", g.prefill_ar_len,
                      g.max_context_len);
  auto graphs = graph::build_decoder_graphs(std::move(model), g);
  return std::make_unique<GraphDecoderSession>(std::make_unique<graph::InterpreterExecutor>(std::move(graphs)));
}

}  // namespace genai
