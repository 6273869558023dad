// Typed input/output of each stage (upstream's eight config dataclasses, with native types):
// prepare -> Model + tokenizer + calibration text; quantize -> {graph_name: GraphBundle};
// compile -> {artifact_key: path}; run -> texts + metrics. An output left default-constructed
// means "the stage did not run" (ran() == false). Each input config carries its stage's typed
// settings (stage_settings.h), never the option set: no stage reads an option by key.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "options/quant_recipe_option.h"
#include "pipeline/artifact_keys.h"
#include "pipeline/graph_bundle.h"
#include "pipeline/stage_settings.h"
#include "pte/compile_spec.h"
#include "target/backend_type.h"
#include "target/soc.h"

namespace genai {
struct Model;
class Tokenizer;
}  // namespace genai

namespace genai::pipeline {

// Calibration text as token-id sequences (one forward of the calibration graph each).
using CalibrationData = std::vector<std::vector<int32_t>>;

struct ModelPreparationInputConfig {
  std::string model_name;  // checkpoint path or model name
  std::string soc_model;
  PreparationSettings settings;  // what the stage reads of the options
  // False when no quantization follows (skipped, fp16, GPU): calibration text is not prepared.
  bool need_calibration_data = true;
};

struct ModelPreparationOutputConfig {
  std::shared_ptr<const Model> model;
  std::shared_ptr<const Tokenizer> tokenizer;
  std::optional<CalibrationData> calibration_data;
  std::optional<std::filesystem::path> runtime_tokenizer_path;  // a file, not a folder
  std::optional<std::string> chat_template;
  bool ran() const {
    return model || tokenizer || calibration_data || runtime_tokenizer_path || chat_template;
  }
};

struct QuantizationInputConfig {
  target::Chipset soc_model = target::Chipset::UNKNOWN_SM;
  target::BackendType backend_type = target::BackendType::kHtpBackend;
  std::shared_ptr<const Model> model;
  std::optional<CalibrationData> calibration_data;
  std::optional<options::QuantRecipeChoice> quant_recipe;  // nullopt = the model's own recipe
  QuantizationSettings settings;  // what the stage reads of the options
  // The compilation stage will write a text decoder program of our lowering, which runs on this
  // CPU: the check's quantized side waits for it (QuantizationStrategy::check_program) instead of
  // lowering and writing a private copy of the same program.
  bool check_on_program = false;
  // The stage needs a model and calibration data: ConfigValidationError listing what is missing.
  void check_ready() const;
};

struct QuantizationOutputConfig {
  GraphBundles bundles;
  bool ran() const { return !bundles.empty(); }
};

struct CompilationInputConfig {
  target::Chipset soc_model = target::Chipset::UNKNOWN_SM;
  target::BackendType backend_type = target::BackendType::kHtpBackend;
  GraphBundles graphs;
  std::filesystem::path artifact_dir = ".";
  std::optional<std::vector<CompileSpec>> compile_specs;
  // The float model, compiled through its float graphs when `graphs` is empty because
  // quantization was skipped (fp16 and GPU flows), as upstream falls back to the prepared module.
  std::shared_ptr<const Model> model;
  // Recorded in the artifact dir's manifest (tokenizer copied next to the programs).
  std::optional<std::filesystem::path> tokenizer_path;
  std::optional<std::filesystem::path> checkpoint_path;
  CompilationSettings settings;  // what the stage reads of the options
  // Needs at least one graph; given compile specs must target this SoC and backend (read back
  // with target::options_from_specs). ConfigValidationError otherwise.
  void check_ready() const;
};

struct CompilationOutputConfig {
  ArtifactMap artifact_paths;  // {artifact_key: path}; absent artifacts omitted
  bool ran() const { return !artifact_paths.empty(); }
};

struct InferenceInputConfig {
  target::Chipset soc_model = target::Chipset::UNKNOWN_SM;
  ArtifactMap artifact_paths;
  std::shared_ptr<const Tokenizer> tokenizer;
  std::optional<std::filesystem::path> runtime_tokenizer_path;
  // The prepared float model, run directly when there are no programs (`genai run --checkpoint`).
  std::shared_ptr<const Model> model;
  std::vector<std::string> prompt;
  // What the stage reads of the options. With settings.interactive (--chat) further prompts come
  // from the strategy's prompt source as the run goes: `prompt` may be empty.
  InferenceSettings settings;
  // Chat format name of the model ("chatml", "llama3", "llama2", "none"); nullopt: from the
  // tokenizer's template or the --decoder_model entry.
  std::optional<std::string> chat_template;
  // This run's quantized graphs (empty when quantization did not run): the QDQ reference of
  // --eval_methods tasks_eval / sqnr_eval.
  GraphBundles quantized_graphs;
  // Needs the text decoder artifact (or the prepared model) and a prompt: ConfigValidationError
  // otherwise.
  void check_ready() const;
};

struct InferenceOutputConfig {
  std::vector<std::string> inference_results;
  std::vector<int32_t> tokens;  // generated ids of all turns
  std::map<std::string, double> performance_metrics;  // e.g. ttft_ms, decode_tok_per_s
  std::map<std::string, double> eval_results;         // e.g. sqnr_db, perplexity
  bool ran() const { return !inference_results.empty() || !performance_metrics.empty() || !eval_results.empty(); }
};

}  // namespace genai::pipeline
