// Subcommand registration. Each command file defines one static CommandRegistration; main()
// builds the CLI from all of them. setup() declares the options on the subcommand and returns the
// action to run once parsing succeeded (its return value is the exit code).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace genai::cli {

using CommandAction = std::function<int()>;
using CommandSetup = std::function<CommandAction(CLI::App& sub)>;

struct CommandInfo {
  std::string name;
  std::string description;
  CommandSetup setup;
};

struct CommandRegistration {
  CommandRegistration(std::string name, std::string description, CommandSetup setup);
};

const std::vector<CommandInfo>& registered_commands();

}  // namespace genai::cli
