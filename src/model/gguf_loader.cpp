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

  if (const GgufTensorInfo* rf = file.find_tensor("rope_freqs.weight")) {
    Tensor t = file.tensor_f32(*rf);
    if (t.numel() != c.head_dim / 2)
      throw_input_error("{}: tensor rope_freqs.weight: expected {} values (head_dim / 2), got {}", src,
                        c.head_dim / 2, t.numel());
    std::vector<float> factors(t.data<float>(), t.data<float>() + t.numel());
    const int64_t orig = file.get_int(std::string(architecture_name(c.arch)) + ".rope.scaling.original_context_length")
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
  c.validate(src);

  // llama-arch files store q/k rows in the interleaved rotary order (llama.cpp's converter
  // permutes them); qwen2-arch files keep Hugging Face's order.
  const bool unpermute = architecture_info(c.arch).gguf_interleaved_qk;
  m.weights.set_source(src);
  for (const WeightSpec& spec : expected_weights(c)) {
    const std::string stored = gguf_name_of(spec.name).value();
    const GgufTensorInfo* info = file.find_tensor(stored);
    if (!info) throw_input_error("{}: missing tensor {} ({})", src, stored, spec.name);
    check_weight_shape(src, stored, spec, info->shape());
    Tensor t = file.tensor_f32(*info);
    const std::string kind = rotary_projection_kind(spec.name);
    if (unpermute && !kind.empty()) t = interleaved_to_half_rows(t, kind == "q" ? c.n_heads : c.n_kv_heads);
    m.weights.add(spec.name, std::move(t));
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
