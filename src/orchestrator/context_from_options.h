// The one front door: how every command (`genai compile`, `run`, `eval`, `pipeline`) turns its
// option set into a pipeline run, i.e. which stages run and the PipelineContext they share. A
// command only adds the stages it leaves out (`compile`: inference) and formats the result.
// Every error here is an InputError that names the option to give or fix (--checkpoint,
// --soc_model, --prompt, ...), never an internal API name.
#pragma once

#include <nlohmann/json.hpp>

#include "options/option_values.h"
#include "orchestrator/stage_plan.h"
#include "pipeline/pipeline_context.h"
#include "target/backend_type.h"

namespace genai::orchestrator {

struct PipelineRun {
  SkipPlan skip;  // the options' own skips (stage_plan.h) plus the command's
  pipeline::PipelineContext context;
  target::BackendType backend = target::BackendType::kHtpBackend;  // --backend: the EngineProxy's
};

// `command_skips`: the stages the command itself never runs, with the reason shown in the
// summary (e.g. {"inference", "genai compile"}).
//  - model: --checkpoint, else --decoder_model, else --pre_gen_pte DIR;
//  - SoC: --soc_model; when only inference runs on --pre_gen_pte's programs, the SoC their
//    manifest records (an explicit --soc_model that differs is an InputError naming both); none
//    when nothing is compiled (inference on the prepared float model, `genai eval`);
//  - prompt: required when inference runs;
//  - when compilation runs: the target checks that need no model (compile specs, a backend this
//    build has, float-program contradictions, graph mode), before any stage loads anything.
PipelineRun pipeline_run_from_options(const options::OptionValues& values, const SkipPlan& command_skips = {});

// What manifest.json records as "options": the option set minus the switches that only change
// presentation or which stages run (--json, --verbose, --threads, --compile_only) and the
// artifact dir (the manifest sits in it), so `genai compile` and `genai pipeline --compile_only`
// with the same options, or compiling into another folder, write the same bytes.
nlohmann::json recorded_options(const options::OptionValues& values);

}  // namespace genai::orchestrator
