#include "orchestrator/recipe_evaluation.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/log.h"
#include "eval/compiled_evaluation.h"
#include "eval/eval_report_html.h"
#include "orchestrator/builtin_strategies.h"
#include "orchestrator/context_from_options.h"
#include "orchestrator/genai_pipeline.h"
#include "orchestrator/quantization_settings.h"
#include "orchestrator/stage_settings.h"
#include "pipeline/engine_proxy.h"
#include "pipeline/stage_names.h"
#include "quant/encoding_set.h"
#include "quant/quantize.h"
#include "target/backend_type.h"

namespace genai::orchestrator {
namespace {

std::string read_evaluation_text(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw_input_error("--eval_text: cannot open {}", path);
  std::string s;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

// What --eval_methods asks for: sqnr_eval and/or prompt_eval (tasks_eval is the pipeline's).
void read_eval_methods(const RecipeEvalOptions& v, EvalOptions& eo) {
  eo.sqnr_eval = eo.prompt_eval = false;
  for (const auto& m : v.eval_methods) {
    if (m == "sqnr_eval") eo.sqnr_eval = true;
    else if (m == "prompt_eval") eo.prompt_eval = true;
    else throw_input_error("--eval_methods: unknown method '{}' (valid: sqnr_eval, prompt_eval)", m);
  }
}

// The recipe the options ask for; -F/--use_fp16 is upstream's spelling of fp16.
std::optional<std::string> requested_recipe(const RecipeEvalOptions& v) {
  std::optional<std::string> recipe;
  if (const std::string& r = v.quant_recipe; !r.empty()) recipe = r;
  if (v.use_fp16) {
    if (recipe && *recipe != "fp16")
      throw_input_error("-F/--use_fp16 selects the fp16 recipe; it contradicts --quant_recipe {}", *recipe);
    recipe = "fp16";
  }
  return recipe;
}

// The quantization eval asks for: the recipe, its calibration, and the graph shape the quantized
// side runs (a compiled program's when --eval_on program).
quant::QuantizeOptions quantize_options(const RecipeEvalOptions& v, const std::optional<std::string>& recipe,
                                        EvalQuantizationSettings& settings) {
  const int64_t max_context_len = v.max_context_len;
  quant::QuantizeOptions qo;
  qo.mode = graph::ModelMode::kKv;
  qo.max_context_len = max_context_len;
  if (v.eval_on == "program") {
    const eval::EvalProgramShape shape = eval::eval_program_shape(max_context_len);
    qo.mode = graph::ModelMode::kHybrid;
    qo.max_context_len = shape.max_context_len;
    qo.prefill_ar_len = shape.prefill_ar_len;
    settings.compiled_eval = true;
  }
  if (recipe) qo.recipe = quant::recipe_from_spelling(*recipe);
  qo.calibration.context_len = std::min(v.calib_len, max_context_len);
  qo.calibration.max_windows = v.calib_max_windows;
  qo.calibration.range_method = quant::range_method_from_name(v.calib_range);
  for (const auto& f : v.calib_samples) qo.calibration.sample_files.emplace_back(f);
  return qo;
}

// --lora NAME measures adapter NAME, which eval quantizes from its --lora_adapter folder.
void check_lora(const RecipeEvalOptions& v) {
  std::vector<std::string> names;
  for (const auto& spec : v.lora_adapters) names.push_back(spec.substr(0, spec.find('=')));
  if (v.lora.empty()) {
    if (!names.empty())
      throw_input_error("--lora_adapter: genai eval measures one model; name the adapter to measure with --lora NAME "
                        "(adapters: {})",
                        fmt::join(names, ", "));
    return;
  }
  if (names.empty())
    throw_input_error("--lora {0}: genai eval quantizes the adapter it measures; give its folder with --lora_adapter {0}=DIR",
                      v.lora);
  if (std::find(names.begin(), names.end(), v.lora) == names.end())
    throw_input_error("--lora {}: no --lora_adapter is named {} (adapters: {})", v.lora, v.lora, fmt::join(names, ", "));
  if (!v.qdq.empty())
    throw_input_error("--lora with --qdq: the file holds the base model's encodings; the adapter's come from quantizing "
                      "it (drop --qdq)");
}

// The report page: the evaluation, the recipe and the techniques applied (eval/eval_report_html.h).
void write_report(const RecipeEvalOptions& v, const RecipeEvaluation& e, const std::string& path) {
  const EvalReport& r = e.report;
  EvalReportPage p;
  p.model = v.checkpoint;
  p.recipe = r.recipe;
  if (const int64_t n = v.seq_mse_candidates; n > 0)
    p.techniques.push_back(fmt::format("weight range search: {} candidates", n));
  if (v.rotation != "none") p.techniques.push_back("rotation: " + v.rotation);
  if (v.gptq) p.techniques.push_back("GPTQ weight rounding");
  if (const std::string& s = v.embedding_quantize; !s.empty()) p.techniques.push_back("embedding table: " + s);
  if (const std::string& s = v.quant_recipe_file; !s.empty()) p.techniques.push_back("recipe file: " + s);
  if (const std::string& s = v.qdq; !s.empty()) p.techniques.push_back("encodings read from " + s);
  p.overrides = r.overrides;
  p.eval_tokens = r.eval_tokens;
  p.eval_text = e.eval_text;
  p.sqnr_db = r.sqnr_db;
  p.perplexity_float = r.perplexity_float;
  p.perplexity_quantized = r.perplexity_quantized;
  p.top1_agreed = r.top1_agreed;
  p.quantize_seconds = e.quantize_seconds;
  p.eval_seconds = r.seconds;
  for (const auto& t : r.per_tensor) p.per_tensor.push_back({t.name, t.sqnr_db});
  for (const auto& x : r.ranges) p.ranges.push_back({x.name, x.lo, x.hi, x.encoding});
  for (const auto& t : r.sensitivity) p.sensitivity.push_back({t.name, t.sqnr_db});
  write_eval_report_html(p, path);
  log::info("wrote {}", path);
}

}  // namespace

RecipeEvaluation evaluate_recipe(const options::OptionValues& values) {
  const RecipeEvalOptions v = recipe_eval_options(values);  // the options' values, read once
  if (v.checkpoint.empty())
    throw_input_error("genai eval needs --checkpoint (GGUF file, Hugging Face folder or llama2.c .bin)");
  const std::optional<std::string> recipe = requested_recipe(v);
  check_lora(v);
  const int64_t max_context_len = v.max_context_len;
  if (max_context_len < 2) throw_input_error("--max_context_len must be >= 2, got {}", max_context_len);
  RecipeEvaluation e;
  EvalOptions eo;
  eo.max_context_len = max_context_len;
  eo.gen_tokens = v.gen_tokens;
  read_eval_methods(v, eo);
  eo.max_tokens = v.eval_max_tokens;
  if (eo.max_tokens < 0) throw_input_error("--eval_max_tokens must be >= 0, got {}", eo.max_tokens);
  e.eval_text = v.eval_text;
  if (e.eval_text.empty()) {
    e.eval_text = default_eval_text_file();
    if (!std::filesystem::exists(e.eval_text))
      throw_input_error("--eval_text: the default evaluation text {} is missing (Debian package {}: "
                        "scripts/install_deps.sh installs it); or pass --eval_text FILE",
                        e.eval_text, default_eval_text_package());
  }
  eo.text = read_evaluation_text(e.eval_text);
  e.sqnr_eval = eo.sqnr_eval;
  e.prompt_eval = eo.prompt_eval;
  e.per_layer = v.per_layer;
  e.lora = v.lora;

  // The pipeline's model_preparation and quantization stages, with eval's own settings.
  auto settings = std::make_shared<EvalQuantizationSettings>();
  settings->eval = eo;
  settings->write_qdq = !v.artifact.empty();
  settings->lora = v.lora;
  if (const std::string& qdq = v.qdq; !qdq.empty()) {
    if (recipe || !v.quant_overrides.empty() || !v.quant_recipe_file.empty())
      throw_input_error("--qdq reads the recipe's encodings from the file; do not pass --quant_recipe/--quant_override/--quant_recipe_file");
    settings->encodings = std::make_shared<const quant::EncodingSet>(quant::load_encodings(qdq));
  } else {
    settings->quantize = quantize_options(v, recipe, *settings);
    settings->per_layer = e.per_layer;
  }
  settings->on_report = [&e](const EvalReport& report, double seconds) {
    e.report = report;
    e.quantize_seconds = seconds;
  };

  SkipPlan skip;
  for (auto stage : {pipeline::kStageCompilation, pipeline::kStageInference}) skip.emplace(std::string(stage), "genai eval");
  const PipelineRun run = pipeline_run_from_options(recipe_eval_stage_options(v), skip);
  StrategyRegistry registry;
  BuiltinStrategyOptions builtin;
  builtin.quantization = settings;
  register_builtin_strategies(registry, builtin);
  GenAIPipeline::from_proxy(pipeline::EngineProxy({}, target::BackendType::kHtpBackend), registry, run.skip).invoke(run.context);

  if (const std::string& report = v.report; !report.empty()) write_report(v, e, report);
  return e;
}

}  // namespace genai::orchestrator
