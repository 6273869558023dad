#include "core/error.h"
#include "core/log.h"
#include "formats/gguf_file.h"
#include "model/gguf_metadata.h"
#include "model/loaders.h"
#include "model/rope_scaling.h"
#include "model/rotary_layout.h"
#include "model/weight_layout.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/factory.h"

namespace genai {

Model load_gguf_model(const std::filesystem::path& path, bool with_tokenizer) {
  GgufFile file = GgufFile::open(path);
  const std::string& src = file.source();
  Model m;
  m.format = CheckpointFormat::kGguf;
  m.checkpoint_path = path;
  m.config = gguf_read_config(file);
  ModelConfig& c = m.config;
  c.tied_embeddings = file.find_tensor("output.weight") == nullptr;

  const GgufTensorInfo* rf = file.find_tensor("rope_freqs.weight");
  if (rf && c.arch == Architecture::kGemma4) {
    // The global layers' proportional rope: factor 1 on the pairs that rotate, 1e30 (angle 0) on
    // the rest, over the global head's half.
    Tensor t = file.tensor_f32(*rf);
    const int64_t half = c.global_rotary_dims() / 2;
    if (t.numel() != half)
      throw_input_error("{}: tensor rope_freqs.weight: expected {} values (the global head size / 2), got {}", src, half,
                        t.numel());
    int64_t angles = 0;
    while (angles < half && t.data<float>()[angles] == 1.0f) ++angles;
    for (int64_t i = angles; i < half; ++i)
      if (!(t.data<float>()[i] >= 1e29f))
        throw_input_error("{}: tensor rope_freqs.weight: value {} at {} is neither 1 (rotates) nor >= 1e29 (does not)",
                          src, t.data<float>()[i], i);
    c.global_rope_fraction = angles == half ? 0.0f : static_cast<float>(static_cast<double>(angles) / static_cast<double>(half));
  } else if (rf) {
    Tensor t = file.tensor_f32(*rf);
    if (t.numel() != c.head_dim / 2)
      throw_input_error("{}: tensor rope_freqs.weight: expected {} values (head_dim / 2), got {}", src,
                        c.head_dim / 2, t.numel());
    std::vector<float> factors(t.data<float>(), t.data<float>() + t.numel());
    const int64_t orig = file.get_int(std::string(architecture_info(c.arch).gguf_name) + ".rope.scaling.original_context_length")
                             .value_or(8192);
    bool all_one = true;
    for (float f : factors) all_one = all_one && f == 1.0f;
    if (!all_one) {
      auto fit = fit_llama3_rope_scaling(factors, c.rope_theta, c.head_dim, orig);
      if (!fit)
        throw_input_error("{}: tensor rope_freqs.weight does not describe llama3 rope scaling (the only supported kind)",
                          src);
      c.rope_scaling = *fit;
    }
  }
  // Phi-3's longrope: llama.cpp keeps the factors as tensors.
  const GgufTensorInfo* short_f = file.find_tensor("rope_factors_short.weight");
  const GgufTensorInfo* long_f = file.find_tensor("rope_factors_long.weight");
  if (short_f || long_f) {
    if (!short_f || !long_f)
      throw_input_error("{}: tensors rope_factors_short.weight and rope_factors_long.weight come as a pair", src);
    auto values = [&](const GgufTensorInfo* info) {
      Tensor t = file.tensor_f32(*info);
      return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
    };
    c.long_rope.short_factor = values(short_f);
    c.long_rope.long_factor = values(long_f);
  }
  c.validate(src);

  // llama-arch files store q/k rows in the interleaved rotary order (llama.cpp's converter
  // permutes them); qwen2-arch files keep Hugging Face's order.
  const bool unpermute = architecture_info(c.arch).gguf_interleaved_qk;
  m.weights.set_source(src);
  for (const StoredTensor& stored : stored_tensors(c, StoredNaming::kGguf)) {
    const GgufTensorInfo* info = file.find_tensor(stored.name);
    const std::string canonical = stored.parts.size() == 1 ? stored.parts[0].name : stored.name;
    if (!info) throw_input_error("{}: missing tensor {} ({})", src, stored.name, canonical);
    check_weight_shape(src, stored.name, {canonical, stored.shape}, info->shape());
    // F16 / BF16 stay as stored (views of the map, model/weights.h); rows that move are copied.
    std::vector<Tensor> parts = split_stored(stored, file.tensor_float(*info));
    bool viewed = false;
    for (size_t i = 0; i < parts.size(); ++i) {
      const std::string& name = stored.parts[i].name;
      const std::string kind = rotary_projection_kind(name);
      if (unpermute && !kind.empty())
        parts[i] = interleaved_to_half_rows(parts[i], kind == "q" ? c.n_heads : c.n_kv_heads, c.rotary_dims());
      const bool view = parts[i].is_view();
      viewed = viewed || view;
      m.weights.add(name, std::move(parts[i]), view ? file.map() : nullptr);
    }
    if (!viewed && file.map()) file.map()->release(file.tensor_bytes(*info));  // copied: the file's pages are not needed
  }

  if (with_tokenizer) {
    GgufVocab vocab = gguf_read_vocab(file);
    if (auto* spm = std::get_if<SpmVocab>(&vocab)) {
      m.tokenizer = make_spm_tokenizer(std::move(*spm));
    } else if (auto* bpe = std::get_if<BpeVocab>(&vocab)) {
      m.tokenizer = make_bpe_tokenizer(std::move(*bpe));
    } else {
      log::warn("{}: no tokenizer in the GGUF metadata (pass --tokenizer_model)", src);
    }
    if (m.tokenizer) m.tokenizer_path = path;
  }
  if (auto chat = file.get_string("tokenizer.chat_template"); chat && !chat->empty())
    m.chat_format = detect_chat_format(*chat);
  return m;
}

}  // namespace genai
