#include "orchestrator/context_from_options.h"

#include <optional>
#include <string>
#include <vector>

#include "backends/register_builtin.h"
#include "compile/backend.h"
#include "core/error.h"
#include "eval/eval_request.h"
#include "options/quant_recipe_option.h"
#include "options/spec_from_options.h"
#include "options/validate.h"
#include "orchestrator/option_readers.h"
#include "orchestrator/stage_settings.h"
#include "pipeline/exceptions.h"
#include "pipeline/stage_names.h"
#include "runtime/artifact_dir.h"
#include "runtime/lone_program.h"
#include "target/backend_type.h"
#include "target/soc.h"

namespace genai::orchestrator {
namespace {

using options::OptionValues;

// The SoC of --pre_gen_pte's programs (their manifest records it) when only inference runs on
// them. nullopt when the dir does not open and --soc_model was given: the inference stage then
// reports what is wrong with the dir, as part of the stage.
std::optional<std::string> prebuilt_soc(const std::string& dir, bool soc_given) {
  try {
    return runtime::open_artifact_dir(dir).soc_model;
  } catch (const InputError&) {
    if (soc_given) return std::nullopt;
    throw;  // names the dir and what is wrong with it
  }
}

// The checks a compilation needs and that no model is required for, so bad combinations stop
// before the checkpoint is loaded.
void check_compile_target(const OptionValues& values) {
  const target::BackendType backend = target::resolve_backend_type(values.get_string("backend"));
  const auto recipe = options::resolve_quant_recipe(values);
  const bool recipe_fp16 = recipe && recipe->scheme == options::QuantScheme::kFp16;
  if (backend == target::BackendType::kGpuBackend && recipe && !recipe_fp16)
    throw_input_error("--backend gpu compiles fp16 programs; --quant_recipe {} does not apply to it (drop it)",
                      options::quant_scheme_name(recipe->scheme));
  if (values.get_flag("use_fp16") && recipe && !recipe_fp16)
    throw_input_error("-F/--use_fp16 compiles an fp16 program; it contradicts --quant_recipe {}",
                      options::quant_scheme_name(recipe->scheme));
  (void)decoder_graph_options(values);  // --model_mode lookahead and the context lengths
  // The spec builder's rejected combinations (LPAI on a SoC without LPAI, online prepare with
  // several contexts, ...); a float program on HTP is built with fp16 specs.
  OptionValues spec_values = values;
  if (float_program_requested(values) && backend == target::BackendType::kHtpBackend && !values.get_flag("use_fp16"))
    spec_values.set("use_fp16", true, options::OptionSource::kCommandLine);
  (void)options::spec_builder_from_options(spec_values).build();
  backends::register_builtin_backends();
  if (!compile::find_backend(backend)) {
    std::string names;
    for (const auto& n : compile::backend_names()) names += (names.empty() ? "" : ", ") + n;
    throw_input_error("--backend {}: this build cannot compile for it on {} (available backends: {})",
                      target::backend_type_name(backend), values.get_string("soc_model"), names);
  }
}

// The SoC a lone program's compile specs record (--pte FILE; empty when none does). A bad file is
// reported here, before any stage: it names --pte and what the runner misses.
std::string lone_program_soc(const std::string& pte) { return runtime::open_lone_program(pte).soc_model; }

}  // namespace

PipelineRun pipeline_run_from_options(const OptionValues& given, const SkipPlan& command_skips) {
  OptionValues values = given;
  SkipPlan skip = plan_skipped_stages(values);
  for (const auto& [stage, why] : command_skips) skip.emplace(stage, why);
  const auto runs = [&](std::string_view stage) { return !skip.contains(stage); };
  const bool prepares = runs(pipeline::kStageModelPreparation);
  const bool compiles = runs(pipeline::kStageCompilation);
  const bool infers = runs(pipeline::kStageInference);

  // The programs of an earlier run carry their SoC.
  const std::optional<std::string> pre_gen = values.get_optional_string("pre_gen_pte");
  if (pre_gen && infers && !compiles) {
    const bool soc_given = values.has_value("soc_model");
    if (const auto recorded = prebuilt_soc(*pre_gen, soc_given)) {
      if (!soc_given) {
        values.set("soc_model", *recorded, options::OptionSource::kCommandLine);
      } else if (target::resolve_soc(values.get_string("soc_model")).name != target::resolve_soc(*recorded).name) {
        throw_input_error("--soc_model {} does not match --pre_gen_pte {}: its programs were compiled for {} (its "
                          "manifest.json); drop --soc_model or compile for {}",
                          values.get_string("soc_model"), *pre_gen, *recorded, values.get_string("soc_model"));
      }
    }
  }

  // A lone program (--pte) carries its SoC in its compile specs, when it records one; inference
  // needs none, so a program that records none runs without.
  const std::optional<std::string> lone = values.get_optional_string("pte");
  bool lone_without_soc = false;
  if (lone && infers && !compiles) {
    const std::string recorded = lone_program_soc(*lone);
    lone_without_soc = recorded.empty() && !values.has_value("soc_model");
    if (!recorded.empty() && !values.has_value("soc_model")) {
      values.set("soc_model", recorded, options::OptionSource::kCommandLine);
    } else if (!recorded.empty() && target::resolve_soc(values.get_string("soc_model")).name != target::resolve_soc(recorded).name) {
      throw_input_error("--soc_model {} does not match --pte {}: its compile specs name {}; drop --soc_model",
                        values.get_string("soc_model"), *lone, recorded);
    }
  }

  // Prompts given but all blank: that first, it is what the user typed.
  auto b = pipeline::PipelineContext::builder();
  if (infers && values.has_value("prompt")) {
    try {
      b.with_prompt(values.get_list("prompt"));
    } catch (const pipeline::ConfigValidationError&) {
      throw_input_error("--prompt: prompt list cannot be empty (every prompt given is blank)");
    }
  }

  // Everything missing, at once, by option name.
  std::vector<std::string> missing;
  std::optional<std::string> model = values.get_optional_string("checkpoint");
  if (!model) model = values.get_optional_string("decoder_model");
  if (!model) model = pre_gen;
  if (!model) model = lone;
  if (!model && (prepares || !pre_gen))
    missing.push_back(infers && !prepares ? "--pre_gen_pte DIR (the programs to run)"
                                          : "--checkpoint (a GGUF file, Hugging Face folder or llama2.c .bin)");
  // Quantization and its evaluation need no target (`genai eval`); programs do.
  const bool needs_target = (compiles || !prepares) && !lone_without_soc;
  if (needs_target && !values.has_value("soc_model"))
    missing.push_back(fmt::format("--soc_model (valid: {}; see `genai targets`)", target::valid_soc_names()));
  // --chat reads its prompts from stdin as the run goes.
  const bool interactive = values.get_flag("chat");
  if (infers && !values.has_value("prompt") && !interactive) missing.push_back("--prompt");
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    throw_input_error("missing {}", list);
  }
  options::validate(values);
  if (compiles) check_compile_target(values);
  // --eval_methods tasks_eval / sqnr_eval: their options and the stages they need, before any
  // stage loads anything.
  eval::check_eval_plan(eval::eval_request(eval_request_settings(values)), infers, prepares);

  b.with_model(model.value_or(""));
  b.with_soc(values.get_optional_string("soc_model").value_or(""));
  b.prompt_optional(!infers || interactive);
  b.with_artifact_dir(values.get_string("artifact"));
  b.with_extra_options(values);
  return PipelineRun{std::move(skip), b.build(), target::resolve_backend_type(values.get_string("backend"))};
}

nlohmann::json recorded_options(const OptionValues& values) {
  nlohmann::json j = values.to_json();
  // Presentation and run-time switches do not change what is compiled (--backend_fuse_kv does,
  // so it stays).
  for (const char* key : {"json", "verbose", "threads", "compile_only", "artifact", "scalar_kernels", "backend_profile",
                          "no_verify"})
    j.erase(key);
  // The program's shard count, also when --decoder_model chose it.
  j["num_sharding"] = options::effective_num_sharding(values);
  return j;
}

}  // namespace genai::orchestrator
