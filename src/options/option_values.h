// Typed values of the option table, in three layers: table default < --config_file < command line.
// was_set() tells whether the user gave a value (file or command line), has_value() whether there
// is one at all (None-defaulted options have none until set).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "options/option_spec.h"

namespace genai::options {

enum class OptionSource { kDefault, kConfigFile, kCommandLine };

class OptionValues {
 public:
  // scope = the command the values are for (validation rules differ for run-only commands).
  explicit OptionValues(OptionScope scope = kPipelineScope) : scope_(scope) {}

  OptionScope scope() const { return scope_; }

  // Stores a value after checking its type, choices and format; InputError naming the option
  // otherwise. Unknown name -> InputError. An option without native meaning is reported once
  // (log::warn) as ignored. source kDefault is refused (Failure): defaults live in the table only.
  void set(std::string_view name, OptionValue value, OptionSource source = OptionSource::kCommandLine);
  // Parses a command-line string (or, for lists, each element) into the option's type.
  void set_from_text(std::string_view name, const std::vector<std::string>& text, OptionSource source);
  // Reads a JSON object file of {option: value}; unknown keys are InputErrors naming the key.
  void load_config_file(const std::string& path);
  void load_config_json(const nlohmann::json& object, std::string_view origin);

  bool was_set(std::string_view name) const;
  bool has_value(std::string_view name) const;
  OptionSource source(std::string_view name) const;

  // Typed access; Failure when the option is unknown, of another type, or has no value.
  bool get_flag(std::string_view name) const;
  int64_t get_int(std::string_view name) const;
  double get_float(std::string_view name) const;
  const std::string& get_string(std::string_view name) const;  // kString and kChoice
  const std::vector<std::string>& get_list(std::string_view name) const;
  std::optional<int64_t> get_optional_int(std::string_view name) const;
  std::optional<std::string> get_optional_string(std::string_view name) const;

  const OptionValue& get(std::string_view name) const;
  // Every option with its effective value (null when absent).
  nlohmann::json to_json() const;
  // Names the user set whose option means nothing natively.
  std::vector<std::string> ignored_options_set() const;

 private:
  const OptionSpec& spec(std::string_view name) const;

  OptionScope scope_;
  std::map<std::string, OptionValue, std::less<>> config_;
  std::map<std::string, OptionValue, std::less<>> cli_;
  std::set<std::string, std::less<>> warned_;
};

nlohmann::json option_value_to_json(const OptionValue& value);

}  // namespace genai::options
