#include "model/model_writer.h"

#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "formats/gguf_writer.h"
#include "formats/llama2c_file.h"
#include "formats/safetensors_file.h"
#include "model/hf_config.h"
#include "model/reference_decoder.h"
#include "model/rope_scaling.h"
#include "model/rotary_layout.h"
#include "tokenizer/tokenizer_bin.h"
#include "tokenizer/tokenizer_json.h"

namespace genai {
namespace {

Tensor checked_get(const WeightSource& src, const WeightSpec& spec) {
  Tensor t = src.get(spec).to_f32();
  if (t.shape() != spec.shape)
    throw_input_error("tensor {}: expected shape {}, got {}", spec.name, shape_to_string(spec.shape),
                      shape_to_string(t.shape()));
  return t;
}

uint32_t gguf_file_type(GgmlType t) {
  switch (t) {
    case GgmlType::kF32: return 0;
    case GgmlType::kF16: return 1;
    case GgmlType::kQ4_0: return 2;
    case GgmlType::kQ4_1: return 3;
    case GgmlType::kQ8_0: return 7;
    case GgmlType::kBF16: return 32;
    default: return 0;
  }
}

std::vector<uint8_t> tensor_bytes_as(const Tensor& f32, DType dtype) {
  const int64_t n = f32.numel();
  const float* x = f32.data<float>();
  std::vector<uint8_t> out(static_cast<size_t>(n) * dtype_size(dtype));
  switch (dtype) {
    case DType::kF32: std::memcpy(out.data(), x, out.size()); break;
    case DType::kF16: ggml_quantize(GgmlType::kF16, x, out.data(), n); break;
    case DType::kBF16: ggml_quantize(GgmlType::kBF16, x, out.data(), n); break;
    default: throw_input_error("safetensors weights must be F32, F16 or BF16, not {}", dtype_name(dtype));
  }
  return out;
}

}  // namespace

WeightSource WeightSource::of(const Weights& weights) {
  return {[&weights](const WeightSpec& spec) { return weights.f32(spec.name); }};
}

void write_gguf_model(const std::filesystem::path& path, const ModelConfig& config, const WeightSource& weights,
                      GgmlType weight_type, const GgufVocab& vocab) {
  if (!ggml_can_quantize(weight_type))
    throw_input_error("GGUF weight type {} cannot be written (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1)",
                      ggml_type_name(weight_type));
  config.validate(path.string());
  if (!architecture_info(config.arch).has_gguf())
    throw_input_error("{}: {} has no GGUF form (llama.cpp has no such architecture; valid formats: hf)", path.string(),
                      architecture_name(config.arch));
  GgufWriter w;
  gguf_write_config(w, config);
  w.set("general.file_type", GgufValue::u32(gguf_file_type(weight_type)));
  if (const auto* spm = std::get_if<SpmVocab>(&vocab)) gguf_write_vocab(w, *spm);
  if (const auto* bpe = std::get_if<BpeVocab>(&vocab)) gguf_write_vocab(w, *bpe);
  w.set("general.quantization_version", GgufValue::u32(2));

  if (config.rope_scaling.enabled())
    w.add_tensor_f32("rope_freqs.weight", GgmlType::kF32, {config.head_dim / 2},
                     llama3_rope_freq_factors(config.rope_scaling, config.rope_theta, config.head_dim));
  if (config.arch == Architecture::kGemma4 && config.global_rope_fraction > 0.0f) {
    // llama.cpp's form of the proportional rope: factor 1 where a pair rotates, 1e30 (angle 0) where not.
    const std::vector<float> inv = rope_inv_freq(config);
    std::vector<float> factors;
    for (float f : inv) factors.push_back(f > 0.0f ? 1.0f : 1e30f);
    w.add_tensor_f32("rope_freqs.weight", GgmlType::kF32, {static_cast<int64_t>(factors.size())}, factors);
  }
  if (config.long_rope.enabled()) {
    const int64_t half = config.rotary_dims() / 2;
    w.add_tensor_f32("rope_factors_long.weight", GgmlType::kF32, {half}, config.long_rope.long_factor);
    w.add_tensor_f32("rope_factors_short.weight", GgmlType::kF32, {half}, config.long_rope.short_factor);
  }
  const bool permute = architecture_info(config.arch).gguf_interleaved_qk;
  for (const StoredTensor& stored : stored_tensors(config, StoredNaming::kGguf)) {
    GgmlType type = stored.shape.size() == 1 ? GgmlType::kF32 : weight_type;
    if (stored.shape.back() % ggml_type_info(type).block_size != 0) type = GgmlType::kF16;
    w.add_tensor(stored.name, type, stored.shape, [&weights, &config, stored, type, permute] {
      std::vector<Tensor> parts;
      for (const WeightSpec& spec : stored.parts) {
        Tensor t = checked_get(weights, spec);
        const std::string kind = rotary_projection_kind(spec.name);
        if (permute && !kind.empty())
          t = half_to_interleaved_rows(t, kind == "q" ? config.n_heads : config.n_kv_heads, config.rotary_dims());
        parts.push_back(std::move(t));
      }
      const Tensor t = stack_stored(stored, parts);
      return ggml_encode(type, t.data<float>(), t.numel());
    });
  }
  w.write(path);
}

void write_hf_model(const std::filesystem::path& dir, const ModelConfig& config, const WeightSource& weights,
                    DType dtype, const BpeVocab* vocab, uint64_t max_shard_bytes, const VisionTower* vision,
                    const SpeechTower* speech) {
  config.validate(dir.string());
  std::filesystem::create_directories(dir);
  std::vector<SafetensorsTensorToWrite> tensors;
  // A vision-language folder: config.json wraps the decoder's as text_config, and the decoder's
  // tensors go under the family's names.
  nlohmann::json top;
  const bool wrapped = vision || speech;
  if (wrapped) {
    top = {{"text_config", nlohmann::json::parse(hf_config_json(config))}, {"tie_word_embeddings", config.tied_embeddings}};
    if (vision) add_vision_tower_config(vision->config, top);
    if (speech) add_speech_tower_config(speech->config, top);
  }
  auto stored_name = [&](const std::string& name) { return wrapped ? hf_text_tensor_names(top, name).front() : name; };
  for (const StoredTensor& stored : stored_tensors(config, StoredNaming::kHuggingFace))
    tensors.push_back({stored_name(stored.name), dtype, stored.shape, [&weights, &config, stored, dtype] {
                         std::vector<Tensor> parts;
                         for (const WeightSpec& spec : stored.parts) {
                           Tensor t = checked_get(weights, spec);
                           const std::string kind = rotary_projection_kind(spec.name);
                           if (architecture_info(config.arch).hf_interleaved_qk && !kind.empty())
                             t = half_to_interleaved_rows(t, kind == "q" ? config.n_heads : config.n_kv_heads,
                                                          config.rotary_dims());
                           if (hf_stores_norm_offset(config, spec.name)) {
                             Tensor shifted = Tensor::zeros(DType::kF32, t.shape());
                             for (int64_t i = 0; i < t.numel(); ++i)
                               shifted.mutable_data<float>()[i] = t.data<float>()[i] - 1.0f;
                             t = std::move(shifted);
                           }
                           parts.push_back(std::move(t));
                         }
                         return tensor_bytes_as(stack_stored(stored, parts), dtype);
                       }});
  if (vision) {
    vision->config.validate(dir.string());
    for (auto& t : vision_tower_tensors(vision->config, vision->weights)) tensors.push_back(std::move(t));
  }
  if (speech) {
    speech->config.validate(dir.string());
    for (auto& t : speech_tower_tensors(speech->config, speech->weights)) tensors.push_back(std::move(t));
  }
  write_safetensors_checkpoint(dir, std::move(tensors), max_shard_bytes);
  if (wrapped) {
    write_file_atomic(dir / "config.json", top.dump(2) + "\n");
    const std::filesystem::path processor = vision ? vision->processor_config : speech->processor_config;
    if (!processor.empty() && processor != dir / "preprocessor_config.json")
      write_file_atomic(dir / "preprocessor_config.json", MappedFile::open(processor)->bytes());
  } else {
    write_file_atomic(dir / "config.json", hf_config_json(config));
  }
  if (vocab) {
    write_tokenizer_json(*vocab, dir / "tokenizer.json");
    nlohmann::json tc = {{"add_bos_token", vocab->add_bos},
                         {"model_max_length", config.max_positions},
                         {"tokenizer_class", "GPT2Tokenizer"}};
    auto token = [&](int32_t id) {
      return id >= 0 && id < static_cast<int32_t>(vocab->tokens.size()) ? nlohmann::json(vocab->tokens[id])
                                                                        : nlohmann::json(nullptr);
    };
    tc["bos_token"] = token(vocab->bos_id);
    tc["eos_token"] = token(vocab->eos_id);
    if (!vocab->chat_template.empty()) tc["chat_template"] = vocab->chat_template;
    write_file_atomic(dir / "tokenizer_config.json", tc.dump(2) + "\n");
  }
}

void write_llama2c_model(const std::filesystem::path& path, const ModelConfig& c, const WeightSource& weights,
                         const SpmVocab* vocab) {
  const std::string src = path.string();
  c.validate(src);
  if (c.arch != Architecture::kLlama || c.qkv_bias)
    throw_input_error("{}: llama2.c checkpoints hold only the llama architecture without biases", src);
  if (c.rope_scaling.enabled()) throw_input_error("{}: llama2.c checkpoints cannot express rope scaling", src);
  if (c.rope_theta != 10000.0f)
    throw_input_error("{}: llama2.c fixes rope_theta at 10000, the model has {}", src, c.rope_theta);
  if (c.head_dim * c.n_heads != c.dim)
    throw_input_error("{}: llama2.c needs head_dim = dim / n_heads ({} != {} / {})", src, c.head_dim, c.dim, c.n_heads);
  Llama2cHeader h;
  h.dim = static_cast<int32_t>(c.dim);
  h.hidden_dim = static_cast<int32_t>(c.ffn_dim);
  h.n_layers = static_cast<int32_t>(c.n_layers);
  h.n_heads = static_cast<int32_t>(c.n_heads);
  h.n_kv_heads = static_cast<int32_t>(c.n_kv_heads);
  h.vocab_size = static_cast<int32_t>(c.vocab_size);
  h.seq_len = static_cast<int32_t>(c.max_positions);
  h.shared_classifier = c.tied_embeddings;

  const auto specs = expected_weights(c);
  auto spec_of = [&](const std::string& name) -> const WeightSpec& {
    for (const auto& s : specs)
      if (s.name == name) return s;
    throw_failure("internal: no weight {}", name);
  };
  auto single = [&](const std::string& name) {
    Tensor t = checked_get(weights, spec_of(name));
    return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
  };
  auto stacked = [&](const char* suffix) {
    std::vector<float> out;
    for (int64_t i = 0; i < c.n_layers; ++i) {
      const std::string name = weight_names::layer(i, suffix);
      Tensor t = checked_get(weights, spec_of(name));
      const std::string kind = rotary_projection_kind(name);
      if (!kind.empty()) t = half_to_interleaved_rows(t, kind == "q" ? c.n_heads : c.n_kv_heads);
      out.insert(out.end(), t.data<float>(), t.data<float>() + t.numel());
    }
    return out;
  };
  auto freqs = [&](bool real) {
    const int64_t hs = c.head_dim;
    std::vector<float> out;
    for (int64_t pos = 0; pos < c.max_positions; ++pos)
      for (int64_t i = 0; i < hs / 2; ++i) {
        const float freq = 1.0f / std::pow(10000.0f, static_cast<float>(2 * i) / static_cast<float>(hs));
        const float v = static_cast<float>(pos) * freq;
        out.push_back(real ? std::cos(v) : std::sin(v));
      }
    return out;
  };
  namespace wn = weight_names;
  write_llama2c(path, h, [&](const Llama2cArray& a) -> std::vector<float> {
    if (a.name == "token_embedding_table") return single(wn::embed_tokens());
    if (a.name == "rms_final_weight") return single(wn::final_norm());
    if (a.name == "wcls") return single(wn::lm_head());
    if (a.name == "freq_cis_real") return freqs(true);
    if (a.name == "freq_cis_imag") return freqs(false);
    if (a.name == "rms_att_weight") return stacked("input_layernorm.weight");
    if (a.name == "wq") return stacked("self_attn.q_proj.weight");
    if (a.name == "wk") return stacked("self_attn.k_proj.weight");
    if (a.name == "wv") return stacked("self_attn.v_proj.weight");
    if (a.name == "wo") return stacked("self_attn.o_proj.weight");
    if (a.name == "rms_ffn_weight") return stacked("post_attention_layernorm.weight");
    if (a.name == "w1") return stacked("mlp.gate_proj.weight");
    if (a.name == "w2") return stacked("mlp.down_proj.weight");
    if (a.name == "w3") return stacked("mlp.up_proj.weight");
    throw_failure("internal: unknown llama2.c array {}", a.name);
  });
  if (vocab) {
    if (static_cast<int64_t>(vocab->pieces.size()) != c.vocab_size)
      throw_input_error("{}: tokenizer has {} pieces for a vocabulary of {}", src, vocab->pieces.size(), c.vocab_size);
    write_tokenizer_bin(*vocab, path.parent_path() / "tokenizer.bin");
  }
}

}  // namespace genai
