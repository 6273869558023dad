// `genai pipeline`: prepare -> quantize -> compile -> run, with every option of upstream's llama.py
// flow (the option table), through the orchestrator (src/orchestrator). Text mode streams the
// answer to stdout and ends with the summary (stage times, artifacts, planned memory, SQNR,
// tokens/s); --json prints one object at the end instead (orchestrator/pipeline_report.h, plus
// "config": the resolved option summary). Logs go to stderr. A failing stage exits 1 (2 when its
// cause is bad input) after logging what the earlier stages did; their files stay.
#include <cstdio>
#include <memory>

#include "backends/execution_options.h"
#include "cli/command.h"
#include "core/error.h"
#include "core/log.h"
#include "core/thread_pool.h"
#include "options/cli_options.h"
#include "options/summary.h"
#include "orchestrator/builtin_strategies.h"
#include "orchestrator/context_from_options.h"
#include "orchestrator/genai_pipeline.h"
#include "orchestrator/pipeline_report.h"
#include "pipeline/engine_proxy.h"
#include "runtime/load_verification.h"
#include "pipeline/pipeline_context.h"
#include "target/backend_type.h"

namespace genai::cli {
namespace {

int pipeline_action(const options::OptionValues& values) {
  if (values.get_flag("verbose")) log::set_level(log::Level::kDebug);
  if (const int64_t threads = values.get_int("threads"); threads > 0) ThreadPool::set_global_threads(static_cast<int>(threads));
  backends::apply_execution_options(values);
  runtime::set_load_verification(!values.get_flag("no_verify"));
  const bool json = values.get_flag("json");
  // Lists every missing option at once; with --pre_gen_pte the SoC comes from its programs.
  const orchestrator::PipelineRun run = orchestrator::pipeline_run_from_options(values);
  const pipeline::PipelineContext& context = run.context;
  const orchestrator::SkipPlan& skip = run.skip;
  const auto summary = options::resolved_summary(context.extra_options());  // validates the option set
  if (!json) {
    std::printf("%s", options::summary_text(summary).c_str());
    std::fflush(stdout);  // before the stage logs on stderr
  }

  orchestrator::StrategyRegistry registry;
  orchestrator::BuiltinStrategyOptions builtin;
  if (!json) {
    builtin.on_text = [](std::string_view piece) {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    };
  }
  orchestrator::register_builtin_strategies(registry, builtin);
  const pipeline::EngineProxy proxy({}, run.backend);
  const auto pipe = orchestrator::GenAIPipeline::from_proxy(proxy, registry, skip);

  orchestrator::PipelineResult result;
  try {
    if (!json && pipe.runs(pipeline::kStageInference)) std::fputs("\n", stdout);
    pipe.invoke(context, result);
  } catch (const Error&) {
    // What ran before the failure, and where its files are (they are kept).
    if (!result.stages.empty()) log::info("{}", orchestrator::pipeline_report_text(result));
    throw;
  }
  if (json) {
    nlohmann::json j = orchestrator::pipeline_report_json(result);
    j["config"] = summary;
    // A badly behaved model may emit bytes that are not UTF-8: replace them rather than fail.
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::printf("%s", orchestrator::pipeline_report_text(result).c_str());
  }
  std::fflush(stdout);
  return 0;
}

const CommandRegistration kPipeline{
    "pipeline", "Run the whole flow (prepare, quantize, compile, run) with upstream llama.py options",
    [](CLI::App& sub) -> CommandAction {
      auto values = std::make_shared<options::OptionValues>(options::kPipelineScope);
      options::add_options_to(sub, *values, options::kPipelineScope);
      return [values] { return pipeline_action(*values); };
    }};

}  // namespace
}  // namespace genai::cli
