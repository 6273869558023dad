#include "model/model.h"

#include "core/error.h"
#include "core/log.h"
#include "formats/gguf_file.h"
#include "model/loaders.h"
#include "tokenizer/factory.h"

namespace genai {

std::string_view checkpoint_format_name(CheckpointFormat f) {
  switch (f) {
    case CheckpointFormat::kGguf: return "gguf";
    case CheckpointFormat::kHuggingFace: return "hf";
    case CheckpointFormat::kLlama2c: return "llama2c";
  }
  return "unknown";
}

namespace {

Model load_by_format(const std::filesystem::path& path, bool with_tokenizer) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) throw_input_error("{}: no such file or directory", path.string());
  if (fs::is_directory(path, ec)) {
    if (!fs::exists(path / "config.json"))
      throw_input_error("{}: directory has no config.json (expected a Hugging Face model folder)", path.string());
    return load_hf_model(path, with_tokenizer);
  }
  if (is_gguf_file(path)) return load_gguf_model(path, with_tokenizer);
  const std::string name = path.filename().string();
  if (name == "config.json" || path.extension() == ".safetensors" || name == "model.safetensors.index.json")
    return load_hf_model(path.parent_path().empty() ? fs::path(".") : path.parent_path(), with_tokenizer);
  if (path.extension() == ".bin") return load_llama2c_model(path, with_tokenizer);
  try {
    return load_llama2c_model(path, with_tokenizer);
  } catch (const InputError& e) {
    throw_input_error("{}: not a GGUF file, Hugging Face folder or llama2.c checkpoint ({})", path.string(), e.what());
  }
}

}  // namespace

Model load_model(const std::filesystem::path& checkpoint, const LoadOptions& options) {
  const bool override_tokenizer = options.load_tokenizer && !options.tokenizer_path.empty();
  Model m = load_by_format(checkpoint, options.load_tokenizer && !override_tokenizer);
  if (override_tokenizer) {
    m.tokenizer = load_tokenizer_file(options.tokenizer_path);
    m.tokenizer_path = options.tokenizer_path;
  }
  if (m.tokenizer && m.tokenizer->vocab_size() > m.config.vocab_size)
    throw_input_error("{}: tokenizer has {} tokens but the model's vocabulary is {}", m.tokenizer_path.string(),
                      m.tokenizer->vocab_size(), m.config.vocab_size);
  log::debug("{}: loaded {} {} model: dim {}, {} layers, {} heads ({} kv), ffn {}, vocab {}", checkpoint.string(),
             checkpoint_format_name(m.format), architecture_name(m.config.arch), m.config.dim, m.config.n_layers,
             m.config.n_heads, m.config.n_kv_heads, m.config.ffn_dim, m.config.vocab_size);
  return m;
}

void untie_output_head(Model& model) {
  if (!model.config.tied_embeddings) return;
  model.weights.add(weight_names::lm_head(), model.weights.get(weight_names::embed_tokens()).f32_copy());
  model.config.tied_embeddings = false;
}

std::shared_ptr<const Model> model_with_adapter(const Model& base, const LoraAdapter& adapter) {
  auto adapted = std::make_shared<Model>(base);
  adapted->weights = *weights_with_adapter(base.weights, adapter);
  adapted->lora_adapters.clear();
  return adapted;
}

}  // namespace genai
