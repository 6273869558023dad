#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>

#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "core/error.h"
#include "core/log.h"

namespace genai::cli {
namespace {
std::vector<CommandInfo>& registry() {
  static std::vector<CommandInfo> commands;
  return commands;
}
}  // namespace

CommandRegistration::CommandRegistration(std::string name, std::string description, CommandSetup setup) {
  registry().push_back({std::move(name), std::move(description), std::move(setup)});
}

const std::vector<CommandInfo>& registered_commands() { return registry(); }

}  // namespace genai::cli

int main(int argc, char** argv) {
  using namespace genai;
  CLI::App app{"genai: checkpoint -> quantized, compiled .pte programs -> tokens (prepare, quantize, compile, run)"};
  app.set_version_flag("--version", std::string("genai ") + GENAI_VERSION);
  app.require_subcommand(1);
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "Debug logging on stderr")->configurable(false);
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors on stderr");

  auto commands = cli::registered_commands();
  std::sort(commands.begin(), commands.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::map<CLI::App*, cli::CommandAction> actions;
  for (const auto& c : commands) {
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    actions[sub] = c.setup(*sub);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return static_cast<int>(ExitCode::kBadInput);
  }
  if (verbose) log::set_level(log::Level::kDebug);
  if (quiet) log::set_level(log::Level::kWarn);

  for (auto& [sub, action] : actions) {
    if (!sub->parsed()) continue;
    try {
      return action();
    } catch (const Error& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      return static_cast<int>(e.code());
    } catch (const CLI::ParseError& e) {
      // Option validation that happens after parsing (e.g. derived from the option table).
      std::fprintf(stderr, "error: %s\n", e.what());
      return static_cast<int>(ExitCode::kBadInput);
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "error: out of memory\n");
      return static_cast<int>(ExitCode::kFailure);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      return static_cast<int>(ExitCode::kFailure);
    }
  }
  return static_cast<int>(ExitCode::kBadInput);
}
