#include "model/hf_config.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/mapped_file.h"

namespace genai {
namespace {

using nlohmann::json;

// Shortest decimal of a float, as a double, so 1e-5f is written as 1e-05 and not 9.99999974e-06.
double tidy(float f) { return std::stod(fmt::format("{}", f)); }

class ConfigReader {
 public:
  ConfigReader(const json& j, std::string source) : j_(j), source_(std::move(source)) {}

  const json* find(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  // The key is there and null (transformers writes null for "none", e.g. no soft-capping).
  bool has_null(const char* key) const {
    auto it = j_.find(key);
    return it != j_.end() && it->is_null();
  }
  int64_t require_int(const char* key) const {
    const json* v = find(key);
    if (!v) throw_input_error("{}: missing key {}", source_, key);
    return as_int(*v, key);
  }
  int64_t get_int(const char* key, int64_t fallback) const {
    const json* v = find(key);
    return v ? as_int(*v, key) : fallback;
  }
  double get_number(const char* key, double fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_number()) throw_input_error("{}: key {} must be a number, got {}", source_, key, v->dump());
    return v->get<double>();
  }
  bool get_bool(const char* key, bool fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) throw_input_error("{}: key {} must be true or false, got {}", source_, key, v->dump());
    return v->get<bool>();
  }
  // A token id, or the first of a list of ids (eos_token_id may list several).
  int64_t get_token_id(const char* key, int64_t fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (v->is_array()) {
      if (v->empty()) return fallback;
      return as_int((*v)[0], key);
    }
    return as_int(*v, key);
  }
  int64_t as_int(const json& v, const char* key) const {
    if (!v.is_number_integer()) throw_input_error("{}: key {} must be an integer, got {}", source_, key, v.dump());
    return v.get<int64_t>();
  }
  const std::string& source() const { return source_; }

 private:
  const json& j_;
  std::string source_;
};

}  // namespace

Architecture parse_architecture(const std::string& name, const std::string& source, const std::string& key) {
  if (const ArchitectureInfo* info = find_architecture(name)) return info->arch;
  throw_input_error("{}: {} '{}' is not supported (supported architectures: {})", source, key, name,
                    supported_architectures());
}

namespace {

// A layer pattern that would change the attention we build (sliding windows) is refused by name
// until it is built, never ignored.
void refuse_sliding_window(const ConfigReader& r) {
  if (r.get_bool("use_sliding_window", false))
    throw_input_error("{}: use_sliding_window = true is not supported (sliding-window attention)", r.source());
  if (const json* types = r.find("layer_types")) {
    if (!types->is_array()) throw_input_error("{}: key layer_types must be a list", r.source());
    for (const json& t : *types)
      if (!t.is_string() || t.get<std::string>() != "full_attention")
        throw_input_error("{}: layer_types entry {} is not supported (supported: full_attention)", r.source(), t.dump());
  }
}

std::vector<float> factor_list(const ConfigReader& s, const char* key) {
  const json* v = s.find(key);
  if (!v || !v->is_array()) throw_input_error("{}: longrope needs a list {}", s.source(), key);
  std::vector<float> out;
  for (const json& e : *v) {
    if (!e.is_number()) throw_input_error("{}: {} holds {} (numbers only)", s.source(), key, e.dump());
    out.push_back(static_cast<float>(e.get<double>()));
  }
  return out;
}

// Phi-3's longrope, with transformers' defaults: the original context from the top level
// (phi3's field wins) or the scaling object; factor max / original; attention factor
// sqrt(1 + ln(factor) / ln(original)) when the factor exceeds 1.
void read_long_rope(const ConfigReader& r, const ConfigReader& s, ModelConfig& c) {
  LongRope& lr = c.long_rope;
  lr.short_factor = factor_list(s, "short_factor");
  lr.long_factor = factor_list(s, "long_factor");
  lr.original_max_positions =
      r.get_int("original_max_position_embeddings", s.get_int("original_max_position_embeddings", c.max_positions));
  if (lr.original_max_positions <= 0)
    throw_input_error("{}: original_max_position_embeddings must be positive", r.source());
  const double factor = s.get_number("factor", static_cast<double>(c.max_positions) / lr.original_max_positions);
  const double fallback =
      factor <= 1.0 ? 1.0 : std::sqrt(1.0 + std::log(factor) / std::log(static_cast<double>(lr.original_max_positions)));
  lr.attention_factor = static_cast<float>(s.get_number("attention_factor", fallback));
}

// Layer kinds from layer_types (sliding_attention / full_attention), or every `pattern`-th layer
// full when the key is missing.
void read_layer_types(const ConfigReader& r, ModelConfig& c, int64_t pattern) {
  c.sliding_layers.assign(static_cast<size_t>(std::max<int64_t>(c.n_layers, 0)), 0);
  const json* types = r.find("layer_types");
  if (types && (!types->is_array() || static_cast<int64_t>(types->size()) != c.n_layers))
    throw_input_error("{}: key layer_types must list {} entries", r.source(), c.n_layers);
  for (int64_t l = 0; l < c.n_layers; ++l) {
    if (!types) {
      c.sliding_layers[static_cast<size_t>(l)] = (l + 1) % pattern != 0;
      continue;
    }
    const json& t = (*types)[static_cast<size_t>(l)];
    const std::string s = t.is_string() ? t.get<std::string>() : "";
    if (s != "sliding_attention" && s != "full_attention")
      throw_input_error("{}: layer_types[{}] = {} (valid: sliding_attention, full_attention)", r.source(), l, t.dump());
    c.sliding_layers[static_cast<size_t>(l)] = s == "sliding_attention";
  }
}

// Gemma4TextConfig, with its defaults where a key is missing. Features we do not build (MoE
// blocks, bidirectional attention) are refused by name.
void read_gemma4_fields(const ConfigReader& r, ModelConfig& c) {
  const std::string& source = r.source();
  if (r.get_bool("enable_moe_block", false))
    throw_input_error("{}: enable_moe_block = true is not supported (gemma4's mixture-of-experts blocks)", source);
  if (const json* b = r.find("use_bidirectional_attention"))
    throw_input_error("{}: use_bidirectional_attention = {} is not supported (a causal decoder; valid: null)", source,
                      b->dump());
  if (r.get_bool("attention_bias", false)) throw_input_error("{}: attention_bias = true is not supported for gemma4", source);
  c.sandwich_norms = true;
  c.attention_multiplier = 1.0f;  // Gemma4TextAttention.scaling
  c.final_logit_softcap = static_cast<float>(r.get_number("final_logit_softcapping", 0.0));
  c.sliding_window = r.get_int("sliding_window", 512);
  read_layer_types(r, c, 6);
  if (c.n_layers > 0) c.sliding_layers.back() = 0;  // transformers forces the last layer global
  c.kv_shared_layers = r.get_int("num_kv_shared_layers", 0);
  c.kv_from_k = r.get_bool("attention_k_eq_v", false);
  c.wide_shared_mlp = r.get_bool("use_double_wide_mlp", false);
  c.v_norm = c.layer_scalars = c.wide_kv_cache = true;
  c.ple_dim = r.get_int("hidden_size_per_layer_input", 256);
  c.ple_vocab = c.ple_dim > 0 ? r.get_int("vocab_size_per_layer_input", 262144) : 0;
  // The global layers' head size and KV heads: per_layer_config (what transformers 5.24 writes),
  // or global_head_dim (default 512) and num_global_key_value_heads (read only with
  // attention_k_eq_v, as transformers does).
  if (const json* per_layer = r.find("per_layer_config")) {
    if (!per_layer->is_object()) throw_input_error("{}: per_layer_config must be an object", source);
    for (auto it = per_layer->begin(); it != per_layer->end(); ++it) {
      int64_t l = -1;
      try {
        size_t used = 0;
        l = std::stoll(it.key(), &used);
        if (used != it.key().size()) l = -1;
      } catch (const std::exception&) {
      }
      if (l < 0 || l >= c.n_layers || !it.value().is_object())
        throw_input_error("{}: per_layer_config key '{}' is not a layer index below {} with an object", source, it.key(),
                          c.n_layers);
      const ConfigReader e(it.value(), source + " per_layer_config." + it.key());
      for (auto f = it.value().begin(); f != it.value().end(); ++f)
        if (f.key() != "head_dim" && f.key() != "num_key_value_heads")
          throw_input_error("{}: per_layer_config.{}.{} is not supported (supported: head_dim, num_key_value_heads)",
                            source, it.key(), f.key());
      if (c.layer_slides(l))
        throw_input_error("{}: per_layer_config.{} overrides a sliding layer (only full-attention layers may differ)",
                          source, it.key());
      const int64_t hd = e.get_int("head_dim", c.head_dim), kv = e.get_int("num_key_value_heads", c.n_kv_heads);
      if ((c.global_head_dim > 0 && hd != c.global_head_dim) || (c.global_kv_heads > 0 && kv != c.global_kv_heads))
        throw_input_error("{}: per_layer_config gives the full-attention layers different sizes (layer {}: head_dim {}, "
                          "num_key_value_heads {})", source, l, hd, kv);
      c.global_head_dim = hd;
      c.global_kv_heads = kv;
    }
    for (int64_t l = 0; l < c.n_layers; ++l)
      if (!c.layer_slides(l) && !per_layer->contains(std::to_string(l)) && c.global_head_dim > 0 &&
          (c.global_head_dim != c.head_dim || c.global_kv_heads != c.n_kv_heads))
        throw_input_error("{}: per_layer_config has no entry for full-attention layer {}", source, l);
  } else {
    c.global_head_dim = r.get_int("global_head_dim", 512);
    c.global_kv_heads = c.kv_from_k ? r.get_int("num_global_key_value_heads", c.n_kv_heads) : c.n_kv_heads;
  }
  if (c.global_head_dim == c.head_dim) c.global_head_dim = 0;
  if (c.global_kv_heads == c.n_kv_heads) c.global_kv_heads = 0;
}

void read_family_fields(const ConfigReader& r, ModelConfig& c) {
  switch (c.arch) {
    case Architecture::kLlama:
    case Architecture::kQwen2:
    case Architecture::kGlm:
    case Architecture::kCodeGen:  // read_codegen_config
      return;
    case Architecture::kQwen3:
      refuse_sliding_window(r);
      return;
    case Architecture::kGemma2:
    case Architecture::kGemma3: {
      // Gemma2Config's / Gemma3TextConfig's defaults where a key is missing; null caps mean none.
      const bool g2 = c.arch == Architecture::kGemma2;
      c.sandwich_norms = true;
      c.attention_multiplier =
          static_cast<float>(1.0 / std::sqrt(r.get_number("query_pre_attn_scalar", 256.0)));
      c.attn_logit_softcap = static_cast<float>(r.get_number("attn_logit_softcapping", 0.0));
      c.final_logit_softcap = static_cast<float>(r.get_number("final_logit_softcapping", 0.0));
      if (g2 && !r.find("attn_logit_softcapping") && !r.has_null("attn_logit_softcapping")) c.attn_logit_softcap = 50.0f;
      if (g2 && !r.find("final_logit_softcapping") && !r.has_null("final_logit_softcapping")) c.final_logit_softcap = 30.0f;
      c.sliding_window = r.get_int("sliding_window", 4096);
      const int64_t pattern = g2 ? 2 : r.get_int("sliding_window_pattern", 6);  // gemma3: every 6th layer is global
      if (pattern <= 0) throw_input_error("{}: sliding_window_pattern must be positive, got {}", r.source(), pattern);
      if (!g2 && r.get_bool("use_bidirectional_attention", false))
        throw_input_error("{}: use_bidirectional_attention = true is not supported (a causal decoder)", r.source());
      read_layer_types(r, c, pattern);  // gemma2: every even layer slides
      return;
    }
    case Architecture::kGemma4:
      read_gemma4_fields(r, c);
      return;
    case Architecture::kGemma:
      if (r.get_bool("use_bidirectional_attention", false))
        throw_input_error("{}: use_bidirectional_attention = true is not supported (a causal decoder)", r.source());
      return;
    case Architecture::kPhi3:
      // Phi-3-mini-4k attends over a sliding window of 2047 on every layer (Phi-4-mini's window
      // passes its context: none in effect).
      if (const json* w = r.find("sliding_window")) {
        if (!w->is_number_integer() || w->get<int64_t>() <= 0)
          throw_input_error("{}: sliding_window {} is not supported (valid: a positive integer or null)", r.source(),
                            w->dump());
        if (w->get<int64_t>() < c.max_positions) {
          c.sliding_window = w->get<int64_t>();
          c.sliding_layers.assign(static_cast<size_t>(std::max<int64_t>(c.n_layers, 0)), 1);
        }
      }
      return;
    case Architecture::kGranite:
      c.embedding_multiplier = static_cast<float>(r.get_number("embedding_multiplier", 1.0));
      c.residual_multiplier = static_cast<float>(r.get_number("residual_multiplier", 1.0));
      c.attention_multiplier = static_cast<float>(r.get_number("attention_multiplier", 1.0));
      c.logits_scaling = static_cast<float>(r.get_number("logits_scaling", 1.0));
      if (r.get_number("attention_dropout", 0.0) != 0.0)
        throw_input_error("{}: attention_dropout must be 0 for inference", r.source());
      return;
    case Architecture::kSmolLM3: {
      refuse_sliding_window(r);
      const int64_t interval = r.get_int("no_rope_layer_interval", 4);
      c.rope_layers.assign(static_cast<size_t>(std::max<int64_t>(c.n_layers, 0)), 1);
      if (const json* list = r.find("no_rope_layers")) {
        if (!list->is_array() || static_cast<int64_t>(list->size()) != c.n_layers)
          throw_input_error("{}: key no_rope_layers must list {} entries of 0 or 1", r.source(), c.n_layers);
        for (size_t i = 0; i < list->size(); ++i) {
          const json& v = (*list)[i];
          if (!v.is_number_integer() || (v.get<int64_t>() != 0 && v.get<int64_t>() != 1))
            throw_input_error("{}: no_rope_layers[{}] = {} (valid: 0, 1)", r.source(), i, v.dump());
          c.rope_layers[i] = static_cast<uint8_t>(v.get<int64_t>());
        }
      } else {
        if (interval <= 0) throw_input_error("{}: no_rope_layer_interval must be positive, got {}", r.source(), interval);
        for (int64_t l = 0; l < c.n_layers; ++l) c.rope_layers[static_cast<size_t>(l)] = (l + 1) % interval != 0;
      }
      return;
    }
  }
}

// CodeGen's config.json speaks GPT-J's names (n_embd, n_layer, ...), with CodeGenConfig's defaults;
// its features are fixed: LayerNorms, parallel blocks, a plain biased GELU MLP, a biased head,
// rope (base 10000) on interleaved pairs of each head's leading rotary_dim dims.
void read_codegen_config(const ConfigReader& r, ModelConfig& c) {
  const std::string& source = r.source();
  c.dim = r.require_int("n_embd");
  c.n_layers = r.require_int("n_layer");
  c.n_heads = r.require_int("n_head");
  if (c.n_heads <= 0 || c.dim % c.n_heads != 0)
    throw_input_error("{}: n_embd {} is not a multiple of n_head {}", source, c.dim, c.n_heads);
  if (c.dim % 4 != 0) throw_input_error("{}: n_embd {} must be a multiple of 4 (qkv_proj's four groups)", source, c.dim);
  c.head_dim = c.dim / c.n_heads;
  c.ffn_dim = r.get_int("n_inner", 4 * c.dim);  // null: 4 * n_embd
  c.vocab_size = r.require_int("vocab_size");
  c.max_positions = r.get_int("n_positions", 2048);
  // Without rotary_dim transformers rotates by tables as wide as the hidden size, which only fits
  // a single head: refused rather than guessed.
  if (!r.find("rotary_dim")) throw_input_error("{}: rotary_dim is missing or null (valid: an even number up to {})", source, c.head_dim);
  c.rotary_dim = r.require_int("rotary_dim");
  if (c.rotary_dim == c.head_dim) c.rotary_dim = 0;
  c.rope_theta = 10000.0f;
  c.norm_eps = static_cast<float>(r.get_number("layer_norm_epsilon", 1e-5));
  const json* act = r.find("activation_function");
  if (act && (!act->is_string() || (act->get<std::string>() != "gelu_new" && act->get<std::string>() != "gelu_pytorch_tanh")))
    throw_input_error("{}: activation_function {} is not supported (supported: gelu_new, gelu_pytorch_tanh)", source,
                      act->dump());
  c.tied_embeddings = r.get_bool("tie_word_embeddings", false);
  c.bos_id = static_cast<int32_t>(r.get_token_id("bos_token_id", 50256));
  c.eos_id = static_cast<int32_t>(r.get_token_id("eos_token_id", 50256));
  set_codegen_features(c);
}

std::string codegen_config_json(const ModelConfig& c) {
  json j = {
      {"architectures", {"CodeGenForCausalLM"}},
      {"model_type", "codegen"},
      {"n_embd", c.dim},
      {"n_layer", c.n_layers},
      {"n_head", c.n_heads},
      {"n_inner", c.ffn_dim},
      {"rotary_dim", c.rotary_dims()},
      {"n_positions", c.max_positions},
      {"n_ctx", c.max_positions},
      {"vocab_size", c.vocab_size},
      {"layer_norm_epsilon", tidy(c.norm_eps)},
      {"activation_function", "gelu_new"},
      {"tie_word_embeddings", c.tied_embeddings},
      {"torch_dtype", "float32"},
      {"use_cache", true},
  };
  j["bos_token_id"] = c.bos_id >= 0 ? json(c.bos_id) : json(nullptr);
  j["eos_token_id"] = c.eos_id >= 0 ? json(c.eos_id) : json(nullptr);
  if (!c.name.empty()) j["_name_or_path"] = c.name;
  return j.dump(2) + "\n";
}

// Gemma4TextConfig's keys for what read_gemma4_fields reads, as transformers 5.24 writes them
// (per_layer_config for the full-attention layers' sizes).
void write_gemma4_fields(const ModelConfig& c, json& j) {
  j["hidden_activation"] = "gelu_pytorch_tanh";
  j.erase("hidden_act");
  j["final_logit_softcapping"] = c.final_logit_softcap > 0.0f ? json(tidy(c.final_logit_softcap)) : json(nullptr);
  j["sliding_window"] = c.sliding_window;
  std::vector<std::string> types;
  for (int64_t l = 0; l < c.n_layers; ++l) types.push_back(c.layer_slides(l) ? "sliding_attention" : "full_attention");
  j["layer_types"] = types;
  json full = {{"rope_type", "default"}, {"rope_theta", tidy(c.rope_theta)}};
  if (c.global_rope_fraction > 0.0f)
    full = {{"rope_type", "proportional"}, {"partial_rotary_factor", tidy(c.global_rope_fraction)}, {"rope_theta", tidy(c.rope_theta)}};
  const float local = c.rope_local_theta > 0.0f ? c.rope_local_theta : c.rope_theta;
  j["rope_parameters"] = {{"full_attention", full},
                          {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", tidy(local)}}}};
  j.erase("rope_theta");
  json per_layer = json::object();
  for (int64_t l = 0; l < c.n_layers; ++l)
    if (!c.layer_slides(l))
      per_layer[std::to_string(l)] = {{"head_dim", c.layer_head_dim(l)}, {"num_key_value_heads", c.layer_kv_heads(l)}};
  j["per_layer_config"] = per_layer;
  j["num_kv_shared_layers"] = c.kv_shared_layers;
  j["attention_k_eq_v"] = c.kv_from_k;
  j["use_double_wide_mlp"] = c.wide_shared_mlp;
  j["enable_moe_block"] = false;
  j["use_bidirectional_attention"] = nullptr;
  j["hidden_size_per_layer_input"] = c.ple_dim;
  j["vocab_size_per_layer_input"] = c.ple_dim > 0 ? c.ple_vocab : c.vocab_size;
}

}  // namespace

json read_hf_config_json(const std::filesystem::path& config_json) {
  auto map = MappedFile::open(config_json);
  auto bytes = map->bytes();
  json j = json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw_input_error("{}: not a JSON object", config_json.string());
  return j;
}

namespace {

// The multimodal wrappers whose text_config is a decoder we build: model_type -> where the
// checkpoint keeps the text decoder's tensors (in place of "model.").
const char* wrapper_text_prefix(const json& j) {
  auto mt = j.find("model_type");
  auto tc = j.find("text_config");
  if (mt == j.end() || !mt->is_string() || tc == j.end() || !tc->is_object()) return nullptr;
  const std::string t = mt->get<std::string>();
  if (t == "gemma4") return "model.language_model.";
  if (t == "smolvlm" || t == "idefics3") return "model.text_model.";
  // As transformers saves them (their modules name it model.language_model.).
  if (t == "internvl" || t == "granite_speech") return "language_model.model.";
  return nullptr;
}

}  // namespace

std::vector<std::string> hf_text_tensor_names(const nlohmann::json& config, const std::string& canonical) {
  const char* prefix = wrapper_text_prefix(config);
  if (!prefix) return {canonical};
  const std::string type = config.value("model_type", "");
  const bool llava_layout = type == "internvl" || type == "granite_speech";  // language_model.{model.,lm_head}
  if (canonical.rfind("model.", 0) == 0) {
    std::vector<std::string> names{prefix + canonical.substr(6)};
    if (llava_layout) names.push_back("model.language_model." + canonical.substr(6));
    return names;
  }
  if (llava_layout) return {"language_model." + canonical, canonical};  // lm_head.weight
  return {canonical};
}

ModelConfig read_hf_config(const std::filesystem::path& config_json) {
  json top = read_hf_config_json(config_json);
  const bool wrapper = wrapper_text_prefix(top) != nullptr;
  const std::string source = config_json.string() + (wrapper ? " text_config" : "");
  // SmolVLM's text model is a Llama; its text_config may leave model_type to that default.
  json text = wrapper ? top["text_config"] : json();
  if (wrapper && !text.contains("model_type") && top["model_type"] != "gemma4") text["model_type"] = "llama";
  const json& j = wrapper ? text : top;
  ConfigReader r(j, source);
  ModelConfig c;
  const json* mt = r.find("model_type");
  if (!mt || !mt->is_string()) throw_input_error("{}: missing key model_type (supported: {})", source, supported_architectures());
  c.arch = parse_architecture(mt->get<std::string>(), source, "model_type");
  if (c.arch == Architecture::kCodeGen) {
    read_codegen_config(r, c);
    if (const json* n = r.find("_name_or_path"); n && n->is_string()) c.name = n->get<std::string>();
    c.validate(source);
    return c;
  }
  c.dim = r.require_int("hidden_size");
  c.n_layers = r.require_int("num_hidden_layers");
  c.n_heads = r.require_int("num_attention_heads");
  c.n_kv_heads = r.get_int("num_key_value_heads", c.n_heads);
  // transformers' defaults where config.json leaves a key out: Qwen3Config's head_dim is 128,
  // SmolLM3Config ties the embeddings.
  c.head_dim = r.get_int("head_dim", c.arch == Architecture::kQwen3    ? 128
                                     : c.arch == Architecture::kGemma2 ? 256
                                     : c.arch == Architecture::kGemma3 ? 256
                                     : c.arch == Architecture::kGemma4 ? 256
                                     : c.n_heads > 0                   ? c.dim / c.n_heads
                                                                       : 0);
  c.ffn_dim = r.require_int("intermediate_size");
  c.vocab_size = r.require_int("vocab_size");
  c.max_positions = r.get_int("max_position_embeddings", 2048);
  // transformers 5 writes rope_parameters {rope_type, rope_theta, ...}; 4.x wrote rope_theta and
  // rope_scaling at the top level.
  const json* rope_parameters = r.find("rope_parameters");
  if (rope_parameters && !rope_parameters->is_object())
    throw_input_error("{}: rope_parameters must be an object", source);
  const bool gemma4 = c.arch == Architecture::kGemma4;
  double theta = c.arch == Architecture::kGemma3 || gemma4 ? 1e6 : 10000.0;
  double global_fraction = 0.0;  // gemma4's proportional rope on the full-attention layers
  // Gemma 3 keys its rope by layer type: rope_parameters {full_attention: {...}, sliding_attention:
  // {...}} (transformers 5), or rope_theta and rope_local_base_freq (4.x).
  const json* full_rope = rope_parameters ? ConfigReader(*rope_parameters, source).find("full_attention") : nullptr;
  const json* local_rope = rope_parameters ? ConfigReader(*rope_parameters, source).find("sliding_attention") : nullptr;
  if (full_rope || local_rope) {
    if (!full_rope || !local_rope || !full_rope->is_object() || !local_rope->is_object())
      throw_input_error("{}: rope_parameters by layer type needs full_attention and sliding_attention objects", source);
    for (const json* p : {full_rope, local_rope}) {
      const json* type = ConfigReader(*p, source).find("rope_type");
      const std::string t = type && type->is_string() ? type->get<std::string>() : "default";
      // Gemma 4 rotates its full-attention layers "proportionally" (a leading part of each half).
      const bool proportional = gemma4 && p == full_rope && t == "proportional";
      if (!proportional && (!type || !type->is_string() || t != "default") && type)
        throw_input_error("{}: rope_parameters rope_type {} is not supported by layer type (supported: default{})",
                          source, type->dump(), gemma4 ? ", proportional on full_attention" : "");
      if (proportional) {
        const ConfigReader pr(*p, source + " rope_parameters.full_attention");
        if (pr.get_number("factor", 1.0) != 1.0)
          throw_input_error("{}: rope_parameters.full_attention.factor {} is not supported (valid: 1)", source,
                            pr.get_number("factor", 1.0));
        global_fraction = pr.get_number("partial_rotary_factor", 1.0);
        if (!(global_fraction > 0.0 && global_fraction <= 1.0))
          throw_input_error("{}: rope_parameters.full_attention.partial_rotary_factor {} must be in (0, 1]", source,
                            global_fraction);
      }
    }
    theta = ConfigReader(*full_rope, source + " rope_parameters.full_attention").get_number("rope_theta", theta);
    c.rope_local_theta = static_cast<float>(
        ConfigReader(*local_rope, source + " rope_parameters.sliding_attention").get_number("rope_theta", 10000.0));
  } else if (rope_parameters) {
    theta = ConfigReader(*rope_parameters, source + " rope_parameters").get_number("rope_theta", theta);
  }
  if ((c.arch == Architecture::kGemma3 || gemma4) && !full_rope)
    c.rope_local_theta = static_cast<float>(r.get_number("rope_local_base_freq", 10000.0));
  if (gemma4 && !rope_parameters) global_fraction = 0.25;  // Gemma4TextConfig's default rope_parameters
  c.global_rope_fraction = static_cast<float>(global_fraction == 1.0 ? 0.0 : global_fraction);
  c.rope_theta = static_cast<float>(r.get_number("rope_theta", theta));
  c.norm_eps = static_cast<float>(r.get_number("rms_norm_eps", c.arch == Architecture::kPhi3  ? 1e-5
                                                                : c.arch == Architecture::kGlm ? 1.5625e-07
                                                                                               : 1e-6));
  if (c.arch == Architecture::kGlm && !r.find("head_dim")) c.head_dim = 128;  // GlmConfig's default
  c.tied_embeddings = r.get_bool("tie_word_embeddings", c.arch == Architecture::kSmolLM3 ||
                                                            c.arch == Architecture::kGemma || c.arch == Architecture::kGemma2 ||
                                                            c.arch == Architecture::kGemma3 || gemma4);
  c.bos_id = static_cast<int32_t>(r.get_token_id("bos_token_id", -1));
  c.eos_id = static_cast<int32_t>(r.get_token_id("eos_token_id", -1));
  const ArchitectureInfo& info = architecture_info(c.arch);
  c.qkv_bias = info.qkv_bias;
  c.qk_norm = info.qk_norm;
  if (c.arch == Architecture::kGlm && !r.get_bool("attention_bias", true))
    throw_input_error("{}: attention_bias = false is not supported for glm", source);
  if (c.arch != Architecture::kQwen2 && c.arch != Architecture::kGlm && !gemma4 && r.get_bool("attention_bias", false))
    throw_input_error("{}: attention_bias = true is not supported for {}", source, info.name);
  read_family_fields(r, c);
  if (r.get_bool("mlp_bias", false)) throw_input_error("{}: mlp_bias = true is not supported", source);
  if (c.arch == Architecture::kGemma || c.arch == Architecture::kGemma2 || c.arch == Architecture::kGemma3 || gemma4) {
    // GemmaConfig runs every "gelu" spelling as the tanh form (hidden_activation, or hidden_act).
    const json* act = r.find("hidden_activation");
    if (!act) act = r.find("hidden_act");
    if (act && (!act->is_string() || (act->get<std::string>() != "gelu" && act->get<std::string>() != "gelu_pytorch_tanh")))
      throw_input_error("{}: hidden_activation {} is not supported (supported: gelu_pytorch_tanh, gelu)", source,
                        act->dump());
    c.ffn_activation = FfnActivation::kGeluTanh;
    c.embedding_multiplier = ModelConfig::gemma_embedding_scale(c.dim);
  } else if (const json* act = r.find("hidden_act"); act && (!act->is_string() || act->get<std::string>() != "silu")) {
    throw_input_error("{}: hidden_act {} is not supported (supported: silu)", source, act->dump());
  }
  const json* rs = r.find("rope_scaling");
  if (!rs && !full_rope) rs = rope_parameters;
  if (rs) {
    if (!rs->is_object()) throw_input_error("{}: rope_scaling must be an object or null", source);
    ConfigReader s(*rs, source + " rope_scaling");
    const json* type = s.find("rope_type");
    if (!type) type = s.find("type");
    const std::string t = type && type->is_string() ? type->get<std::string>() : "";
    if (t == "llama3") {
      c.rope_scaling.factor = static_cast<float>(s.get_number("factor", 0.0));
      c.rope_scaling.low_freq_factor = static_cast<float>(s.get_number("low_freq_factor", 1.0));
      c.rope_scaling.high_freq_factor = static_cast<float>(s.get_number("high_freq_factor", 4.0));
      c.rope_scaling.original_max_positions = s.get_int("original_max_position_embeddings", 8192);
      if (!(c.rope_scaling.factor > 0.0f) || !(c.rope_scaling.high_freq_factor > c.rope_scaling.low_freq_factor) ||
          !(c.rope_scaling.low_freq_factor > 0.0f) || c.rope_scaling.original_max_positions <= 0)
        throw_input_error("{}: rope_scaling: invalid llama3 parameters {}", source, rs->dump());
    } else if (t == "longrope" || t == "su") {
      read_long_rope(r, s, c);
    } else if (t != "default" && !t.empty()) {
      throw_input_error("{}: rope_scaling.rope_type '{}' is not supported (supported: default, llama3, longrope)",
                        source, t);
    }
  }
  // Partial rotary (phi-4-mini, GLM): top level (transformers 4) or in rope_parameters (5); GLM's
  // default is half of each head.
  double partial = c.arch == Architecture::kGlm ? 0.5 : 1.0;
  if (rope_parameters) partial = ConfigReader(*rope_parameters, source).get_number("partial_rotary_factor", partial);
  partial = r.get_number("partial_rotary_factor", partial);
  if (!(partial > 0.0 && partial <= 1.0))
    throw_input_error("{}: partial_rotary_factor {} must be in (0, 1]", source, partial);
  if (partial != 1.0) c.rotary_dim = static_cast<int64_t>(static_cast<double>(c.head_dim) * partial);
  if (const json* n = r.find("_name_or_path"); n && n->is_string()) c.name = n->get<std::string>();
  c.validate(source);
  return c;
}

std::string hf_config_json(const ModelConfig& c) {
  if (c.arch == Architecture::kCodeGen) return codegen_config_json(c);
  const ArchitectureInfo& info = architecture_info(c.arch);
  json j = {
      {"architectures", {std::string(info.hf_class)}},
      {"model_type", std::string(architecture_name(c.arch))},
      {"hidden_size", c.dim},
      {"intermediate_size", c.ffn_dim},
      {"num_hidden_layers", c.n_layers},
      {"num_attention_heads", c.n_heads},
      {"num_key_value_heads", c.n_kv_heads},
      {"head_dim", c.head_dim},
      {"vocab_size", c.vocab_size},
      {"max_position_embeddings", c.max_positions},
      {"rms_norm_eps", tidy(c.norm_eps)},
      {"rope_theta", tidy(c.rope_theta)},
      {"tie_word_embeddings", c.tied_embeddings},
      {"hidden_act", c.ffn_activation == FfnActivation::kGeluTanh ? "gelu_pytorch_tanh" : "silu"},
      {"torch_dtype", "float32"},
      {"use_cache", true},
  };
  j["bos_token_id"] = c.bos_id >= 0 ? json(c.bos_id) : json(nullptr);
  j["eos_token_id"] = c.eos_id >= 0 ? json(c.eos_id) : json(nullptr);
  if (!c.qkv_bias || c.arch == Architecture::kGlm) {
    j["attention_bias"] = c.qkv_bias;
    j["mlp_bias"] = false;
  }
  if (c.arch == Architecture::kGranite) {
    j["embedding_multiplier"] = tidy(c.embedding_multiplier);
    j["residual_multiplier"] = tidy(c.residual_multiplier);
    j["attention_multiplier"] = tidy(c.attention_scale());
    j["logits_scaling"] = tidy(c.logits_scaling);
  }
  if (c.arch == Architecture::kSmolLM3) {
    std::vector<int> layers;
    for (int64_t l = 0; l < c.n_layers; ++l) layers.push_back(c.layer_uses_rope(l) ? 1 : 0);
    j["no_rope_layers"] = layers;
    j["use_sliding_window"] = false;
  }
  if (c.rotary_dim > 0 && c.rotary_dim != c.head_dim)
    j["partial_rotary_factor"] = static_cast<double>(c.rotary_dim) / static_cast<double>(c.head_dim);
  if (c.arch == Architecture::kPhi3) j["sliding_window"] = c.sliding_window > 0 ? json(c.sliding_window) : json(nullptr);
  if (c.arch == Architecture::kGemma3 && c.rope_local_theta > 0.0f) j["rope_local_base_freq"] = tidy(c.rope_local_theta);
  if (c.arch == Architecture::kGemma2 || c.arch == Architecture::kGemma3) {
    const double scale = c.attention_scale();
    j["query_pre_attn_scalar"] = std::round(1.0 / (scale * scale) * 1e6) / 1e6;
    j["attn_logit_softcapping"] = c.attn_logit_softcap > 0.0f ? json(tidy(c.attn_logit_softcap)) : json(nullptr);
    j["final_logit_softcapping"] = c.final_logit_softcap > 0.0f ? json(tidy(c.final_logit_softcap)) : json(nullptr);
    j["sliding_window"] = c.sliding_window;
    std::vector<std::string> types;
    for (int64_t l = 0; l < c.n_layers; ++l) types.push_back(c.layer_slides(l) ? "sliding_attention" : "full_attention");
    j["layer_types"] = types;
  }
  if (c.arch == Architecture::kGemma4) write_gemma4_fields(c, j);
  if (c.long_rope.enabled()) {
    auto doubles = [](const std::vector<float>& v) {
      std::vector<double> out;
      for (float f : v) out.push_back(tidy(f));
      return out;
    };
    j["original_max_position_embeddings"] = c.long_rope.original_max_positions;
    j["rope_scaling"] = {{"rope_type", "longrope"},
                         {"short_factor", doubles(c.long_rope.short_factor)},
                         {"long_factor", doubles(c.long_rope.long_factor)},
                         {"attention_factor", tidy(c.long_rope.attention_factor)}};
  } else if (c.rope_scaling.enabled()) {
    j["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", tidy(c.rope_scaling.factor)},
                         {"low_freq_factor", tidy(c.rope_scaling.low_freq_factor)},
                         {"high_freq_factor", tidy(c.rope_scaling.high_freq_factor)},
                         {"original_max_position_embeddings", c.rope_scaling.original_max_positions}};
  } else if (c.arch != Architecture::kGemma4) {  // gemma4: rope_parameters by layer type (transformers 5 reads
    j["rope_scaling"] = nullptr;                   // a null rope_scaling as "no rope parameters")
  }
  if (!c.name.empty()) j["_name_or_path"] = c.name;
  return j.dump(2) + "\n";
}

}  // namespace genai
