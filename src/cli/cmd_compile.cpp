// `genai compile`: checkpoint -> quantized, compiled .pte files for a Qualcomm target. The CLI is
// derived from the option table (src/options); compile_action() is the stage entry point.
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "core/error.h"
#include "core/log.h"
#include "options/cli_options.h"
#include "options/summary.h"

namespace genai::cli {
namespace {

// Validates the options (SoC, backend and cross-option rules), prints the resolved target and
// options, then runs compilation. Compilation stages are not part of this build yet.
int compile_action(const options::OptionValues& values) {
  if (values.get_flag("verbose")) log::set_level(log::Level::kDebug);
  if (!values.has_value("soc_model")) {
    throw_input_error("genai compile needs --soc_model (see `genai targets`)");
  }
  if (!values.has_value("checkpoint")) {
    throw_input_error("genai compile needs --checkpoint (GGUF file, Hugging Face folder or llama2.c .bin)");
  }
  const auto summary = options::resolved_summary(values);
  if (values.get_flag("json")) {
    std::printf("%s\n", summary.dump(2).c_str());
  } else {
    std::printf("%s", options::summary_text(summary).c_str());
  }
  throw_failure("compilation stage not available in this build");
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
