// Options become settings here, once: the one place (with src/options itself, the CLI's parsing
// and the front door's plan and checks, context_from_options.h / stage_plan.h) that reads the
// option set by key. Each stage gets its own typed struct (pipeline/stage_settings.h) in its input
// config and reads fields, never keys; tests/layering/option_keys_test.cpp holds the stages to it.
//
// Where to add an option a stage needs: the table (options/option_table.cpp), a field in that
// stage's settings struct (pipeline/stage_settings.h, with the table's default), its line in
// resolve_stage_settings (stage_settings.cpp), and the strategy reads the field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "options/option_values.h"
#include "pipeline/stage_settings.h"

namespace genai::orchestrator {

struct StageSettings {
  pipeline::PreparationSettings preparation;
  pipeline::QuantizationSettings quantization;
  pipeline::CompilationSettings compilation;
  pipeline::InferenceSettings inference;
};

// Reads the values only (as given, else the table's defaults of the values' scope): it checks no
// rule and throws for none of a valid option set; the stages check what they always checked.
StageSettings resolve_stage_settings(const options::OptionValues& values);

// `genai eval`'s options (the table's eval scope), read once; orchestrator/recipe_evaluation.cpp
// turns them into its stages' settings (EvalQuantizationSettings) and checks them as it always
// has. A text option is "" when absent: eval has always treated an empty value as not given.
struct RecipeEvalOptions {
  std::string checkpoint, tokenizer_model, artifact, report, qdq;
  std::string quant_recipe, quant_recipe_file, embedding_quantize;
  bool use_fp16 = false;
  std::vector<std::string> quant_overrides;  // --quant_override
  int64_t seq_mse_candidates = 0;
  bool gptq = false;
  std::string rotation = "none";
  std::string eval_text;
  std::vector<std::string> eval_methods;
  int64_t max_context_len = 256, gen_tokens = 32, eval_max_tokens = 20480;
  std::string eval_on = "program";
  bool per_layer = false;
  int64_t calib_len = 128, calib_max_windows = 4;
  std::string calib_range = "minmax";
  std::vector<std::string> calib_samples;
  std::vector<std::string> lora_adapters, lora_calib_samples;  // NAME=DIR, NAME=FILE as given
  std::string lora;  // the adapter measured instead of the base
};
RecipeEvalOptions recipe_eval_options(const options::OptionValues& values);
// The option set `genai eval`'s pipeline run starts from (pipeline_run_from_options): the model
// and the recipe's refinements, which its quantization stage reads as on every path.
options::OptionValues recipe_eval_stage_options(const RecipeEvalOptions& eval);

// The parts, for callers that need one (tests, `genai eval`).
pipeline::GraphShapeSettings graph_shape_settings(const options::OptionValues& values);
pipeline::CalibrationSettings calibration_settings(const options::OptionValues& values);
pipeline::EvalRequestSettings eval_request_settings(const options::OptionValues& values);

}  // namespace genai::orchestrator
