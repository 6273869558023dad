// `genai pipeline`: prepare -> quantize -> compile -> run, with every option of upstream's llama.py
// flow (the option table). pipeline_action() is the orchestrator entry point.
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "core/error.h"
#include "core/log.h"
#include "options/cli_options.h"
#include "options/summary.h"
#include "pipeline/pipeline_context.h"

namespace genai::cli {
namespace {

// The run's context: the model is the checkpoint (or the upstream model name). As upstream, a
// prompt is required; natively only --compile_only runs may omit it.
pipeline::PipelineContextBuilder context_builder(const options::OptionValues& values) {
  auto b = pipeline::PipelineContext::builder();
  if (auto checkpoint = values.get_optional_string("checkpoint")) {
    b.with_model(*checkpoint);
  } else if (auto model = values.get_optional_string("decoder_model")) {
    b.with_model(*model);
  }
  if (auto soc = values.get_optional_string("soc_model")) b.with_soc(*soc);
  if (values.has_value("prompt")) b.with_prompt(values.get_list("prompt"));
  b.with_artifact_dir(values.get_string("artifact"));
  b.with_extra_options(values);
  return b;
}

int pipeline_action(const options::OptionValues& values) {
  if (values.get_flag("verbose")) log::set_level(log::Level::kDebug);
  const auto summary = options::resolved_summary(values);
  if (!values.get_flag("compile_only")) {
    context_builder(values).build();  // lists every missing field (model, SoC, prompt) at once
  } else if (!values.has_value("soc_model")) {
    throw_input_error("genai pipeline --compile_only needs --soc_model (see `genai targets`)");
  }
  if (values.get_flag("json")) {
    std::printf("%s\n", summary.dump(2).c_str());
  } else {
    std::printf("%s", options::summary_text(summary).c_str());
  }
  throw_failure("compilation stage not available in this build");
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
