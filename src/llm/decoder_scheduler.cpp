#include "llm/decoder_scheduler.h"

#include "kernels/quantize.h"

#include <algorithm>
#include <limits>
#include <charconv>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "graph/decoder_graphs.h"
#include "pipeline/adapter_graphs.h"

namespace genai {
namespace {

using runtime::IoDesc;

const IoDesc* find_io(const std::vector<IoDesc>& ios, std::string_view name) {
  for (const auto& d : ios)
    if (d.name == name) return &d;
  return nullptr;
}

// l for "<prefix>l" with l a canonical decimal below n_layers; -1 otherwise.
int64_t layer_index(const std::string& name, std::string_view prefix, int64_t n_layers) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return -1;
  const char* first = name.data() + prefix.size();
  const char* last = name.data() + name.size();
  int64_t l = -1;
  auto [p, ec] = std::from_chars(first, last, l);
  if (ec != std::errc() || p != last || l < 0 || l >= n_layers || (*first == '0' && last - first > 1)) return -1;
  return l;
}

std::string io_string(const IoDesc& d) { return fmt::format("{}{}", dtype_name(d.dtype), shape_to_string(d.shape)); }

size_t io_bytes(const IoDesc& d) { return static_cast<size_t>(shape_numel(d.shape)) * dtype_size(d.dtype); }

}  // namespace

// One method's buffers. Inputs and outputs are bound by position once; the cache inputs point
// straight into the smart-mask cache, whose buffers never move.
struct DecoderScheduler::Binding {
  std::string name;
  int64_t ar = 1;
  std::vector<int32_t> tokens, pos;
  std::vector<uint8_t> mask;
  std::vector<std::vector<uint8_t>> owned_outputs;
  std::vector<runtime::BufferRef> in, out;
  const uint8_t* logits = nullptr;
  std::vector<Tensor> k_out, v_out;  // views of owned_outputs, as SmartMaskKvCache::update takes them
  // Methods taking inputs_embeds: tok_embedding_<name> turns tokens into them first.
  std::string embedding;
  std::vector<uint8_t> embeds;
  std::vector<runtime::BufferRef> embedding_in, embedding_out;
};

DecoderScheduler::DecoderScheduler(std::unique_ptr<MethodRunner> runner)
    : runner_(std::move(runner)), origin_(runner_->origin()) {
  const std::string& file = origin_;
  const std::string kv(graph::kKvForward), prefill(graph::kPrefillForward);
  if (!runner_->has_method(kv)) {
    std::string names;
    for (const auto& n : runner_->method_names()) names += (names.empty() ? "" : ", ") + n;
    throw_input_error("{}: no {} method (methods: {})", file, kv, names.empty() ? "none" : names);
  }
  const auto& kv_in = runner_->inputs(kv);
  const auto& kv_out = runner_->outputs(kv);
  auto require = [&](const std::vector<IoDesc>& ios, std::string_view method, std::string_view name) {
    const IoDesc* d = find_io(ios, name);
    if (!d) throw_input_error("{}: method {} has no input or output named '{}'", file, method, name);
    return *d;
  };

  // The layout, as upstream's runner reads it: context and AR from the mask, vocab from the
  // logits, heads and head_dim from each K cache (gemma4's global layers have their own).
  const auto mask = require(kv_in, kv, "atten_mask");
  if (mask.shape.size() != 4 || mask.shape[0] != 1 || mask.shape[1] != 1)
    throw_input_error("{}: {} atten_mask {} is not [1, 1, ar, CL]", file, kv, io_string(mask));
  if (mask.dtype != DType::kU16 && mask.dtype != DType::kF32)
    throw_input_error("{}: {} atten_mask is {}; uint16 (quantized) or float32 expected", file, kv, dtype_name(mask.dtype));
  mask_dtype_ = mask.dtype;
  const int64_t kv_ar = mask.shape[2];
  context_len_ = mask.shape[3];
  const auto logits = require(kv_out, kv, "logits");
  if (logits.shape.size() != 3 || logits.shape[0] != 1 || logits.shape[1] != kv_ar ||
      (logits.dtype != DType::kU16 && logits.dtype != DType::kF32))
    throw_input_error("{}: {} logits {} are not uint16/float32 [1, {}, vocab]", file, kv, io_string(logits), kv_ar);
  logits_dtype_ = logits.dtype;
  vocab_ = logits.shape[2];
  while (find_io(kv_in, fmt::format("k_cache_{}", n_layers_))) ++n_layers_;
  if (n_layers_ == 0) throw_input_error("{}: {} has no k_cache_0 input", file, kv);
  const auto k0 = require(kv_in, kv, "k_cache_0");
  if (k0.dtype != DType::kU8 && k0.dtype != DType::kU16 && k0.dtype != DType::kF32)
    throw_input_error("{}: {} KV cache is {}; uint8, uint16 or float32 expected", file, kv, dtype_name(k0.dtype));
  kv_dtype_ = k0.dtype;
  // Sizes come from a file: refuse layouts no host could hold before allocating anything.
  if (vocab_ < 1 || context_len_ < 2 || kv_ar < 1)
    throw_input_error("{}: {} has an empty dimension (vocab {}, context {}, AR {})", file, kv, vocab_, context_len_, kv_ar);
  double cache_bytes = 0.0;
  for (int64_t l = 0; l < n_layers_; ++l) {
    const auto k = require(kv_in, kv, fmt::format("k_cache_{}", l));
    if (k.shape.size() != 4 || k.shape[0] != 1 || k.shape[1] < 1 || k.shape[2] < 1)
      throw_input_error("{}: {} {} {} is not [1, n_kv, head_dim, CL-ar]", file, kv, k.name, io_string(k));
    kv_shapes_.push_back({k.shape[1], k.shape[2]});
    cache_bytes += 2.0 * static_cast<double>(k.shape[1]) * static_cast<double>(k.shape[2]) *
                   static_cast<double>(context_len_) * static_cast<double>(dtype_size(kv_dtype_));
  }
  if (cache_bytes > 64.0 * (1 << 30) || static_cast<double>(vocab_) * static_cast<double>(context_len_) > 1e11)
    throw_input_error("{}: the KV cache or logits of this layout would need more than 64 GiB", file);

  // The constant methods that exist must agree with the signatures.
  auto check_const = [&](const char* name, int64_t actual) {
    if (auto v = runner_->constant_int(name); v && *v != actual)
      throw_input_error("{}: constant {} is {} but the {} signature says {}", file, name, *v, kv, actual);
  };
  check_const("get_max_context_len", context_len_);
  // Gemma 4 (upstream's get_n_self_layers): the layers with a cache of their own, of get_n_layers.
  if (runner_->constant_int("get_n_self_layers")) {
    check_const("get_n_self_layers", n_layers_);
    if (auto all = runner_->constant_int("get_n_layers"); all && *all < n_layers_)
      throw_input_error("{}: constant get_n_layers is {}, below the {} layers with a KV cache", file, *all, n_layers_);
  } else {
    check_const("get_n_layers", n_layers_);
  }
  check_const("get_vocab_size", vocab_);
  check_const("get_n_kv_heads", kv_shapes_[0].kv_heads);
  check_const("get_head_dim", kv_shapes_[0].head_dim);
  if (auto global = runner_->constant_int("get_global_head_dim"))
    for (int64_t l = 0; l < n_layers_; ++l)
      if (const int64_t hd = kv_shapes_[static_cast<size_t>(l)].head_dim; hd != kv_shapes_[0].head_dim && hd != *global)
        throw_input_error("{}: k_cache_{} has head_dim {}; the constants allow {} or {}", file, l, hd,
                          kv_shapes_[0].head_dim, *global);
  check_const("get_ar_len", kv_ar);  // the decode method's AR length (upstream's metadata)
  check_const("get_kv_io_bit_width", kv_dtype_ == DType::kU8 ? 8 : kv_dtype_ == DType::kU16 ? 16 : 32);
  if (logits_dtype_ == DType::kU16) {
    const auto scale = runner_->constant_double("get_logits_scale");
    const auto zp = runner_->constant_int("get_logits_zero_point");
    if (!scale || !zp)
      throw_input_error("{}: quantized logits need the constant methods get_logits_scale and get_logits_zero_point", file);
    if (!(*scale > 0.0)) throw_input_error("{}: get_logits_scale must be positive, got {}", file, *scale);
    if (*zp < 0 || *zp > 65535) throw_input_error("{}: get_logits_zero_point {} is outside uint16", file, *zp);
    logits_scale_ = static_cast<float>(*scale);
    logits_zero_point_ = static_cast<int32_t>(*zp);
  }

  if (const auto scale = runner_->constant_double("get_inputs_embeds_scale"); scale && *scale > 0.0) {
    if (const auto zp = runner_->constant_int("get_inputs_embeds_zero_point")) {
      kernels::QParams q;
      q.scale = static_cast<float>(*scale);
      q.zero_point = static_cast<int32_t>(*zp);
      embeds_q_ = q;
    }
  }

  if (kv_ar >= context_len_)
    throw_input_error("{}: {} has AR length {} for a context of {}: no room for a KV cache", file, kv, kv_ar, context_len_);
  std::vector<int64_t> ar_lens{kv_ar};
  if (runner_->has_method(prefill)) {
    const auto pmask = require(runner_->inputs(prefill), prefill, "atten_mask");
    if (pmask.shape.size() != 4 || pmask.shape[3] != context_len_ || pmask.dtype != mask_dtype_)
      throw_input_error("{}: {} atten_mask {} does not match {}'s {}", file, prefill, io_string(pmask), kv, io_string(mask));
    prefill_ar_ = pmask.shape[2];
    if (prefill_ar_ < 1 || prefill_ar_ >= context_len_)
      throw_input_error("{}: {} has AR length {} for a context of {}: no room for a KV cache", file, prefill, prefill_ar_,
                        context_len_);
    if (prefill_ar_ != kv_ar) ar_lens.push_back(prefill_ar_);
  }
  // Beside a lookahead kv_forward, single tokens go through kv_forward_ar1 when it exists.
  const std::string single(graph::kKvForwardAr1);
  const bool has_single = kv_ar > 1 && runner_->has_method(single);
  if (has_single) {
    const auto smask = require(runner_->inputs(single), single, "atten_mask");
    if (smask.shape != Shape{1, 1, 1, context_len_} || smask.dtype != mask_dtype_)
      throw_input_error("{}: {} atten_mask {} is not {}[1, 1, 1, {}]", file, single, io_string(smask),
                        dtype_name(mask_dtype_), context_len_);
    ar_lens.push_back(1);
  }
  const KvCacheLayout layout{kv_shapes_, context_len_};
  cache_ = std::make_unique<SmartMaskKvCache>(layout, kv_dtype_, ar_lens);
  kv_ = bind(kv);
  if (prefill_ar_ > 0) prefill_ = bind(prefill);
  if (has_single) single_ = bind(single);
  logits_.assign(static_cast<size_t>(vocab_), 0.0f);
}

std::unique_ptr<DecoderScheduler::Binding> DecoderScheduler::bind(const std::string& name) {
  const std::string& file = origin_;
  auto b = std::make_unique<Binding>();
  b->name = name;
  const auto& ins = runner_->inputs(name);
  const auto& outs = runner_->outputs(name);
  const IoDesc* m = find_io(ins, "atten_mask");
  if (!m) throw_input_error("{}: method {} has no input named 'atten_mask'", file, name);
  b->ar = m->shape[2];
  const int64_t ar = b->ar, cache_len = context_len_ - ar;
  b->tokens.assign(static_cast<size_t>(ar), 0);
  b->pos.assign(static_cast<size_t>(ar), 0);
  b->mask.assign(static_cast<size_t>(ar * context_len_) * dtype_size(mask_dtype_), 0);
  auto expect = [&](const IoDesc& d, DType dtype, const Shape& shape, std::string_view method) {
    if (d.dtype != dtype || d.shape != shape)
      throw_input_error("{}: method {}: {} is {}, expected {}{}", file, method, d.name, io_string(d), dtype_name(dtype),
                        shape_to_string(shape));
  };
  const runtime::BufferRef tokens_buffer{b->tokens.data(), b->tokens.size() * sizeof(int32_t)};
  int found_tokens = 0, found_pos = 0;
  std::vector<std::string_view> seen;
  for (const auto& d : ins) {
    if (std::find(seen.begin(), seen.end(), d.name) != seen.end())
      throw_input_error("{}: method {} has two inputs named '{}'", file, name, d.name);
    seen.push_back(d.name);
    int64_t l = -1;
    if (d.name == "tokens") {
      expect(d, DType::kI32, {1, ar}, name);
      b->in.push_back(tokens_buffer);
      ++found_tokens;
    } else if (d.name == graph::kInputsEmbeds) {
      const bool known = d.dtype == DType::kF32 || d.dtype == DType::kU16 || d.dtype == DType::kU8;
      if (!known || d.shape.size() != 3 || d.shape[0] != 1 || d.shape[1] != ar || d.shape[2] < 1)
        throw_input_error("{}: method {}: {} is {}, expected float32, uint16 or uint8 [1, {}, dim]", file, name, d.name,
                          io_string(d), ar);
      if (embeds_dtype_ && *embeds_dtype_ != d.dtype)
        throw_input_error("{}: method {}: {} is {}, another method's is {}", file, name, d.name, dtype_name(d.dtype),
                          dtype_name(*embeds_dtype_));
      embeds_dtype_ = d.dtype;
      // An adapter's methods take the base's embedding lookup (the adapters leave it alone).
      b->embedding = std::string(graph::kTokEmbeddingPrefix) + name.substr(0, name.find(pipeline::kLoraInfix));
      if (!runner_->has_method(b->embedding))
        throw_input_error("{}: method {} takes {} but there is no {} method", file, name, d.name, b->embedding);
      b->embeds.assign(io_bytes(d), 0);
      b->in.push_back({b->embeds.data(), b->embeds.size()});
      ++found_tokens;
    } else if (d.name == "input_pos") {
      expect(d, DType::kI32, {1, ar}, name);
      b->in.push_back({b->pos.data(), b->pos.size() * sizeof(int32_t)});
      ++found_pos;
    } else if (d.name == "atten_mask") {
      expect(d, mask_dtype_, {1, 1, ar, context_len_}, name);
      b->in.push_back({b->mask.data(), b->mask.size()});
    } else if ((l = layer_index(d.name, "k_cache_", n_layers_)) >= 0) {
      const KvLayerShape& s = kv_shapes_[static_cast<size_t>(l)];
      expect(d, kv_dtype_, {1, s.kv_heads, s.head_dim, cache_len}, name);
      b->in.push_back({const_cast<void*>(cache_->k_input(l).raw()), io_bytes(d)});
    } else if ((l = layer_index(d.name, "v_cache_", n_layers_)) >= 0) {
      const KvLayerShape& s = kv_shapes_[static_cast<size_t>(l)];
      expect(d, kv_dtype_, {1, s.kv_heads, cache_len, s.head_dim}, name);
      b->in.push_back({const_cast<void*>(cache_->v_input(l).raw()), io_bytes(d)});
    } else {
      throw_input_error("{}: method {} has an input '{}' this runner does not know", file, name, d.name);
    }
  }
  if (found_tokens != 1 || found_pos != 1)
    throw_input_error("{}: method {} needs one 'tokens' (or '{}') and one 'input_pos' input", file, name,
                      graph::kInputsEmbeds);
  if (b->in.size() != static_cast<size_t>(3 + 2 * n_layers_))
    throw_input_error("{}: method {} has {} inputs; tokens, atten_mask, input_pos and {} K and V caches expected", file,
                      name, b->in.size(), n_layers_);
  if (!b->embedding.empty()) {
    // tok_embedding_<name>: tokens [1, ar] -> exactly the embeds the decoder method takes.
    const auto& e_in = runner_->inputs(b->embedding);
    const auto& e_out = runner_->outputs(b->embedding);
    if (e_in.size() != 1 || e_in[0].name != "tokens" || e_out.size() != 1 || e_out[0].name != graph::kInputsEmbeds)
      throw_input_error("{}: method {} must map 'tokens' to '{}' alone", file, b->embedding, graph::kInputsEmbeds);
    expect(e_in[0], DType::kI32, {1, ar}, b->embedding);
    const IoDesc& embeds = *find_io(ins, graph::kInputsEmbeds);
    expect(e_out[0], embeds.dtype, embeds.shape, b->embedding);
    b->embedding_in = {tokens_buffer};
    b->embedding_out = {{b->embeds.data(), b->embeds.size()}};
  }
  b->owned_outputs.resize(outs.size());
  b->k_out.resize(static_cast<size_t>(n_layers_));
  b->v_out.resize(static_cast<size_t>(n_layers_));
  for (size_t i = 0; i < outs.size(); ++i) {
    const auto& d = outs[i];
    auto& storage = b->owned_outputs[i];
    storage.assign(io_bytes(d), 0);
    b->out.push_back({storage.data(), storage.size()});
    int64_t l = -1;
    if (d.name == "logits" && !b->logits) {
      expect(d, logits_dtype_, {1, ar, vocab_}, name);
      b->logits = storage.data();
    } else if ((l = layer_index(d.name, "k_out_", n_layers_)) >= 0 && !b->k_out[l].defined()) {
      const KvLayerShape& s = kv_shapes_[static_cast<size_t>(l)];
      expect(d, kv_dtype_, {1, s.kv_heads, s.head_dim, ar}, name);
      b->k_out[l] = Tensor::view(d.dtype, d.shape, storage.data(), nullptr);
    } else if ((l = layer_index(d.name, "v_out_", n_layers_)) >= 0 && !b->v_out[l].defined()) {
      const KvLayerShape& s = kv_shapes_[static_cast<size_t>(l)];
      expect(d, kv_dtype_, {1, s.kv_heads, ar, s.head_dim}, name);
      b->v_out[l] = Tensor::view(d.dtype, d.shape, storage.data(), nullptr);
    } else {
      throw_input_error("{}: method {} has an output '{}' this runner does not know (or twice)", file, name, d.name);
    }
  }
  if (!b->logits) throw_input_error("{}: method {} has no logits output", file, name);
  for (int64_t l = 0; l < n_layers_; ++l)
    if (!b->k_out[l].defined() || !b->v_out[l].defined())
      throw_input_error("{}: method {} lacks k_out_{} or v_out_{}", file, name, l, l);
  return b;
}

DecoderScheduler::~DecoderScheduler() = default;

int64_t DecoderScheduler::decode_ar_len() const { return kv_->ar; }

int64_t DecoderScheduler::max_context() const {
  // With an attention sink no position is the last; a bound that sums never overflow.
  return sink_ ? std::numeric_limits<int64_t>::max() / 4 : context_len_ - kv_->ar + 1;
}

void DecoderScheduler::set_attention_sink(const AttentionSinkOptions& options, KeyRerotation rerotation) {
  if (adapter_) refuse_sink_with_adapter(*adapter_);
  if (rerotation.n_layers() != n_layers_)
    throw_failure("internal: key rerotation for {} layers, {} cached", rerotation.n_layers(), n_layers_);
  for (const Binding* b : {kv_.get(), prefill_.get()}) {
    if (!b) continue;
    if (options.eviction < b->ar)
      throw_input_error("--use_attention_sink {},{}: EVICTION must be at least {}'s AR length {} ({})", options.sink,
                        options.eviction, b->name, b->ar, b->name == "kv_forward" ? "--model_mode lookahead's tree" : "--prefill_ar_len");
    if (options.sink + 2 * b->ar > context_len_)
      throw_input_error("--use_attention_sink {},{}: SINK + 2 x {}'s AR length {} exceeds the context {} ({})",
                        options.sink, options.eviction, b->name, b->ar, context_len_, runner_->context_source());
  }
  if (options.sink + options.eviction > context_len_)
    throw_input_error("--use_attention_sink {},{}: SINK + EVICTION exceeds the context {} ({})", options.sink,
                      options.eviction, context_len_, runner_->context_source());
  sink_ = options;
  rerotation_.emplace(std::move(rerotation));
}

void DecoderScheduler::set_attention_sink(const AttentionSinkOptions& options) {
  set_attention_sink(options, key_rerotation_from_constants(*runner_, n_layers_, kv_dtype_));
}

void DecoderScheduler::make_room(int64_t ar, int64_t take) {
  if (!sink_) return;
  while (cache_->n_past() + take > context_len_ - ar) {
    // A batch, or what is left after the sink: the later calls of a long prompt need less.
    const int64_t count = std::min(sink_->eviction, cache_->n_past() - sink_->sink);
    if (count < 1)
      throw_failure("attention sink: {} entries cannot make room for {} at AR {}", cache_->n_past(), take, ar);
    cache_->evict(sink_->sink, count, *rerotation_);
    ++evictions_;
  }
}

std::vector<std::string> DecoderScheduler::adapters() const {
  const std::string prefix = std::string(graph::kKvForward) + std::string(pipeline::kLoraInfix);
  std::vector<std::string> out;
  for (const std::string& m : runner_->method_names())
    if (m.rfind(prefix, 0) == 0) out.push_back(m.substr(prefix.size()));
  std::sort(out.begin(), out.end());
  return out;
}

// The sink re-rotates cached keys with the encodings of the program's constants, which are the base
// methods' (an adapter's KV cache has its own).
void DecoderScheduler::refuse_sink_with_adapter(const std::string& adapter) const {
  throw_input_error("{}: --use_attention_sink with LoRA adapter {}: the sink re-rotates keys with the base model's "
                    "KV encodings, not the adapter's (run the adapter without the sink)",
                    origin_, adapter);
}

void DecoderScheduler::set_adapter(const std::optional<std::string>& adapter) {
  if (adapter && sink_) refuse_sink_with_adapter(*adapter);
  const std::string suffix = adapter ? std::string(pipeline::kLoraInfix) + *adapter : std::string();
  const std::string kv = std::string(graph::kKvForward) + suffix;
  if (!runner_->has_method(kv)) {
    const std::vector<std::string> names = adapters();
    throw_input_error("{}: no LoRA adapter {} (adapters: {})", origin_, *adapter,
                      names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", ")));
  }
  // Each method of the adapter is bound like the base's: the same layout, checked again.
  kv_ = bind(kv);
  if (prefill_) prefill_ = bind(std::string(graph::kPrefillForward) + suffix);
  if (single_) single_ = bind(std::string(graph::kKvForwardAr1) + suffix);
  adapter_ = adapter;
  reset();
}

void DecoderScheduler::reset() {
  cache_->reset();
  position_ = 0;
  tree_rows_ = 0;
  evictions_ = 0;
}

void DecoderScheduler::check_ids(std::span<const int32_t> tokens) const {
  for (int32_t id : tokens)
    if (id < 0 || id >= vocab_) throw_input_error("decoder: token id {} outside the vocabulary of {}", id, vocab_);
}

int64_t DecoderScheduler::longest_cache_ar() const {
  int64_t ar = kv_->ar;
  for (const Binding* b : {prefill_.get(), single_.get()})
    if (b) ar = std::min(ar, b->ar);
  return ar;
}

int64_t DecoderScheduler::tree_capacity() const { return kv_->ar; }

void DecoderScheduler::forward_tree(std::span<const int32_t> tokens, std::span<const int32_t> depth,
                                    std::span<const int32_t> parent) {
  Binding& b = *kv_;
  const int64_t n = static_cast<int64_t>(tokens.size()), ar = b.ar;
  if (n < 1 || n > ar || depth.size() != tokens.size() || parent.size() != tokens.size())
    throw_input_error("decoder: a token tree of {} rows for {}'s {} (with as many depths and parents)", n, b.name, ar);
  if (position_ >= max_context())
    throw_input_error("decoder: no room for a token tree at position {} (context {})", position_, max_context());
  check_ids(tokens);
  make_room(ar, 1 + *std::max_element(depth.begin(), depth.end()));
  for (int64_t i = 0; i < n; ++i)
    if (parent[i] >= i || parent[i] < -1 || depth[i] < 0 || (parent[i] >= 0 && depth[i] != depth[parent[i]] + 1))
      throw_input_error("decoder: token tree row {} has parent {} and depth {}: not a tree in row order", i, parent[i],
                        depth[i]);
  cache_->set_ar_len(ar);
  const int64_t n_past = cache_->n_past();
  for (int64_t i = 0; i < ar; ++i) {
    // Rows past the tree are roots repeating its last token: they attend nothing of the tree.
    const int64_t d = i < n ? depth[i] : 0;
    b.tokens[i] = tokens[std::min(i, n - 1)];
    b.pos[i] = static_cast<int32_t>(std::min(n_past + d, context_len_ - 1));
  }
  if (mask_dtype_ == DType::kU16)
    fill_tree_mask<uint16_t>(reinterpret_cast<uint16_t*>(b.mask.data()), ar, context_len_, n_past, parent, 65535, 0);
  else
    fill_tree_mask<float>(reinterpret_cast<float*>(b.mask.data()), ar, context_len_, n_past, parent, 0.0f,
                          graph::kMaskedValue);
  if (!b.embedding.empty()) runner_->run(b.embedding, b.embedding_in, b.embedding_out);
  runner_->run(b.name, b.in, b.out);
  ++kv_calls_;
  tree_rows_ = n;
}

std::span<const float> DecoderScheduler::tree_logits(int64_t row) {
  if (row < 0 || row >= tree_rows_) throw_failure("internal: token tree row {} of {}", row, tree_rows_);
  dequantize_row(*kv_, row, logits_.data());
  return logits_;
}

void DecoderScheduler::accept_tree_rows(std::span<const int64_t> rows) {
  const int64_t n = static_cast<int64_t>(rows.size());
  if (tree_rows_ == 0 || n > tree_rows_) throw_failure("internal: accepting {} rows of a tree of {}", n, tree_rows_);
  if (position_ + n > max_context())
    throw_input_error("decoder: {} tokens at position {} exceed the context of {}", n, position_, max_context());
  // As in run_chunk: only the call that fills the context has no room, and needs none.
  if (cache_->fits(n)) {
    for (int64_t l = 0; l < n_layers_; ++l) cache_->update_rows(l, kv_->k_out[l], kv_->v_out[l], rows);
    cache_->advance(n);
  }
  position_ += n;
  tree_rows_ = 0;
}

void DecoderScheduler::dequantize_row(const Binding& b, int64_t row, float* out) const {
  if (logits_dtype_ == DType::kF32) {
    std::memcpy(out, b.logits + static_cast<size_t>(row * vocab_) * sizeof(float), static_cast<size_t>(vocab_) * sizeof(float));
    return;
  }
  // (q - zero_point) * scale in float32, as quant::dequantize_value computes it.
  const auto* q = reinterpret_cast<const uint16_t*>(b.logits) + row * vocab_;
  const int32_t zp = logits_zero_point_;
  const float scale = logits_scale_;
  for (int64_t j = 0; j < vocab_; ++j) out[j] = static_cast<float>(static_cast<int32_t>(q[j]) - zp) * scale;
}

void DecoderScheduler::run_chunk(Binding& b, std::span<const int32_t> tokens, std::vector<float>* all, int64_t first) {
  const int64_t n = static_cast<int64_t>(tokens.size()), ar = b.ar;
  cache_->set_ar_len(ar);
  const int64_t n_past = cache_->n_past();
  for (int64_t i = 0; i < ar; ++i) {
    // Padding rows repeat the last real token at the next positions (clamped to the context:
    // rotary tables end there); causal masking keeps them out of the real rows.
    b.tokens[i] = tokens[std::min(i, n - 1)];
    b.pos[i] = static_cast<int32_t>(std::min(n_past + i, context_len_ - 1));
  }
  if (mask_dtype_ == DType::kU16)
    fill_smart_mask<uint16_t>(reinterpret_cast<uint16_t*>(b.mask.data()), ar, context_len_, n_past, 65535, 0);
  else
    fill_smart_mask<float>(reinterpret_cast<float*>(b.mask.data()), ar, context_len_, n_past, 0.0f, graph::kMaskedValue);
  if (!b.embedding.empty()) runner_->run(b.embedding, b.embedding_in, b.embedding_out);
  if (replaced_) write_replaced_rows(b, first, n);
  runner_->run(b.name, b.in, b.out);

  if (all) {
    const size_t at = all->size();
    all->resize(at + static_cast<size_t>(n * vocab_));
    for (int64_t r = 0; r < n; ++r) dequantize_row(b, r, all->data() + at + r * vocab_);
  }
  dequantize_row(b, n - 1, logits_.data());

  // The last call of a full context has nowhere to store its entries, and needs not: no later
  // position exists (max_context()). A chunk whose entries do not fit this layout's cache fits
  // the layout with the longest cache.
  if (!cache_->fits(n)) cache_->set_ar_len(longest_cache_ar());
  if (cache_->fits(n)) {
    for (int64_t l = 0; l < n_layers_; ++l) cache_->update(l, b.k_out[l], b.v_out[l], n);
    cache_->advance(n);
  }
  position_ += n;
}

void DecoderScheduler::process(std::span<const int32_t> tokens, std::vector<float>* all) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) throw_input_error("decoder: forward needs at least one token");
  // Within max_context() only a call that fills it can find no room for its entries, and no
  // later call needs them.
  if (!sink_ && position_ + n > max_context())
    throw_input_error("decoder: {} tokens at position {} exceed the context of {} ({}{})", n, position_, max_context(),
                      runner_->context_source(),
                      kv_->ar > 1 ? fmt::format(", less kv_forward's AR length {} plus 1", kv_->ar) : "");
  check_ids(tokens);
  tree_rows_ = 0;
  int64_t i = 0;
  if (prefill_ && n > 1) {
    while (i < n && (sink_ || position_ + prefill_ar_ <= context_len_)) {
      const int64_t take = std::min(prefill_ar_, n - i);
      make_room(prefill_ar_, take);
      run_chunk(*prefill_, tokens.subspan(i, take), all, i);
      ++prefill_calls_;
      i += take;
    }
  }
  while (i < n) {
    // A last single token through kv_forward_ar1 when there is one: a tree-sized call for one
    // token costs several.
    Binding& b = single_ && n - i == 1 ? *single_ : *kv_;
    const int64_t take = std::min(b.ar, n - i);
    make_room(b.ar, take);
    run_chunk(b, tokens.subspan(i, take), all, i);
    ++kv_calls_;
    i += take;
  }
}

std::span<const float> DecoderScheduler::forward(std::span<const int32_t> tokens) {
  process(tokens, nullptr);
  return logits_;
}

std::vector<float> DecoderScheduler::forward_all(std::span<const int32_t> tokens, const EmbeddingRows& replaced) {
  std::vector<float> all;
  all.reserve(tokens.size() * static_cast<size_t>(vocab_));
  if (replaced.empty())
    process(tokens, &all);
  else
    process_replacing(tokens, &all, replaced);
  return all;
}

std::span<const float> DecoderScheduler::forward_replacing(std::span<const int32_t> tokens, const EmbeddingRows& replaced) {
  process_replacing(tokens, nullptr, replaced);
  return logits_;
}

void DecoderScheduler::process_replacing(std::span<const int32_t> tokens, std::vector<float>* all,
                                         const EmbeddingRows& replaced) {
  check_replaced(replaced, static_cast<int64_t>(tokens.size()));
  struct Clear {
    const EmbeddingRows*& p;
    ~Clear() { p = nullptr; }
  } clear{replaced_};
  replaced_ = &replaced;
  process(tokens, all);
}

void DecoderScheduler::check_replaced(const EmbeddingRows& r, int64_t n) const {
  for (const Binding* b : {kv_.get(), prefill_.get(), single_.get()}) {
    if (!b) continue;
    if (b->embedding.empty())
      throw_input_error("{}: method {} looks its token embeddings up itself: replacing embeddings (image features) "
                        "needs methods taking {} (the tok_embedding artifact)",
                        origin_, b->name, graph::kInputsEmbeds);
    const int64_t dim = static_cast<int64_t>(b->embeds.size() / dtype_size(*embeds_dtype_)) / b->ar;
    if (r.dim != dim)
      throw_input_error("{}: replacing embeddings {} wide, method {} takes {}", origin_, r.dim, b->name, dim);
  }
  if (r.rows.size() != r.at.size() * static_cast<size_t>(r.dim))
    throw_failure("internal: {} replaced rows of {} hold {} values", r.at.size(), r.dim, r.rows.size());
  if (*embeds_dtype_ != DType::kF32 && !embeds_q_)
    throw_input_error("{}: quantized {} need the constant methods get_inputs_embeds_scale (positive) and "
                      "get_inputs_embeds_zero_point to take replaced embeddings",
                      origin_, graph::kInputsEmbeds);
  for (size_t i = 0; i < r.at.size(); ++i)
    if (r.at[i] < 0 || r.at[i] >= n || (i > 0 && r.at[i] <= r.at[i - 1]))
      throw_input_error("decoder: replaced embedding index {} is outside the {} tokens of the call or not ascending",
                        r.at[i], n);
}

void DecoderScheduler::write_replaced_rows(Binding& b, int64_t first, int64_t n) const {
  const EmbeddingRows& r = *replaced_;
  auto it = std::lower_bound(r.at.begin(), r.at.end(), first);
  const size_t width = static_cast<size_t>(r.dim) * dtype_size(*embeds_dtype_);
  for (; it != r.at.end() && *it < first + n; ++it) {
    const float* row = r.rows.data() + static_cast<size_t>(it - r.at.begin()) * static_cast<size_t>(r.dim);
    uint8_t* dst = b.embeds.data() + static_cast<size_t>(*it - first) * width;
    if (*embeds_dtype_ == DType::kF32)
      std::memcpy(dst, row, width);
    else  // the lookup's encoding, as tok_embedding_<method> writes its codes
      kernels::quantize(row, r.dim, *embeds_q_, *embeds_dtype_ == DType::kU8 ? kernels::ActType::kU8 : kernels::ActType::kU16, dst);
  }
}

}  // namespace genai
