#include "model/gguf_metadata.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "model/hf_config.h"

namespace genai {
namespace {

std::string key(const std::string& arch, const char* suffix) { return arch + "." + suffix; }

// llama.cpp keeps no query_pre_attn_scalar for gemma2: the 27B (46 layers) scales by
// dim / heads, the others by the head dimension, and so does a reader of its files.
float gemma2_gguf_attention_scale(const ModelConfig& c) {
  const int64_t d = c.n_layers == 46 ? c.dim / c.n_heads : c.head_dim;
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
}

// llama.cpp's fixed sliding patterns: gemma2 every even layer, gemma3 five of every six.
bool gemma_gguf_layer_slides(const ModelConfig& c, int64_t l) {
  return c.arch == Architecture::kGemma2 ? l % 2 == 0 : l % 6 < 5;
}

// The scalings a gemma GGUF file implies without keys: embeddings times sqrt(dim), gemma2's
// attention scale by llama.cpp's rule.
bool implied_gemma_scalings(const ModelConfig& c) {
  const bool gemma23 = c.arch == Architecture::kGemma2 || c.arch == Architecture::kGemma3;
  const bool gemma4 = c.arch == Architecture::kGemma4;  // attention scale 1
  if (c.arch != Architecture::kGemma && !gemma23 && !gemma4) return false;
  const float attention = gemma4 ? 1.0f : gemma23 ? gemma2_gguf_attention_scale(c) : 0.0f;
  return c.embedding_multiplier == ModelConfig::gemma_embedding_scale(c.dim) && c.residual_multiplier == 1.0f &&
         (c.attention_multiplier == attention || c.attention_multiplier == 0.0f) && c.logits_scaling == 1.0f;
}

// llama.cpp's smollm3 has no key for the NoPE layers: it hard-codes one every fourth layer, as
// SmolLM3Config's default no_rope_layer_interval.
constexpr int64_t kSmolLM3NoRopeInterval = 4;

std::vector<TokenType> to_types(const GgufFile& f, const std::vector<int32_t>& raw) {
  std::vector<TokenType> out;
  out.reserve(raw.size());
  for (int32_t t : raw) {
    if (t < 0 || t > 6) throw_input_error("{}: tokenizer.ggml.token_type holds invalid type {}", f.source(), t);
    out.push_back(static_cast<TokenType>(t));
  }
  return out;
}

std::vector<int32_t> from_types(const std::vector<TokenType>& types) {
  std::vector<int32_t> out;
  for (TokenType t : types) out.push_back(static_cast<int32_t>(t));
  return out;
}

int32_t token_id(const GgufFile& f, const char* k, int32_t fallback) {
  auto v = f.get_int(k);
  if (!v) return fallback;
  if (*v < -1 || *v > INT32_MAX) throw_input_error("{}: metadata key {} = {} is not a token id", f.source(), k, *v);
  return static_cast<int32_t>(*v);
}

// A key holding one number or one per layer (llama.cpp's get_key_or_arr): the per-layer values.
std::vector<int64_t> per_layer_ints(const GgufFile& f, const std::string& k, int64_t n_layers) {
  const GgufValue* v = f.find(k);
  if (!v) throw_input_error("{}: missing metadata key {}", f.source(), k);
  if (const auto* items = v->as_array()) {
    if (static_cast<int64_t>(items->size()) != n_layers)
      throw_input_error("{}: metadata key {} lists {} values for {} layers", f.source(), k, items->size(), n_layers);
    std::vector<int64_t> out;
    for (int32_t x : f.get_int_array(k)) out.push_back(x);  // InputError for a non-integer entry
    return out;
  }
  return std::vector<int64_t>(static_cast<size_t>(n_layers), f.require_int(k));
}

// llama.cpp's gemma4 keys (conversion: Gemma4Model): head sizes of the full-attention layers
// (key_length) and the sliding ones (key_length_swa), a per-layer sliding pattern, KV heads and
// MLP widths per layer where they differ, the shared-KV count, the per-layer embedding width.
// Attention scale 1, no norm offset. The proportional rope comes as the rope_freqs tensor (the
// loader reads it).
void read_gemma4_keys(const GgufFile& f, const std::string& arch, ModelConfig& c) {
  c.sandwich_norms = c.v_norm = c.layer_scalars = c.wide_kv_cache = true;
  c.attention_multiplier = 1.0f;
  c.final_logit_softcap = static_cast<float>(f.get_number(key(arch, "final_logit_softcapping")).value_or(0.0));
  c.sliding_window = f.require_int(key(arch, "attention.sliding_window"));
  const GgufValue* pattern = f.find(key(arch, "attention.sliding_window_pattern"));
  if (!pattern || !pattern->as_array() || static_cast<int64_t>(pattern->as_array()->size()) != c.n_layers)
    throw_input_error("{}: metadata key {} must list one boolean per layer ({})", f.source(),
                      key(arch, "attention.sliding_window_pattern"), c.n_layers);
  c.sliding_layers.clear();
  for (const GgufValue& b : *pattern->as_array()) {
    const bool* flag = std::get_if<bool>(&b.data);
    if (!flag) throw_input_error("{}: {} holds a non-boolean", f.source(), key(arch, "attention.sliding_window_pattern"));
    c.sliding_layers.push_back(*flag ? 1 : 0);
  }
  c.head_dim = f.require_int(key(arch, "attention.key_length_swa"));
  const int64_t global = f.require_int(key(arch, "attention.key_length"));
  c.global_head_dim = global == c.head_dim ? 0 : global;
  c.rope_local_theta = static_cast<float>(f.get_number(key(arch, "rope.freq_base_swa")).value_or(10000.0));
  c.kv_shared_layers = f.get_int(key(arch, "attention.shared_kv_layers")).value_or(0);
  c.ple_dim = f.get_int(key(arch, "embedding_length_per_layer_input")).value_or(0);
  if (c.ple_dim > 0) {
    const GgufTensorInfo* t = f.find_tensor("per_layer_token_embd.weight");
    if (!t || t->ne.size() != 2) throw_input_error("{}: missing tensor per_layer_token_embd.weight", f.source());
    c.ple_vocab = static_cast<int64_t>(t->ne[1]);
  }
  // Per-layer KV heads and MLP widths: the sliding layers' value, the global layers' own, the
  // shared layers' double where use_double_wide_mlp made them so.
  const auto kv = per_layer_ints(f, key(arch, "attention.head_count_kv"), c.n_layers);
  const auto ff = per_layer_ints(f, key(arch, "feed_forward_length"), c.n_layers);
  c.ffn_dim = ff[0];
  c.n_kv_heads = c.global_kv_heads = 0;
  for (int64_t l = 0; l < c.n_layers; ++l) {
    int64_t& slot = c.layer_slides(l) ? c.n_kv_heads : c.global_kv_heads;
    if (slot != 0 && slot != kv[static_cast<size_t>(l)])
      throw_input_error("{}: {} differs within the {} layers (layer {})", f.source(), key(arch, "attention.head_count_kv"),
                        c.layer_slides(l) ? "sliding" : "full-attention", l);
    slot = kv[static_cast<size_t>(l)];
  }
  if (c.n_kv_heads == 0) c.n_kv_heads = c.global_kv_heads;
  if (c.global_kv_heads == c.n_kv_heads) c.global_kv_heads = 0;
  c.wide_shared_mlp = c.kv_shared_layers > 0 && ff.back() == 2 * c.ffn_dim;
  for (int64_t l = 0; l < c.n_layers; ++l)
    if (ff[static_cast<size_t>(l)] != c.layer_ffn_dim(l))
      throw_input_error("{}: {}[{}] = {} (expected {}: the shared-KV layers double or none)", f.source(),
                        key(arch, "feed_forward_length"), l, ff[static_cast<size_t>(l)], c.layer_ffn_dim(l));
  // attention_k_eq_v: the global layers carry no attn_v (their values are their keys).
  for (int64_t l = 0; l < c.n_layers; ++l)
    if (!c.layer_slides(l) && l < c.n_layers - c.kv_shared_layers) {
      c.kv_from_k = f.find_tensor(fmt::format("blk.{}.attn_v.weight", l)) == nullptr;
      break;
    }
}

void write_gemma4_keys(GgufWriter& w, const std::string& arch, const ModelConfig& c) {
  auto u32 = [](int64_t v) { return GgufValue::u32(static_cast<uint32_t>(v)); };
  auto per_layer = [&](auto value) {
    std::vector<GgufValue> items;
    for (int64_t l = 0; l < c.n_layers; ++l) items.push_back(u32(value(l)));
    return GgufValue::array(GgufValueType::kUint32, std::move(items));
  };
  const int64_t global = c.global_layer_head_dim();
  w.set(key(arch, "attention.key_length"), u32(global));
  w.set(key(arch, "attention.value_length"), u32(global));
  w.set(key(arch, "attention.key_length_swa"), u32(c.head_dim));
  w.set(key(arch, "attention.value_length_swa"), u32(c.head_dim));
  w.set(key(arch, "rope.dimension_count"), u32(global));
  w.set(key(arch, "rope.dimension_count_swa"), u32(c.rotary_dims()));
  w.set(key(arch, "rope.freq_base_swa"), GgufValue::f32(c.rope_local_theta > 0.0f ? c.rope_local_theta : c.rope_theta));
  w.set(key(arch, "attention.sliding_window"), u32(c.sliding_window));
  std::vector<GgufValue> pattern;
  for (int64_t l = 0; l < c.n_layers; ++l) pattern.push_back(GgufValue::boolean(c.layer_slides(l)));
  w.set(key(arch, "attention.sliding_window_pattern"), GgufValue::array(GgufValueType::kBool, std::move(pattern)));
  w.set(key(arch, "attention.shared_kv_layers"), u32(c.kv_shared_layers));
  w.set(key(arch, "embedding_length_per_layer_input"), u32(c.ple_dim));
  if (c.final_logit_softcap > 0.0f) w.set(key(arch, "final_logit_softcapping"), GgufValue::f32(c.final_logit_softcap));
  if (c.global_kv_heads > 0) w.set(key(arch, "attention.head_count_kv"), per_layer([&](int64_t l) { return c.layer_kv_heads(l); }));
  if (c.wide_shared_mlp) w.set(key(arch, "feed_forward_length"), per_layer([&](int64_t l) { return c.layer_ffn_dim(l); }));
  if (!c.v_norm || !c.layer_scalars || !c.sandwich_norms)
    throw_input_error("GGUF: llama.cpp's gemma4 always has value norms, layer scalars and norms around both blocks");
}

}  // namespace

ModelConfig gguf_read_config(const GgufFile& f) {
  const std::string arch = f.require_string("general.architecture");
  ModelConfig c;
  const ArchitectureInfo* found = find_gguf_architecture(arch);
  if (!found)
    throw_input_error("{}: general.architecture '{}' is not supported (supported architectures: {})", f.source(), arch,
                      supported_architectures());
  c.arch = found->arch;
  auto positive = [&](const std::string& k) {
    const int64_t v = f.require_int(k);
    if (v <= 0) throw_input_error("{}: metadata key {} must be positive, got {}", f.source(), k, v);
    return v;
  };
  const bool gemma4 = c.arch == Architecture::kGemma4;  // per-layer arrays: read_gemma4_keys
  c.dim = positive(key(arch, "embedding_length"));
  c.n_layers = positive(key(arch, "block_count"));
  if (!gemma4) c.ffn_dim = positive(key(arch, "feed_forward_length"));
  c.n_heads = positive(key(arch, "attention.head_count"));
  if (!gemma4) c.n_kv_heads = f.get_int(key(arch, "attention.head_count_kv")).value_or(c.n_heads);
  c.max_positions = f.get_int(key(arch, "context_length")).value_or(2048);
  c.head_dim = f.get_int(key(arch, "attention.key_length")).value_or(c.dim / c.n_heads);
  // Fewer rotary dims than the head has: partial rotary (phi-4-mini).
  if (auto rot = f.get_int(key(arch, "rope.dimension_count")); rot && *rot != c.head_dim && !gemma4) {
    if (*rot <= 0 || *rot > c.head_dim || *rot % 2 != 0)
      throw_input_error("{}: {} = {} must be even and at most the head dimension {}", f.source(),
                        key(arch, "rope.dimension_count"), *rot, c.head_dim);
    c.rotary_dim = *rot;
  }
  c.rope_theta = static_cast<float>(f.get_number(key(arch, "rope.freq_base")).value_or(10000.0));
  c.norm_eps = static_cast<float>(f.get_number(key(arch, "attention.layer_norm_rms_epsilon")).value_or(1e-5));
  if (auto type = f.get_string(key(arch, "rope.scaling.type")); type && *type != "none" && *type != "llama3")
    throw_input_error("{}: {} '{}' is not supported (llama3 scaling comes as a rope_freqs tensor)", f.source(),
                      key(arch, "rope.scaling.type"), *type);
  if (auto v = f.get_int(key(arch, "vocab_size"))) {
    c.vocab_size = *v;
  } else if (const GgufValue* toks = f.find("tokenizer.ggml.tokens"); toks && toks->as_array()) {
    c.vocab_size = static_cast<int64_t>(toks->as_array()->size());
  } else if (const GgufTensorInfo* emb = f.find_tensor("token_embd.weight"); emb && emb->ne.size() == 2) {
    c.vocab_size = static_cast<int64_t>(emb->ne[1]);
  }
  const ArchitectureInfo& info = architecture_info(c.arch);
  c.qkv_bias = info.qkv_bias;
  c.qk_norm = info.qk_norm;
  if (c.arch == Architecture::kGranite) {
    // llama.cpp's names for Granite's multipliers; a missing one is 1, as in GraniteConfig.
    auto number = [&](const char* suffix) {
      const double v = f.get_number(key(arch, suffix)).value_or(1.0);
      return static_cast<float>(v);
    };
    c.embedding_multiplier = number("embedding_scale");
    c.residual_multiplier = number("residual_scale");
    c.attention_multiplier = number("attention.scale");
    c.logits_scaling = number("logit_scale");
  }
  const bool gemma23 = c.arch == Architecture::kGemma2 || c.arch == Architecture::kGemma3;
  if (c.arch == Architecture::kGemma || gemma23 || gemma4) {  // GeGLU, embeddings times sqrt(dim)
    c.ffn_activation = FfnActivation::kGeluTanh;
    c.embedding_multiplier = ModelConfig::gemma_embedding_scale(c.dim);
  }
  if (gemma4) read_gemma4_keys(f, arch, c);
  if (gemma23) {
    c.sandwich_norms = true;
    c.attn_logit_softcap = static_cast<float>(f.get_number(key(arch, "attn_logit_softcapping")).value_or(0.0));
    c.final_logit_softcap = static_cast<float>(f.get_number(key(arch, "final_logit_softcapping")).value_or(0.0));
    c.sliding_window = f.get_int(key(arch, "attention.sliding_window")).value_or(0);
    c.sliding_layers.assign(static_cast<size_t>(c.n_layers), 0);
    for (int64_t l = 0; l < c.n_layers; ++l) c.sliding_layers[static_cast<size_t>(l)] = gemma_gguf_layer_slides(c, l);
    c.attention_multiplier = gemma2_gguf_attention_scale(c);
    // llama.cpp's gemma3: the sliding layers' rope base 10000 unless the file says otherwise.
    if (c.arch == Architecture::kGemma3)
      c.rope_local_theta = static_cast<float>(f.get_number(key(arch, "rope.freq_base_swa")).value_or(10000.0));
  }
  if (c.arch == Architecture::kPhi3) {
    // llama.cpp's phi3: every layer over the window when the key is set below the context.
    if (auto w = f.get_int(key(arch, "attention.sliding_window")); w && *w > 0 && *w < c.max_positions) {
      c.sliding_window = *w;
      c.sliding_layers.assign(static_cast<size_t>(c.n_layers), 1);
    }
    // longrope's factors come as tensors (the loader reads them); these keys go with them.
    c.long_rope.original_max_positions =
        f.get_int(key(arch, "rope.scaling.original_context_length")).value_or(c.max_positions);
    c.long_rope.attention_factor = static_cast<float>(f.get_number(key(arch, "rope.scaling.attn_factor")).value_or(1.0));
  }
  if (c.arch == Architecture::kSmolLM3) {
    // llama.cpp fixes SmolLM3's pattern: every fourth layer has no rotary embedding.
    c.rope_layers.assign(static_cast<size_t>(c.n_layers), 1);
    for (int64_t l = 0; l < c.n_layers; ++l) c.rope_layers[static_cast<size_t>(l)] = (l + 1) % kSmolLM3NoRopeInterval != 0;
  }
  c.bos_id = token_id(f, "tokenizer.ggml.bos_token_id", 1);
  c.eos_id = token_id(f, "tokenizer.ggml.eos_token_id", 2);
  if (auto name = f.get_string("general.name")) c.name = *name;
  return c;
}

void gguf_write_config(GgufWriter& w, const ModelConfig& c) {
  const std::string arch(architecture_info(c.arch).gguf_name);
  auto u32 = [](int64_t v) { return GgufValue::u32(static_cast<uint32_t>(v)); };
  w.set("general.architecture", GgufValue::string(arch));
  if (!c.name.empty()) w.set("general.name", GgufValue::string(c.name));
  w.set(key(arch, "context_length"), u32(c.max_positions));
  w.set(key(arch, "embedding_length"), u32(c.dim));
  w.set(key(arch, "block_count"), u32(c.n_layers));
  w.set(key(arch, "feed_forward_length"), u32(c.ffn_dim));
  w.set(key(arch, "attention.head_count"), u32(c.n_heads));
  w.set(key(arch, "attention.head_count_kv"), u32(c.n_kv_heads));
  w.set(key(arch, "rope.freq_base"), GgufValue::f32(c.rope_theta));
  w.set(key(arch, "attention.layer_norm_rms_epsilon"), GgufValue::f32(c.norm_eps));
  w.set(key(arch, "vocab_size"), u32(c.vocab_size));
  w.set(key(arch, "rope.dimension_count"), u32(c.rotary_dims()));
  if (c.arch == Architecture::kGemma4) write_gemma4_keys(w, arch, c);
  if (c.long_rope.enabled()) {
    if (c.arch != Architecture::kPhi3) throw_input_error("GGUF: longrope is written for the phi3 architecture only");
    w.set(key(arch, "rope.scaling.original_context_length"), u32(c.long_rope.original_max_positions));
    w.set(key(arch, "rope.scaling.attn_factor"), GgufValue::f32(c.long_rope.attention_factor));
  }
  const bool every_layer_slides =
      !c.sliding_layers.empty() && std::all_of(c.sliding_layers.begin(), c.sliding_layers.end(), [](uint8_t s) { return s != 0; });
  if (c.arch == Architecture::kPhi3) {
    if (!c.sliding_layers.empty() && !every_layer_slides)
      throw_input_error("GGUF: llama.cpp's phi3 slides every layer or none; this model slides some");
    w.set(key(arch, "attention.sliding_window"), u32(every_layer_slides ? c.sliding_window : 0));
  }
  if (c.arch == Architecture::kGranite) {
    w.set(key(arch, "embedding_scale"), GgufValue::f32(c.embedding_multiplier));
    w.set(key(arch, "residual_scale"), GgufValue::f32(c.residual_multiplier));
    w.set(key(arch, "attention.scale"), GgufValue::f32(c.attention_scale()));
    w.set(key(arch, "logit_scale"), GgufValue::f32(c.logits_scaling));
  } else if (c.has_scalings() && !implied_gemma_scalings(c)) {
    throw_input_error("GGUF: the {} architecture has no keys for embedding/residual/attention/logit multipliers", arch);
  }
  if (c.arch == Architecture::kGemma2 || c.arch == Architecture::kGemma3) {
    if (c.attn_logit_softcap > 0.0f) w.set(key(arch, "attn_logit_softcapping"), GgufValue::f32(c.attn_logit_softcap));
    if (c.final_logit_softcap > 0.0f) w.set(key(arch, "final_logit_softcapping"), GgufValue::f32(c.final_logit_softcap));
    w.set(key(arch, "attention.sliding_window"), u32(c.sliding_window));
    if (c.rope_local_theta > 0.0f) w.set(key(arch, "rope.freq_base_swa"), GgufValue::f32(c.rope_local_theta));
    for (int64_t l = 0; l < c.n_layers; ++l)
      if (c.layer_slides(l) != gemma_gguf_layer_slides(c, l))
        throw_input_error("GGUF: llama.cpp fixes {}'s sliding layers; layer {} differs", arch, l);
  } else if (c.arch != Architecture::kGemma4 &&
             (c.sandwich_norms || c.attn_logit_softcap > 0.0f || c.final_logit_softcap > 0.0f ||
              (!c.sliding_layers.empty() && c.arch != Architecture::kPhi3))) {
    throw_input_error("GGUF: the {} architecture has no keys for norms after each block, soft-capping or sliding windows",
                      arch);
  }
  if (c.ffn_activation != FfnActivation::kSilu && c.arch != Architecture::kGemma && c.arch != Architecture::kGemma2 &&
      c.arch != Architecture::kGemma3 && c.arch != Architecture::kGemma4)
    throw_input_error("GGUF: the {} architecture's MLP is SwiGLU; the model's is GeGLU", arch);
  if (c.arch == Architecture::kSmolLM3) {
    for (int64_t l = 0; l < c.n_layers; ++l)
      if (c.layer_uses_rope(l) != ((l + 1) % kSmolLM3NoRopeInterval != 0))
        throw_input_error("GGUF: llama.cpp's smollm3 fixes the layers without rotary embedding at every {}th; layer {} differs",
                          kSmolLM3NoRopeInterval, l);
  } else if (!c.rope_layers.empty()) {
    throw_input_error("GGUF: the {} architecture cannot mark layers without rotary embedding", arch);
  }
  if (c.head_dim * c.n_heads != c.dim && c.arch != Architecture::kGemma4) {
    w.set(key(arch, "attention.key_length"), u32(c.head_dim));
    w.set(key(arch, "attention.value_length"), u32(c.head_dim));
  }
}

GgufVocab gguf_read_vocab(const GgufFile& f) {
  auto model = f.get_string("tokenizer.ggml.model");
  if (!model) return std::monostate{};
  const std::string chat = f.get_string("tokenizer.chat_template").value_or("");
  auto tokens = f.get_string_array("tokenizer.ggml.tokens");
  if (tokens.empty()) throw_input_error("{}: missing metadata key tokenizer.ggml.tokens", f.source());
  auto types = to_types(f, f.get_int_array("tokenizer.ggml.token_type"));
  if (!types.empty() && types.size() != tokens.size())
    throw_input_error("{}: tokenizer.ggml.token_type has {} entries for {} tokens", f.source(), types.size(),
                      tokens.size());
  const int32_t n = static_cast<int32_t>(tokens.size());
  auto check_id = [&](const char* k, int32_t id) {
    if (id >= n) throw_input_error("{}: {} = {} is outside the vocabulary of {}", f.source(), k, id, n);
    return id;
  };
  if (*model == "llama") {
    SpmVocab v;
    v.pieces = std::move(tokens);
    v.scores = f.get_float_array("tokenizer.ggml.scores");
    if (v.scores.empty()) v.scores.assign(v.pieces.size(), 0.0f);
    if (v.scores.size() != v.pieces.size())
      throw_input_error("{}: tokenizer.ggml.scores has {} entries for {} tokens", f.source(), v.scores.size(),
                        v.pieces.size());
    v.types = std::move(types);
    v.bos_id = check_id("tokenizer.ggml.bos_token_id", token_id(f, "tokenizer.ggml.bos_token_id", 1));
    v.eos_id = check_id("tokenizer.ggml.eos_token_id", token_id(f, "tokenizer.ggml.eos_token_id", 2));
    v.unk_id = check_id("tokenizer.ggml.unknown_token_id", token_id(f, "tokenizer.ggml.unknown_token_id", 0));
    v.add_space_prefix = f.get_bool("tokenizer.ggml.add_space_prefix").value_or(true);
    v.chat_template = chat;
    return v;
  }
  if (*model == "gpt2" || *model == "gemma4") {  // gemma4: llama.cpp's SentencePiece-style BPE
    BpeVocab v;
    v.sentencepiece_style = *model == "gemma4";
    v.tokens = std::move(tokens);
    v.merges = f.get_string_array("tokenizer.ggml.merges");
    v.types = std::move(types);
    v.pre_tokenizer = f.get_string("tokenizer.ggml.pre").value_or("default");
    v.bos_id = check_id("tokenizer.ggml.bos_token_id", token_id(f, "tokenizer.ggml.bos_token_id", -1));
    v.eos_id = check_id("tokenizer.ggml.eos_token_id", token_id(f, "tokenizer.ggml.eos_token_id", -1));
    v.add_bos = f.get_bool("tokenizer.ggml.add_bos_token").value_or(v.sentencepiece_style);
    v.chat_template = chat;
    return v;
  }
  throw_input_error("{}: tokenizer.ggml.model '{}' is not supported (supported: llama, gpt2, gemma4)", f.source(), *model);
}

void gguf_write_vocab(GgufWriter& w, const SpmVocab& v) {
  w.set("tokenizer.ggml.model", GgufValue::string("llama"));
  w.set("tokenizer.ggml.tokens", GgufValue::string_array(v.pieces));
  w.set("tokenizer.ggml.scores", GgufValue::f32_array(v.scores));
  if (!v.types.empty()) w.set("tokenizer.ggml.token_type", GgufValue::i32_array(from_types(v.types)));
  w.set("tokenizer.ggml.bos_token_id", GgufValue::u32(static_cast<uint32_t>(v.bos_id)));
  w.set("tokenizer.ggml.eos_token_id", GgufValue::u32(static_cast<uint32_t>(v.eos_id)));
  w.set("tokenizer.ggml.unknown_token_id", GgufValue::u32(static_cast<uint32_t>(v.unk_id)));
  w.set("tokenizer.ggml.add_bos_token", GgufValue::boolean(true));
  w.set("tokenizer.ggml.add_space_prefix", GgufValue::boolean(v.add_space_prefix));
  if (!v.chat_template.empty()) w.set("tokenizer.chat_template", GgufValue::string(v.chat_template));
}

std::string gguf_pre_tokenizer_name(std::string_view pre_tokenizer) {
  // llama.cpp knows the plain GPT-2 regex as "gpt-2" (its "default" is a different regex set) and
  // refuses "gpt2"; the other names we use ("smollm", "llama-bpe", "llama3", "qwen2", "starcoder",
  // "refact") are already its own.
  if (pre_tokenizer.empty() || pre_tokenizer == "gpt2") return "gpt-2";
  return std::string(pre_tokenizer);
}

void gguf_write_vocab(GgufWriter& w, const BpeVocab& v) {
  w.set("tokenizer.ggml.model", GgufValue::string(v.sentencepiece_style ? "gemma4" : "gpt2"));
  if (!v.sentencepiece_style) w.set("tokenizer.ggml.pre", GgufValue::string(gguf_pre_tokenizer_name(v.pre_tokenizer)));
  w.set("tokenizer.ggml.tokens", GgufValue::string_array(v.tokens));
  if (!v.types.empty()) w.set("tokenizer.ggml.token_type", GgufValue::i32_array(from_types(v.types)));
  w.set("tokenizer.ggml.merges", GgufValue::string_array(v.merges));
  if (v.bos_id >= 0) w.set("tokenizer.ggml.bos_token_id", GgufValue::u32(static_cast<uint32_t>(v.bos_id)));
  if (v.eos_id >= 0) w.set("tokenizer.ggml.eos_token_id", GgufValue::u32(static_cast<uint32_t>(v.eos_id)));
  w.set("tokenizer.ggml.add_bos_token", GgufValue::boolean(v.add_bos));
  w.set("tokenizer.ggml.add_space_prefix", GgufValue::boolean(false));
  if (!v.chat_template.empty()) w.set("tokenizer.chat_template", GgufValue::string(v.chat_template));
}

}  // namespace genai
