// `genai compile`: checkpoint -> quantized (or fp16), compiled .pte programs for a Qualcomm target
// in an artifact dir with manifest.json. The pipeline without its inference stage (exactly what
// `genai pipeline --compile_only` runs, through orchestrator::pipeline_run_from_options): prepare
// -> quantize (skipped for fp16 programs: --use_fp16, --quant_recipe fp16 or --backend gpu) ->
// compile. This file only formats the result.
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "backends/execution_options.h"
#include "cli/command.h"
#include "core/log.h"
#include "core/thread_pool.h"
#include "options/cli_options.h"
#include "options/summary.h"
#include "orchestrator/builtin_strategies.h"
#include "orchestrator/context_from_options.h"
#include "orchestrator/genai_pipeline.h"
#include "pipeline/engine_proxy.h"
#include "target/backend_type.h"
#include "target/soc.h"

namespace genai::cli {
namespace {

const nlohmann::json& notes(const orchestrator::PipelineResult& r, std::string_view stage) { return r.stage(stage).notes; }

int compile_action(const options::OptionValues& given) {
  // `genai compile` is `genai pipeline --compile_only`: the same switch, so both write the same.
  options::OptionValues values = given;
  values.set("compile_only", true, options::OptionSource::kCommandLine);
  if (values.get_flag("verbose")) log::set_level(log::Level::kDebug);
  if (const auto threads = values.get_optional_int("threads"); threads && *threads > 0) {
    ThreadPool::set_global_threads(static_cast<int>(*threads));
  }
  backends::apply_execution_options(values);
  const bool json = values.get_flag("json");
  const orchestrator::PipelineRun run =
      orchestrator::pipeline_run_from_options(values);
  const options::OptionValues& o = run.context.extra_options();
  const nlohmann::json summary = options::resolved_summary(o);  // validates the SoC and the backend

  orchestrator::StrategyRegistry registry;
  orchestrator::register_builtin_strategies(registry);
  const target::BackendType backend = run.backend;
  const auto pipe = orchestrator::GenAIPipeline::from_proxy(pipeline::EngineProxy({}, backend), registry, run.skip);
  const orchestrator::PipelineResult result = pipe.invoke(run.context);

  const nlohmann::json& compiled = notes(result, pipeline::kStageCompilation);
  const nlohmann::json& quantized = notes(result, pipeline::kStageQuantization);
  const std::string program_kind = quantized.contains("recipe") ? quantized["recipe"].get<std::string>() : "fp16";
  const uint64_t planned = compiled.value("planned_bytes", uint64_t{0});
  const uint64_t lower_bound = compiled.value("lower_bound_bytes", uint64_t{0});
  const double ratio = lower_bound > 0 ? static_cast<double>(planned) / static_cast<double>(lower_bound) : 1.0;
  const double prepare_seconds = result.stage(pipeline::kStageModelPreparation).seconds;
  const double quantize_seconds = result.stage(pipeline::kStageQuantization).seconds;
  const double compile_seconds = result.stage(pipeline::kStageCompilation).seconds;
  const std::string manifest = compiled.value("manifest", std::string());
  if (json) {
    nlohmann::json j;
    j["artifacts"] = pipeline::artifact_map_to_json(result.artifacts);
    j["methods"] = compiled.value("methods", nlohmann::json::object());
    j["planned_bytes"] = planned;
    j["lower_bound_bytes"] = lower_bound;
    j["planned_ratio"] = ratio;
    j["stage_seconds"] = {{"prepare", prepare_seconds}, {"quantize", quantize_seconds}, {"compile", compile_seconds}};
    j["manifest"] = manifest;
    j["program"] = program_kind;
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("%s", options::summary_text(summary).c_str());
  std::printf("program: %s, %s on %s\n", program_kind.c_str(), target::backend_type_name(backend).c_str(),
              std::string(target::resolve_soc(run.context.soc_model()).name).c_str());
  for (const auto& [key, path] : result.artifacts) {
    const std::string key_name(pipeline::artifact_key_name(key));
    std::printf("%s: %s\n", key_name.c_str(), path.string().c_str());
    std::string names;
    for (const auto& n : compiled["methods"][key_name]) names += (names.empty() ? "" : ", ") + n.get<std::string>();
    std::printf("  methods: %s\n", names.c_str());
  }
  std::printf("planned scratch: %llu bytes, lower bound %llu bytes (ratio %.3f)\n", static_cast<unsigned long long>(planned),
              static_cast<unsigned long long>(lower_bound), ratio);
  std::printf("stage seconds: prepare %.2f, quantize %.2f, compile %.2f\n", prepare_seconds, quantize_seconds,
              compile_seconds);
  std::printf("manifest: %s\n", manifest.c_str());
  return 0;
}

const CommandRegistration kCompile{
    "compile", "Quantize and compile a checkpoint into .pte programs for a Qualcomm SoC",
    [](CLI::App& sub) -> CommandAction {
      auto values = std::make_shared<options::OptionValues>(options::kCompileScope);
      options::add_options_to(sub, *values, options::kCompileScope);
      return [values] { return compile_action(*values); };
    }};

}  // namespace
}  // namespace genai::cli
