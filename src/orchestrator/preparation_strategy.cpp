// model_preparation: the checkpoint (--checkpoint, or the model name when it is a path), its
// tokenizer (--tokenizer_model / --tokenizer_bin override), the --decoder_model lookup, the chat
// template, and the calibration text when quantization follows.
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"
#include "model/lora_adapter.h"
#include "model/model.h"
#include "model/residual_rotation.h"
#include "orchestrator/builtin_strategies.h"
#include "orchestrator/model_lookup.h"
#include "orchestrator/option_readers.h"
#include "orchestrator/quantization_settings.h"
#include "quant/calibration.h"

namespace genai::orchestrator {
namespace {

using namespace genai::pipeline;

class ModelPreparation final : public ModelPreparationStrategy {
 public:
  explicit ModelPreparation(std::shared_ptr<const EvalQuantizationSettings> settings) : settings_(std::move(settings)) {}

  ModelPreparationOutputConfig invoke(const PipelineContext&, const ModelPreparationInputConfig& in,
                                      StageNotes& notes) override {
    const PreparationSettings& o = in.settings;
    const std::string name = o.decoder_model.value_or("");
    std::string checkpoint = o.checkpoint.value_or("");
    if (checkpoint.empty()) {
      if (in.model_name.empty() || in.model_name == name || find_decoder_model(in.model_name))
        throw_input_error("--decoder_model {} needs --checkpoint (a GGUF file, Hugging Face folder or llama2.c .bin): "
                          "models are never downloaded",
                          name.empty() ? in.model_name : name);
      checkpoint = in.model_name;
    }
    LoadOptions load;
    load.tokenizer_path = o.tokenizer_file.value_or("");  // validate() allows one
    log::info("loading {}", checkpoint);
    auto model = std::make_shared<Model>(load_model(checkpoint, load));
    if (!model->tokenizer)
      throw_input_error("{}: no tokenizer in the checkpoint; pass --tokenizer_model or --tokenizer_bin", checkpoint);
    const ResolvedModel rm =
        resolve_model(name, model->config, checkpoint, model->chat_format, model->tokenizer->kind());
    model->chat_format = rm.chat_format;
    if (o.rotation == "hadamard") {
      rotate_residual_stream(*model);
      notes["rotation"] = "hadamard";
    }
    if (!o.lora_adapters.empty()) read_adapters(o, *model, notes);
    // -E quantizes the token table on its own: a tied head keeps the recipe's scheme.
    if (o.embedding_quantize) untie_output_head(*model);

    ModelPreparationOutputConfig out;
    out.model = model;
    out.tokenizer = model->tokenizer;
    if (!model->tokenizer_path.empty()) out.runtime_tokenizer_path = model->tokenizer_path;
    out.chat_template = std::string(chat_format_name(rm.chat_format));
    // `genai eval --qdq` gives the encodings: there is nothing to calibrate.
    if (in.need_calibration_data && !(settings_ && settings_->encodings)) {
      const quant::CalibrationOptions co =
          settings_ && settings_->quantize ? settings_->quantize->calibration : calibration_options(o.calibration);
      out.calibration_data = quant::calibration_windows(*model, co);
      if (!o.lora_calib_samples.empty()) calibrate_adapters_on_their_text(o, co, *model, notes);
      notes["calibration_windows"] = out.calibration_data->size();
      notes["calibration_tokens"] = co.context_len;
      notes["calibration_source"] = co.sample_files.empty() ? "built-in text" : "--calib_samples";
    }

    const ModelConfig& c = model->config;
    notes["checkpoint"] = checkpoint;
    notes["format"] = checkpoint_format_name(model->format);
    notes["architecture"] = architecture_name(c.arch);
    notes["decoder_model"] = rm.spec ? nlohmann::json(std::string(rm.spec->name)) : nlohmann::json(nullptr);
    notes["decoder_model_from"] = rm.named ? "--decoder_model" : rm.spec ? "checkpoint shape" : "none";
    notes["chat_format"] = *out.chat_template;
    notes["tokenizer"] = model->tokenizer->kind();
    notes["shape"] = {{"dim", c.dim},           {"layers", c.n_layers},     {"heads", c.n_heads},
                      {"kv_heads", c.n_kv_heads}, {"ffn_dim", c.ffn_dim}, {"vocab", c.vocab_size}};
    notes["summary"] = fmt::format("{} {} ({}{}), {} layers, dim {}, chat {}", checkpoint_format_name(model->format),
                                   architecture_name(c.arch), rm.spec ? std::string(rm.spec->name) : c.name,
                                   rm.spec && !rm.named ? ", identified" : "", c.n_layers, c.dim, *out.chat_template);
    return out;
  }

 private:
  // --lora_adapter NAME=DIR: each adapter read for this decoder (its errors name the file).
  static void read_adapters(const PreparationSettings& o, Model& model, StageNotes& notes) {
    if (o.rotation != "none")
      throw_input_error("--lora_adapter with --rotation {}: the rotation is merged into the weights, which the adapter's "
                        "factors were not trained on (use --rotation none)",
                        o.rotation);
    notes["lora_adapters"] = nlohmann::json::array();
    for (const std::string& spec : o.lora_adapters) {
      const auto eq = spec.find('=');
      const std::string name = spec.substr(0, eq), dir = eq == std::string::npos ? "" : spec.substr(eq + 1);
      check_lora_adapter_name(name, "--lora_adapter");
      if (dir.empty()) throw_input_error("--lora_adapter '{}': expected NAME=DIR (a PEFT adapter folder)", spec);
      for (const auto& a : model.lora_adapters)
        if (a->name == name) throw_input_error("--lora_adapter: the name {} is given twice", name);
      auto adapter = std::make_shared<const LoraAdapter>(read_lora_adapter(name, dir, model.config, model.weights));
      notes["lora_adapters"].push_back({{"name", name},
                                        {"dir", dir},
                                        {"rank", adapter->config.rank},
                                        {"target_modules", adapter->config.target_modules},
                                        {"layers", adapter->layers.size()}});
      model.lora_adapters.push_back(std::move(adapter));
    }
  }

  // --lora_calib_samples NAME=FILE: the adapter's windows of its own text, cut as the base's are.
  static void calibrate_adapters_on_their_text(const PreparationSettings& o, const quant::CalibrationOptions& base,
                                               Model& model, StageNotes& notes) {
    for (const std::string& spec : o.lora_calib_samples) {
      const auto eq = spec.find('=');
      const std::string name = spec.substr(0, eq), file = eq == std::string::npos ? "" : spec.substr(eq + 1);
      auto it = std::find_if(model.lora_adapters.begin(), model.lora_adapters.end(),
                             [&](const auto& a) { return a->name == name; });
      if (it == model.lora_adapters.end())
        throw_input_error("--lora_calib_samples {}: no --lora_adapter is named {}", spec, name);
      if (!(*it)->calibration_windows.empty()) throw_input_error("--lora_calib_samples: adapter {} is given twice", name);
      quant::CalibrationOptions co = base;
      co.sample_files = {file};
      auto adapter = std::make_shared<LoraAdapter>(**it);
      adapter->calibration_windows = quant::calibration_windows(model, co);
      for (auto& a : notes["lora_adapters"])
        if (a["name"] == name) a["calibration_windows"] = adapter->calibration_windows.size();
      *it = std::move(adapter);
    }
  }

  std::shared_ptr<const EvalQuantizationSettings> settings_;
};

}  // namespace

std::unique_ptr<ModelPreparationStrategy> make_model_preparation_strategy(std::shared_ptr<const EvalQuantizationSettings> settings) {
  return std::make_unique<ModelPreparation>(std::move(settings));
}

}  // namespace genai::orchestrator
