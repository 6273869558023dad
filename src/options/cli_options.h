// Deriving a subcommand's CLI from the option table (CLI11). Every command accepts every name of
// the table with the same type and default; the scope only decides which ones --help shows (the
// others are hidden, and setting one is reported as having no effect for that command).
#pragma once

#include <CLI/CLI.hpp>

#include "options/option_values.h"

namespace genai::options {

// Options are --snake_case (upstream) with --kebab-case aliases and upstream's short aliases
// (-a, -d, -E, -F, -v). Values are stored into `values` (which must outlive parsing) as they are
// parsed; --config_file is loaded when it is parsed and command-line values always win over it.
// Bad values become CLI::ValidationError (exit 2) naming the option and the valid choices.
void add_options_to(CLI::App& app, OptionValues& values, OptionScope scope);

// The help text of one option as shown by `genai <command> --help` (`scope`: the command) and,
// with the pipeline's, docs/options.md.
std::string option_help_line(const OptionSpec& spec, OptionScope scope = kPipelineScope);

// The table as a markdown table (docs/options.md); options marked * are ours, not upstream's.
std::string options_markdown();

}  // namespace genai::options
