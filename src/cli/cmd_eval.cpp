// `genai eval`: how much accuracy a quantization recipe costs. The pipeline's model_preparation and
// quantization stages (compilation and inference skipped) with eval's own settings
// (orchestrator/quantization_settings.h): quantizes the checkpoint (or reads a decode_qdq.json
// written by the quantization stage) and compares the QDQ decode graph with the float decode
// graph over a text: logits SQNR, per-tensor SQNR (worst first), perplexity, and greedy agreement.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/error.h"
#include "core/json_number.h"
#include "core/log.h"
#include "core/thread_pool.h"
#include "eval/compiled_evaluation.h"
#include "eval/eval_report_html.h"
#include "eval/quant_evaluation.h"
#include "options/option_values.h"
#include "orchestrator/builtin_strategies.h"
#include "orchestrator/context_from_options.h"
#include "orchestrator/genai_pipeline.h"
#include "orchestrator/quantization_settings.h"
#include "pipeline/engine_proxy.h"
#include "pipeline/stage_names.h"
#include "target/backend_type.h"

namespace genai::cli {
namespace {

struct EvalArgs {
  std::string checkpoint, tokenizer_model, calib_range = "minmax", quant_recipe, eval_text, qdq, artifact,
      eval_on = "program", recipe_file, rotation = "none", report, embedding_quantize;
  bool per_layer = false, gptq = false;
  std::vector<std::string> overrides, calib_samples, eval_methods;
  int64_t max_context_len = 256, eval_max_tokens = 20480, seq_mse_candidates = 0, calib_len = 128, calib_max_windows = 2, gen_tokens = 32, table_rows = 15;
  int threads = 0;
  bool json = false;
  bool use_fp16 = false;  // -F/--use_fp16: upstream's spelling of the fp16 recipe
};

std::string read_text(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw_input_error("--eval_text: cannot open {}", path);
  std::string s;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

// The report page: the evaluation, the recipe and the techniques applied (eval/eval_report_html.h).
void write_report(const EvalArgs& a, const EvalReport& r, double quantize_seconds) {
  EvalReportPage p;
  p.model = a.checkpoint;
  p.recipe = r.recipe;
  if (a.seq_mse_candidates > 0) p.techniques.push_back(fmt::format("weight range search: {} candidates", a.seq_mse_candidates));
  if (a.rotation != "none") p.techniques.push_back("rotation: " + a.rotation);
  if (a.gptq) p.techniques.push_back("GPTQ weight rounding");
  if (!a.embedding_quantize.empty()) p.techniques.push_back("embedding table: " + a.embedding_quantize);
  if (!a.recipe_file.empty()) p.techniques.push_back("recipe file: " + a.recipe_file);
  if (!a.qdq.empty()) p.techniques.push_back("encodings read from " + a.qdq);
  p.overrides = r.overrides;
  p.eval_tokens = r.eval_tokens;
  p.eval_text = a.eval_text;
  p.sqnr_db = r.sqnr_db;
  p.perplexity_float = r.perplexity_float;
  p.perplexity_quantized = r.perplexity_quantized;
  p.top1_agreed = r.top1_agreed;
  p.quantize_seconds = quantize_seconds;
  p.eval_seconds = r.seconds;
  for (const auto& t : r.per_tensor) p.per_tensor.push_back({t.name, t.sqnr_db});
  for (const auto& x : r.ranges) p.ranges.push_back({x.name, x.lo, x.hi, x.encoding});
  for (const auto& t : r.sensitivity) p.sensitivity.push_back({t.name, t.sqnr_db});
  write_eval_report_html(p, a.report);
  log::info("wrote {}", a.report);
}

int run(EvalArgs a) {
  if (a.use_fp16) {
    if (!a.quant_recipe.empty() && a.quant_recipe != "fp16")
      throw_input_error("-F/--use_fp16 selects the fp16 recipe; it contradicts --quant_recipe {}", a.quant_recipe);
    a.quant_recipe = "fp16";
  }
  if (a.threads > 0) ThreadPool::set_global_threads(a.threads);
  if (a.max_context_len < 2) throw_input_error("--max_context_len must be >= 2, got {}", a.max_context_len);
  EvalOptions eo;
  eo.max_context_len = a.max_context_len;
  eo.gen_tokens = a.gen_tokens;
  if (!a.eval_methods.empty()) {
    eo.sqnr_eval = eo.prompt_eval = false;
    for (const auto& m : a.eval_methods) {
      if (m == "sqnr_eval") eo.sqnr_eval = true;
      else if (m == "prompt_eval") eo.prompt_eval = true;
      else throw_input_error("--eval_methods: unknown method '{}' (valid: sqnr_eval, prompt_eval)", m);
    }
  }
  if (a.eval_max_tokens < 0) throw_input_error("--eval_max_tokens must be >= 0, got {}", a.eval_max_tokens);
  eo.max_tokens = a.eval_max_tokens;
  if (a.eval_text.empty()) {
    a.eval_text = default_eval_text_file();
    if (!std::filesystem::exists(a.eval_text))
      throw_input_error("--eval_text: the default evaluation text {} is missing (Debian package {}: "
                        "scripts/install_deps.sh installs it); or pass --eval_text FILE",
                        a.eval_text, default_eval_text_package());
  }
  eo.text = read_text(a.eval_text);

  // The pipeline's model_preparation and quantization stages, with eval's own settings.
  auto settings = std::make_shared<orchestrator::QuantizationSettings>();
  settings->eval = eo;
  settings->write_qdq = !a.artifact.empty();
  if (!a.qdq.empty()) {
    if (!a.quant_recipe.empty() || !a.overrides.empty() || !a.recipe_file.empty())
      throw_input_error("--qdq reads the recipe's encodings from the file; do not pass --quant_recipe/--quant_override/--quant_recipe_file");
    settings->encodings = std::make_shared<const quant::EncodingSet>(quant::load_encodings(a.qdq));
  } else {
    quant::QuantizeOptions qo;
    qo.mode = graph::ModelMode::kKv;
    qo.max_context_len = a.max_context_len;
    if (a.eval_on == "program") {
      const eval::EvalProgramShape shape = eval::eval_program_shape(a.max_context_len);
      qo.mode = graph::ModelMode::kHybrid;
      qo.max_context_len = shape.max_context_len;
      qo.prefill_ar_len = shape.prefill_ar_len;
      settings->compiled_eval = true;
    } else if (a.eval_on != "qdq") {
      throw_input_error("--eval_on: unknown '{}' (valid: program, qdq)", a.eval_on);
    }
    if (!a.quant_recipe.empty()) qo.recipe = quant::recipe_from_spelling(a.quant_recipe);
    qo.calibration.context_len = std::min(a.calib_len, a.max_context_len);
    qo.calibration.max_windows = a.calib_max_windows;
    qo.calibration.range_method = quant::range_method_from_name(a.calib_range);
    for (const auto& f : a.calib_samples) qo.calibration.sample_files.emplace_back(f);
    settings->per_layer = a.per_layer;
    settings->quantize = qo;
  }
  EvalReport r;
  double quantize_seconds = 0.0;
  settings->on_report = [&](const EvalReport& report, double seconds) {
    r = report;
    quantize_seconds = seconds;
  };

  options::OptionValues values;
  values.set("checkpoint", a.checkpoint);
  if (!a.tokenizer_model.empty()) values.set("tokenizer_model", a.tokenizer_model);
  if (!a.artifact.empty()) values.set("artifact", a.artifact);
  values.set("rotation", a.rotation);
  // The recipe's refinements, read by the quantization stage as on every path.
  if (!a.overrides.empty()) values.set("quant_override", a.overrides);
  if (!a.recipe_file.empty()) values.set("quant_recipe_file", a.recipe_file);
  values.set("seq_mse_candidates", a.seq_mse_candidates);
  values.set("gptq", a.gptq);
  if (!a.embedding_quantize.empty()) values.set("embedding_quantize", a.embedding_quantize);
  orchestrator::SkipPlan skip;
  for (auto stage : {pipeline::kStageCompilation, pipeline::kStageInference}) skip.emplace(std::string(stage), "genai eval");
  const orchestrator::PipelineRun run = orchestrator::pipeline_run_from_options(values, skip);
  orchestrator::StrategyRegistry registry;
  orchestrator::BuiltinStrategyOptions builtin;
  builtin.quantization = settings;
  orchestrator::register_builtin_strategies(registry, builtin);
  orchestrator::GenAIPipeline::from_proxy(pipeline::EngineProxy({}, target::BackendType::kHtpBackend), registry, run.skip).invoke(run.context);

  if (!a.report.empty()) write_report(a, r, quantize_seconds);
  if (a.json) {
    nlohmann::json j;
    j["recipe"] = r.recipe;
    j["eval_tokens"] = r.eval_tokens;
    j["eval_windows"] = r.eval_windows;
    j["eval_text"] = a.eval_text;
    if (eo.sqnr_eval) {
      j["sqnr_db"] = finite_json_number(r.sqnr_db);
      nlohmann::json layers = nlohmann::json::array();
      for (const auto& t : r.per_layer) layers.push_back({{"name", t.name}, {"sqnr_db", finite_json_number(t.sqnr_db)}});
      j["per_layer"] = layers;
      j["perplexity"] = {{"float", r.perplexity_float}, {"quantized", r.perplexity_quantized}};
      j["top1_agreement"] = {{"tokens", r.eval_tokens}, {"agreed", r.top1_agreed}};
    }
    if (eo.prompt_eval)
      j["greedy_agreement"] = {
          {"tokens", r.greedy_tokens}, {"agreed", r.greedy_agreed}, {"common_prefix", r.greedy_common_prefix}};
    j["overrides"] = nlohmann::json::array();
    for (const auto& [pattern, scheme] : r.overrides) j["overrides"].push_back(pattern + "=" + scheme);
    if (a.per_layer) {
      nlohmann::json layers = nlohmann::json::array();
      for (const auto& t : r.sensitivity) layers.push_back({{"layer", t.name}, {"sqnr_db", finite_json_number(t.sqnr_db)}});
      j["sensitivity"] = layers;
      j["proposed_overrides"] = r.proposed_overrides;
    }
    j["quantize_seconds"] = quantize_seconds;
    j["eval_seconds"] = r.seconds;
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("recipe: %s\n", r.recipe.c_str());
  if (eo.sqnr_eval) {
    std::printf("eval text: %s, %lld windows of %lld tokens\n", a.eval_text.c_str(), static_cast<long long>(r.eval_windows),
                static_cast<long long>(r.eval_windows > 0 ? r.eval_tokens / r.eval_windows + 1 : 0));
    std::printf("logits SQNR: %.2f dB over %lld tokens\n", r.sqnr_db, static_cast<long long>(r.eval_tokens));
    std::printf("perplexity: float %.3f, quantized %.3f (delta %+.3f)\n", r.perplexity_float, r.perplexity_quantized,
                r.perplexity_quantized - r.perplexity_float);
    std::printf("top-1 agreement (teacher-forced): %lld / %lld\n", static_cast<long long>(r.top1_agreed),
                static_cast<long long>(r.eval_tokens));
    std::printf("worst tensors (SQNR dB):\n");
    for (size_t i = 0; i < r.per_layer.size() && static_cast<int64_t>(i) < a.table_rows; ++i)
      std::printf("  %8.2f  %s\n", r.per_layer[i].sqnr_db, r.per_layer[i].name.c_str());
  }
  if (eo.prompt_eval)
    std::printf("greedy agreement: %lld / %lld tokens (common prefix %lld)\n", static_cast<long long>(r.greedy_agreed),
                static_cast<long long>(r.greedy_tokens), static_cast<long long>(r.greedy_common_prefix));
  if (a.per_layer) {
    std::printf("layer sensitivity (logits SQNR dB with only that layer's weights quantized, worst first):\n");
    for (const auto& t : r.sensitivity) std::printf("  %8.2f  %s\n", t.sqnr_db, t.name.c_str());
    std::printf("proposed overrides:%s\n", r.proposed_overrides.empty() ? " none" : "");
    for (const auto& o : r.proposed_overrides) std::printf("  --quant_override '%s'\n", o.c_str());
  }
  if (quantize_seconds > 0) std::printf("quantize time: %.1f s, eval time: %.1f s\n", quantize_seconds, r.seconds);
  return 0;
}

const CommandRegistration kEval{
    "eval", "Measure the accuracy cost of a quantization recipe (SQNR, perplexity, greedy agreement)",
    [](CLI::App& sub) -> CommandAction {
      auto a = std::make_shared<EvalArgs>();
      sub.add_option("--checkpoint", a->checkpoint, "Model checkpoint: GGUF file, Hugging Face folder or llama2.c .bin")
          ->required();
      sub.add_option("--tokenizer_model,--tokenizer-model", a->tokenizer_model, "Tokenizer file (default: from the checkpoint)");
      sub.add_option("--quant_recipe,--quant-recipe", a->quant_recipe,
                     "16a16w, 16a8w, 16a4w, 16a4w_block[:16|32|64], 8a8w, 8a4w, fp16 (default: the model's recipe)");
      sub.add_option("--quant_override,--quant-override", a->overrides,
                     "Per-layer override REGEX=RECIPE on tensor names, e.g. 'lm_head\\.out=16a8w' (repeatable)");
      sub.add_option("--seq_mse_candidates,--seq-mse-candidates", a->seq_mse_candidates,
                     "Weight range search: per channel/block scale factors tried against the output error on the "
                     "calibration text (upstream's SeqMSE candidates; 0: off)")
          ->capture_default_str();
      sub.add_option("--quant_recipe_file,--quant-recipe-file", a->recipe_file,
                     "Recipe file (JSON: recipe, overrides, seq_mse_candidates); --quant_override entries come first");
      sub.add_option("--rotation", a->rotation, "Offline Hadamard rotation of the residual stream: none or hadamard")
          ->check(CLI::IsMember({"none", "hadamard"}))
          ->capture_default_str();
      sub.add_option("-E,--embedding_quantize,--embedding-quantize", a->embedding_quantize,
                     "The embedding table at 'bits,group' (bits 4 or 8; group 0: per row), e.g. 4,32");
      sub.add_flag("--gptq", a->gptq, "Quantize linear weights by GPTQ on the calibration inputs");
      sub.add_flag("--per_layer,--per-layer", a->per_layer,
                   "Layer sensitivity: quantize one layer's weights at a time, rank the layers by the logits SQNR "
                   "they cost and propose --quant_override entries for the worst");
      sub.add_option("--report", a->report, "Write a self-contained HTML report (charts as inline SVG) to this file");
      sub.add_flag("-F,--use_fp16,--use-fp16", a->use_fp16, "fp16 instead of a quantization recipe (= --quant_recipe fp16)");
      sub.add_option("--eval_text,--eval-text", a->eval_text,
                     "Text file to evaluate on (default: Newton's Opticks from Debian's golang-1.19-src, public domain)");
      sub.add_option("--eval_max_tokens,--eval-max-tokens", a->eval_max_tokens,
                     "Tokens of the text evaluated, in whole windows of --max_context_len (0: all)")
          ->capture_default_str();
      sub.add_option("--eval_on,--eval-on", a->eval_on,
                     "What computes the quantized logits: program (a compiled program, equal to the QDQ reference "
                     "and fast) or qdq (the QDQ reference)")
          ->capture_default_str();
      sub.add_option("--eval_methods,--eval-methods", a->eval_methods, "sqnr_eval and/or prompt_eval (default: both)");
      sub.add_option("--max_context_len,--max-context-len", a->max_context_len, "Evaluation window and decode graph context")
          ->capture_default_str();
      sub.add_option("--calib_samples,--calib-samples", a->calib_samples,
                     "Calibration text: JSON lists of strings or plain text files (default: sampled from the model)");
      sub.add_option("--calib_len,--calib-len", a->calib_len, "Tokens per calibration window")->capture_default_str();
      sub.add_option("--calib_max_windows,--calib-max-windows", a->calib_max_windows, "Most calibration windows")
          ->capture_default_str();
      sub.add_option("--calib_range,--calib-range", a->calib_range, "Activation range setting: minmax or mse")
          ->capture_default_str();
      sub.add_option("--gen_tokens,--gen-tokens", a->gen_tokens, "Tokens generated for the greedy agreement")
          ->capture_default_str();
      sub.add_option("--qdq", a->qdq, "Read encodings from a decode_qdq.json instead of quantizing");
      sub.add_option("-a,--artifact", a->artifact, "Write decode_qdq.json/.bin into this directory");
      sub.add_option("--threads", a->threads, "Worker threads (default: all cores)");
      sub.add_flag("--json", a->json, "Print one JSON object");
      return [a] { return run(*a); };
    }};

}  // namespace
}  // namespace genai::cli
