#include "llm/compiled_session.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"

namespace genai {
namespace {

constexpr std::string_view kKvForward = "kv_forward";
constexpr std::string_view kPrefillForward = "prefill_forward";
constexpr float kMaskedValue = -255.0f;  // float programs: upstream's PADDING_MASK_VALUE

const runtime::IoDesc* find_io(const std::vector<runtime::IoDesc>& ios, std::string_view name) {
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

std::string io_string(const runtime::IoDesc& d) { return fmt::format("{}{}", dtype_name(d.dtype), shape_to_string(d.shape)); }

}  // namespace

// One method's buffers. Inputs and outputs are bound by position once; the cache inputs point
// straight into the smart-mask cache, whose buffers never move.
struct CompiledDecoderSession::Binding {
  std::string name;
  int64_t ar = 1;
  std::vector<int32_t> tokens, pos;
  std::vector<uint8_t> mask;
  std::vector<std::vector<uint8_t>> owned_outputs;
  std::vector<runtime::BufferRef> in, out;
  const uint8_t* logits = nullptr;
  std::vector<Tensor> k_out, v_out;  // views of owned_outputs, as SmartMaskKvCache::update takes them
};

CompiledDecoderSession::CompiledDecoderSession(std::unique_ptr<runtime::ProgramInstance> program)
    : program_(std::move(program)) {
  const std::string file = program_->path().string();
  const std::string kv(kKvForward), prefill(kPrefillForward);
  if (!program_->has_method(kv)) {
    std::string names;
    for (const auto& n : program_->method_names()) names += (names.empty() ? "" : ", ") + n;
    throw_input_error("{}: no {} method (methods: {})", file, kv, names.empty() ? "none" : names);
  }
  const auto& kv_in = program_->inputs(kv);
  const auto& kv_out = program_->outputs(kv);
  auto require = [&](const std::vector<runtime::IoDesc>& ios, std::string_view method, std::string_view name) {
    const runtime::IoDesc* d = find_io(ios, name);
    if (!d) throw_input_error("{}: method {} has no input or output named '{}'", file, method, name);
    return *d;
  };

  // The layout, as upstream's runner reads it: context and AR from the mask, vocab from the
  // logits, heads and head_dim from the first K cache.
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
  if (k0.shape.size() != 4 || k0.shape[0] != 1)
    throw_input_error("{}: {} k_cache_0 {} is not [1, n_kv, head_dim, CL-ar]", file, kv, io_string(k0));
  if (k0.dtype != DType::kU8 && k0.dtype != DType::kU16 && k0.dtype != DType::kF32)
    throw_input_error("{}: {} KV cache is {}; uint8, uint16 or float32 expected", file, kv, dtype_name(k0.dtype));
  kv_dtype_ = k0.dtype;
  n_kv_heads_ = k0.shape[1];
  head_dim_ = k0.shape[2];
  // Sizes come from a file: refuse layouts no host could hold before allocating anything.
  if (vocab_ < 1 || context_len_ < 2 || n_kv_heads_ < 1 || head_dim_ < 1 || kv_ar < 1)
    throw_input_error("{}: {} has an empty dimension (vocab {}, context {}, KV heads {}, head_dim {}, AR {})", file, kv,
                      vocab_, context_len_, n_kv_heads_, head_dim_, kv_ar);
  const double cache_bytes = 2.0 * static_cast<double>(n_layers_) * static_cast<double>(n_kv_heads_) *
                             static_cast<double>(head_dim_) * static_cast<double>(context_len_) *
                             static_cast<double>(dtype_size(kv_dtype_));
  if (cache_bytes > 64.0 * (1 << 30) || static_cast<double>(vocab_) * static_cast<double>(context_len_) > 1e11)
    throw_input_error("{}: the KV cache or logits of this layout would need more than 64 GiB", file);
  if (find_io(kv_in, "inputs_embeds"))
    throw_input_error("{}: {} takes inputs_embeds; programs with a separate embedding are not supported by this runner",
                      file, kv);

  // The constant methods that exist must agree with the signatures.
  auto check_const = [&](const char* name, int64_t actual) {
    if (auto v = program_->constant_int(name); v && *v != actual)
      throw_input_error("{}: constant {} is {} but the {} signature says {}", file, name, *v, kv, actual);
  };
  check_const("get_max_context_len", context_len_);
  check_const("get_n_layers", n_layers_);
  check_const("get_vocab_size", vocab_);
  check_const("get_n_kv_heads", n_kv_heads_);
  check_const("get_head_dim", head_dim_);
  check_const("get_ar_len", kv_ar);  // the decode graph's AR length (upstream's metadata)
  check_const("get_kv_io_bit_width", kv_dtype_ == DType::kU8 ? 8 : kv_dtype_ == DType::kU16 ? 16 : 32);
  if (logits_dtype_ == DType::kU16) {
    const auto scale = program_->constant_double("get_logits_scale");
    const auto zp = program_->constant_int("get_logits_zero_point");
    if (!scale || !zp)
      throw_input_error("{}: quantized logits need the constant methods get_logits_scale and get_logits_zero_point", file);
    if (!(*scale > 0.0)) throw_input_error("{}: get_logits_scale must be positive, got {}", file, *scale);
    if (*zp < 0 || *zp > 65535) throw_input_error("{}: get_logits_zero_point {} is outside uint16", file, *zp);
    logits_scale_ = static_cast<float>(*scale);
    logits_zero_point_ = static_cast<int32_t>(*zp);
  }

  std::vector<int64_t> ar_lens{kv_ar};
  if (program_->has_method(prefill)) {
    const auto pmask = require(program_->inputs(prefill), prefill, "atten_mask");
    if (pmask.shape.size() != 4 || pmask.shape[3] != context_len_ || pmask.dtype != mask_dtype_)
      throw_input_error("{}: {} atten_mask {} does not match {}'s {}", file, prefill, io_string(pmask), kv, io_string(mask));
    prefill_ar_ = pmask.shape[2];
    if (prefill_ar_ >= context_len_)
      throw_input_error("{}: {} has AR length {} for a context of {}: no room for a KV cache", file, prefill, prefill_ar_,
                        context_len_);
    if (prefill_ar_ != kv_ar) ar_lens.push_back(prefill_ar_);
  }
  if (kv_ar < 1 || kv_ar >= context_len_)
    throw_input_error("{}: {} AR length {} must be in [1, {})", file, kv, kv_ar, context_len_);
  const KvCacheLayout layout{n_layers_, n_kv_heads_, head_dim_, context_len_};
  cache_ = std::make_unique<SmartMaskKvCache>(layout, kv_dtype_, ar_lens);

  auto bind = [&](const std::string& name) {
    auto b = std::make_unique<Binding>();
    b->name = name;
    const auto& ins = program_->inputs(name);
    const auto& outs = program_->outputs(name);
    const auto& m = require(ins, name, "atten_mask");
    b->ar = m.shape[2];
    const int64_t ar = b->ar, cache_len = context_len_ - ar;
    b->tokens.assign(static_cast<size_t>(ar), 0);
    b->pos.assign(static_cast<size_t>(ar), 0);
    b->mask.assign(static_cast<size_t>(ar * context_len_) * dtype_size(mask_dtype_), 0);
    auto expect = [&](const runtime::IoDesc& d, DType dtype, const Shape& shape) {
      if (d.dtype != dtype || d.shape != shape)
        throw_input_error("{}: method {}: {} is {}, expected {}{}", file, name, d.name, io_string(d), dtype_name(dtype),
                          shape_to_string(shape));
    };
    int found_tokens = 0, found_pos = 0;
    std::vector<std::string_view> seen;
    for (const auto& d : ins) {
      if (std::find(seen.begin(), seen.end(), d.name) != seen.end())
        throw_input_error("{}: method {} has two inputs named '{}'", file, name, d.name);
      seen.push_back(d.name);
      int64_t l = -1;
      if (d.name == "tokens") {
        expect(d, DType::kI32, {1, ar});
        b->in.push_back({b->tokens.data(), b->tokens.size() * sizeof(int32_t)});
        ++found_tokens;
      } else if (d.name == "input_pos") {
        expect(d, DType::kI32, {1, ar});
        b->in.push_back({b->pos.data(), b->pos.size() * sizeof(int32_t)});
        ++found_pos;
      } else if (d.name == "atten_mask") {
        expect(d, mask_dtype_, {1, 1, ar, context_len_});
        b->in.push_back({b->mask.data(), b->mask.size()});
      } else if ((l = layer_index(d.name, "k_cache_", n_layers_)) >= 0) {
        expect(d, kv_dtype_, {1, n_kv_heads_, head_dim_, cache_len});
        b->in.push_back({const_cast<void*>(cache_->k_input(l).raw()), 0});
      } else if ((l = layer_index(d.name, "v_cache_", n_layers_)) >= 0) {
        expect(d, kv_dtype_, {1, n_kv_heads_, cache_len, head_dim_});
        b->in.push_back({const_cast<void*>(cache_->v_input(l).raw()), 0});
      } else {
        throw_input_error("{}: method {} has an input '{}' this runner does not know", file, name, d.name);
      }
      if (b->in.back().bytes == 0)
        b->in.back().bytes = static_cast<size_t>(shape_numel(d.shape)) * dtype_size(d.dtype);
    }
    if (found_tokens != 1 || found_pos != 1)
      throw_input_error("{}: method {} needs one 'tokens' and one 'input_pos' input", file, name);
    if (b->in.size() != static_cast<size_t>(3 + 2 * n_layers_))
      throw_input_error("{}: method {} has {} inputs; tokens, atten_mask, input_pos and {} K and V caches expected", file,
                        name, b->in.size(), n_layers_);
    b->owned_outputs.resize(outs.size());
    b->k_out.resize(static_cast<size_t>(n_layers_));
    b->v_out.resize(static_cast<size_t>(n_layers_));
    for (size_t i = 0; i < outs.size(); ++i) {
      const auto& d = outs[i];
      auto& storage = b->owned_outputs[i];
      storage.assign(static_cast<size_t>(shape_numel(d.shape)) * dtype_size(d.dtype), 0);
      b->out.push_back({storage.data(), storage.size()});
      int64_t l = -1;
      if (d.name == "logits") {
        expect(d, logits_dtype_, {1, ar, vocab_});
        b->logits = storage.data();
      } else if ((l = layer_index(d.name, "k_out_", n_layers_)) >= 0 && !b->k_out[l].defined()) {
        expect(d, kv_dtype_, {1, n_kv_heads_, head_dim_, ar});
        b->k_out[l] = Tensor::view(d.dtype, d.shape, storage.data(), nullptr);
      } else if ((l = layer_index(d.name, "v_out_", n_layers_)) >= 0 && !b->v_out[l].defined()) {
        expect(d, kv_dtype_, {1, n_kv_heads_, ar, head_dim_});
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
  };
  kv_ = bind(kv);
  if (prefill_ar_ > 0) prefill_ = bind(prefill);
  logits_.assign(static_cast<size_t>(vocab_), 0.0f);
}

CompiledDecoderSession::~CompiledDecoderSession() = default;

void CompiledDecoderSession::reset() {
  cache_->reset();
  position_ = 0;
}

void CompiledDecoderSession::dequantize_row(const Binding& b, int64_t row, float* out) const {
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

void CompiledDecoderSession::run_chunk(Binding& b, std::span<const int32_t> tokens, std::vector<float>* all) {
  const int64_t n = static_cast<int64_t>(tokens.size()), ar = b.ar;
  cache_->set_ar_len(ar);
  const int64_t n_past = cache_->n_past();
  for (int64_t i = 0; i < ar; ++i) {
    // Padding rows repeat the last real token; causal masking keeps them out of the real rows.
    b.tokens[i] = tokens[std::min(i, n - 1)];
    b.pos[i] = static_cast<int32_t>(std::min(n_past + i, context_len_ - 1));
  }
  if (mask_dtype_ == DType::kU16)
    fill_smart_mask<uint16_t>(reinterpret_cast<uint16_t*>(b.mask.data()), ar, context_len_, n_past, 65535, 0);
  else
    fill_smart_mask<float>(reinterpret_cast<float*>(b.mask.data()), ar, context_len_, n_past, 0.0f, kMaskedValue);
  program_->execute(b.name, b.in, b.out);

  if (all) {
    const size_t at = all->size();
    all->resize(at + static_cast<size_t>(n * vocab_));
    for (int64_t r = 0; r < n; ++r) dequantize_row(b, r, all->data() + at + r * vocab_);
  }
  dequantize_row(b, n - 1, logits_.data());

  // The last call of a full context has nowhere to store its entries, and needs not: no later
  // position exists. A chunk whose entries do not fit this layout's cache fits the AR-1 layout.
  if (!cache_->fits(n)) cache_->set_ar_len(kv_->ar);
  if (cache_->fits(n)) {
    for (int64_t l = 0; l < n_layers_; ++l) cache_->update(l, b.k_out[l], b.v_out[l], n);
    cache_->advance(n);
  }
  position_ += n;
}

void CompiledDecoderSession::process(std::span<const int32_t> tokens, std::vector<float>* all) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) throw_input_error("decoder: forward needs at least one token");
  if (position_ + n > context_len_)
    throw_input_error("decoder: {} tokens at position {} exceed the program's context of {} (get_max_context_len)", n,
                      position_, context_len_);
  for (int64_t i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= vocab_)
      throw_input_error("decoder: token id {} outside the vocabulary of {}", tokens[i], vocab_);
  int64_t i = 0;
  if (prefill_ && n > 1) {
    while (i < n && position_ + prefill_ar_ <= context_len_) {
      const int64_t take = std::min(prefill_ar_, n - i);
      run_chunk(*prefill_, tokens.subspan(i, take), all);
      ++prefill_calls_;
      i += take;
    }
  }
  while (i < n) {
    const int64_t take = std::min(kv_->ar, n - i);
    run_chunk(*kv_, tokens.subspan(i, take), all);
    ++kv_calls_;
    i += take;
  }
}

std::span<const float> CompiledDecoderSession::forward(std::span<const int32_t> tokens) {
  process(tokens, nullptr);
  return logits_;
}

std::vector<float> CompiledDecoderSession::forward_all(std::span<const int32_t> tokens) {
  std::vector<float> all;
  all.reserve(tokens.size() * static_cast<size_t>(vocab_));
  process(tokens, &all);
  return all;
}

std::unique_ptr<DecoderSession> make_compiled_session(const runtime::ArtifactDir& artifacts, CompiledSessionInfo* info) {
  auto it = artifacts.artifacts.find(pipeline::ArtifactKey::kTextDecoder);
  if (it == artifacts.artifacts.end())
    throw_input_error("{}: the manifest names no text_decoder artifact", (artifacts.dir / "manifest.json").string());
  auto session = std::make_unique<CompiledDecoderSession>(runtime::ProgramInstance::load(it->second));
  if (info) {
    info->load_ms = session->program().load_ms();
    info->max_context_len = session->max_context();
    info->prefill_ar_len = session->prefill_ar_len();
    info->kv_io_dtype = std::string(dtype_name(session->kv_dtype()));
    info->max_seq_len = session->program().constant_int("get_max_seq_len").value_or(0);
  }
  return session;
}

}  // namespace genai
