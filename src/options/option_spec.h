// One entry of the option table (option_table.h): everything the CLI, the JSON config reader,
// validation and docs need to know about an option. The table is the only place defaults live.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace genai::options {

enum class OptionType { kFlag, kInt, kFloat, kString, kStringList, kChoice };

// Which subcommands show an option (bit set). Every command still accepts every name.
enum OptionScope : unsigned { kPipelineScope = 1u, kCompileScope = 2u, kRunScope = 4u, kEvalScope = 8u };

// Absent (monostate) = upstream's None.
using OptionValue = std::variant<std::monostate, bool, int64_t, double, std::string, std::vector<std::string>>;

// What one command reads differently: `genai eval` evaluates windows of --max_context_len 256
// tokens, where the pipeline's context defaults to --max_seq_len. Unset or empty members: the
// table's.
struct ScopedMeaning {
  OptionScope scope = kPipelineScope;
  std::optional<OptionValue> default_value;
  std::string help;
  std::vector<std::string> choices;  // a subset of the table's: what the command runs
};

struct OptionSpec {
  std::string name;               // snake_case, as upstream's argparse dest
  std::string upstream_spelling;  // upstream's flag when it differs ("dtype-override"), else ""
  std::string short_alias;        // "a" for -a, "" when none
  OptionType type = OptionType::kString;
  OptionValue default_value;
  // Allowed values (for kChoice, kStringList and some kInt options), as strings.
  std::vector<std::string> choices;
  std::string help;
  // false: the option has no meaning natively (e.g. adb host); it is accepted and reported once
  // as ignored. native_note says what it means here, or why it is ignored.
  bool native = true;
  std::string native_note;
  bool upstream = true;  // false: one of ours, not in llama.py / export_utils
  unsigned scopes = kPipelineScope;
  std::vector<ScopedMeaning> scoped;  // commands with a default or help of their own
  // Extra check of a value (format, known SoC, ...); throws InputError naming the option.
  void (*check)(const OptionValue&) = nullptr;
};

std::string_view option_type_name(OptionType type);

// The default, help text and choices of `spec` for one command: its ScopedMeaning, else the table's.
const OptionValue& default_for(const OptionSpec& spec, OptionScope scope);
const std::string& help_for(const OptionSpec& spec, OptionScope scope);
const std::vector<std::string>& choices_for(const OptionSpec& spec, OptionScope scope);  // "flag", "int", "float", "string", "string-list", "choice"

}  // namespace genai::options
