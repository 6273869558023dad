#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "core/mapped_file.h"
#include "formats/safetensors_file.h"
#include "model/hf_config.h"
#include "model/lora_adapter.h"
#include "model/loaders.h"
#include "model/rotary_layout.h"
#include "model/weight_layout.h"
#include "model/weights.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/factory.h"
#include "tokenizer/tokenizer_json.h"

namespace genai {
namespace {

// tokenizer_config.json's chat_template: a string, or a list of {name, template} (take "default").
std::string read_chat_template(const std::filesystem::path& tokenizer_config) {
  if (!std::filesystem::exists(tokenizer_config)) return "";
  auto map = MappedFile::open(tokenizer_config);
  auto bytes = map->bytes();
  auto j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw_input_error("{}: not a JSON object", tokenizer_config.string());
  auto it = j.find("chat_template");
  if (it == j.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array()) {
    for (const auto& e : *it)
      if (e.is_object() && e.value("name", "") == "default" && e.contains("template") && e["template"].is_string())
        return e["template"].get<std::string>();
  }
  throw_input_error("{}: chat_template must be a string or a list of {{name, template}}", tokenizer_config.string());
}

}  // namespace

Model load_hf_model(const std::filesystem::path& dir, bool with_tokenizer) {
  Model m;
  m.format = CheckpointFormat::kHuggingFace;
  m.checkpoint_path = dir;
  m.config = read_hf_config(dir / "config.json");
  ModelConfig& c = m.config;
  SafetensorsCheckpoint ckpt = SafetensorsCheckpoint::open(dir);
  namespace wn = weight_names;
  const nlohmann::json top = read_hf_config_json(dir / "config.json");
  // A multimodal checkpoint keeps the decoder under its own names (its towers are read below).
  auto locate = [&](const std::string& canonical) {
    const std::vector<std::string> names = hf_text_tensor_names(top, canonical);
    for (const auto& n : names)
      if (auto loc = ckpt.find(n); loc.file) return std::pair{n, loc};
    return std::pair{names.front(), ckpt.find(names.front())};
  };
  // Missing lm_head means the head is tied to the embedding, whatever the config says.
  if (!locate(wn::lm_head()).second.file) c.tied_embeddings = true;

  m.weights.set_source(dir.string());
  for (const StoredTensor& t : stored_tensors(c, StoredNaming::kHuggingFace)) {
    const auto [name, loc] = locate(t.name);
    if (!loc.file) throw_input_error("{}: missing tensor {}", dir.string(), name);
    check_weight_shape(loc.file->source(), name, {t.name, t.shape}, loc.entry->shape);
    // F16 / BF16 stay as stored (views of the map, model/weights.h); rows that move are copied.
    std::vector<Tensor> parts = split_stored(t, loc.file->tensor_float(*loc.entry));
    bool viewed = false;
    for (size_t i = 0; i < parts.size(); ++i) {
      // GLM's checkpoints rotate interleaved pairs: rows to rotate-half order, as every graph uses.
      const std::string kind = rotary_projection_kind(t.parts[i].name);
      if (architecture_info(c.arch).hf_interleaved_qk && !kind.empty())
        parts[i] = interleaved_to_half_rows(parts[i], kind == "q" ? c.n_heads : c.n_kv_heads, c.rotary_dims());
      if (hf_stores_norm_offset(c, t.parts[i].name)) {  // (1 + w) in float32, as transformers computes it
        const Tensor w = parts[i].to_f32();
        Tensor shifted = Tensor::zeros(DType::kF32, w.shape());
        for (int64_t k = 0; k < shifted.numel(); ++k) shifted.mutable_data<float>()[k] = 1.0f + w.data<float>()[k];
        parts[i] = std::move(shifted);
      }
      const bool view = parts[i].is_view();
      viewed = viewed || view;
      m.weights.add(t.parts[i].name, std::move(parts[i]), view ? loc.file->map() : nullptr);
    }
    if (!viewed && loc.file->map()) loc.file->map()->release(loc.file->tensor_bytes(*loc.entry));
  }

  if (is_speech_config(top)) {
    m.speech = std::make_shared<const SpeechTower>(load_speech_tower(dir, top, ckpt));
    // Granite Speech's head is its own (GraniteSpeechForConditionalGeneration.lm_head): the text
    // model's logits_scaling, which GraniteForCausalLM divides by, is not applied.
    c.logits_scaling = 1.0f;
    // Its text model's audio adapter, which transformers enables whenever audio is given: the
    // compiled decoder serves audio prompts, so the adapter is merged (text-only prompts too run
    // with it, where transformers would switch it off).
    if (m.speech->config.lora_adapter) {
      for (const char* file : {"adapter_config.json", "adapter_model.safetensors"})
        if (!std::filesystem::exists(dir / file))
          throw_input_error("{}: missing (config.json has has_lora_adapter = true: the adapter's {})",
                            (dir / file).string(), std::string_view(file) == "adapter_config.json" ? "settings" : "tensors");
      const int64_t merged = merge_lora_adapter(dir, c, m.weights);
      log::info("{}: LoRA adapter merged into {} decoder weights", dir.string(), merged);
    }
  }
  if (is_vision_language_config(top))
    m.vision = std::make_shared<const VisionTower>(load_vision_tower(dir, top, ckpt));

  if (with_tokenizer) {
    const auto tj = dir / "tokenizer.json", tm = dir / "tokenizer.model";
    if (c.arch == Architecture::kGemma && std::filesystem::exists(tm)) {
      // Gemma's tokenizer.json is SentencePiece's BPE re-expressed (metaspace, byte fallback);
      // the tokenizer.model it ships beside it is the original, which libsentencepiece runs.
      m.tokenizer = load_tokenizer_file(tm);
      m.tokenizer_path = tm;
    } else if (std::filesystem::exists(tj)) {
      m.tokenizer = load_tokenizer_json(tj);
      m.tokenizer_path = tj;
    } else {
      log::warn("{}: no tokenizer.json (pass --tokenizer_model)", dir.string());
    }
  }
  const std::string chat = read_chat_template(dir / "tokenizer_config.json");
  if (!chat.empty()) m.chat_format = detect_chat_format(chat);
  return m;
}

}  // namespace genai
