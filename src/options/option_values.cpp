#include "options/option_values.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"
#include "core/whole_file.h"
#include "options/option_table.h"

namespace genai::options {
namespace {

bool is_choice(const std::vector<std::string>& choices, const std::string& v) {
  return std::find(choices.begin(), choices.end(), v) != choices.end();
}

[[noreturn]] void wrong_type(const OptionSpec& spec) {
  throw_input_error("--{} expects a value of type {}", spec.name, option_type_name(spec.type));
}

// Brings a value to the option's type and checks choices (the command's) and format.
OptionValue normalize(const OptionSpec& spec, OptionScope scope, OptionValue value) {
  const std::vector<std::string>& choices = choices_for(spec, scope);
  if (std::holds_alternative<std::monostate>(value)) return value;
  switch (spec.type) {
    case OptionType::kFlag:
      if (!std::holds_alternative<bool>(value)) wrong_type(spec);
      break;
    case OptionType::kInt: {
      const auto* i = std::get_if<int64_t>(&value);
      if (!i) wrong_type(spec);
      if (!choices.empty() && !is_choice(choices, std::to_string(*i))) {
        throw_input_error("--{} {} is not allowed; valid choices: {}", spec.name, *i, fmt::join(choices, ", "));
      }
      break;
    }
    case OptionType::kFloat:
      if (const auto* i = std::get_if<int64_t>(&value)) value = static_cast<double>(*i);
      if (!std::holds_alternative<double>(value)) wrong_type(spec);
      if (!std::isfinite(std::get<double>(value))) throw_input_error("--{} must be a finite number", spec.name);
      break;
    case OptionType::kString:
      if (!std::holds_alternative<std::string>(value)) wrong_type(spec);
      break;
    case OptionType::kChoice: {
      const auto* s = std::get_if<std::string>(&value);
      if (!s) wrong_type(spec);
      if (!is_choice(choices, *s)) {
        throw_input_error("--{} '{}' is not a valid choice; valid choices: {}", spec.name, *s, fmt::join(choices, ", "));
      }
      break;
    }
    case OptionType::kStringList: {
      if (auto* s = std::get_if<std::string>(&value)) value = std::vector<std::string>{*s};
      const auto* list = std::get_if<std::vector<std::string>>(&value);
      if (!list) wrong_type(spec);
      for (const auto& e : *list) {
        if (!choices.empty() && !is_choice(choices, e)) {
          throw_input_error("--{} '{}' is not a valid choice; valid choices: {}", spec.name, e, fmt::join(choices, ", "));
        }
      }
      break;
    }
  }
  if (spec.check) spec.check(value);
  return value;
}

OptionValue parse_text(const OptionSpec& spec, const std::string& text) {
  switch (spec.type) {
    case OptionType::kFlag: {
      if (text == "true" || text == "1" || text.empty()) return true;
      if (text == "false" || text == "0") return false;
      throw_input_error("--{} '{}' is not a flag value (true/false)", spec.name, text);
    }
    case OptionType::kInt: {
      int64_t v = 0;
      const char* end = text.data() + text.size();
      auto [p, ec] = std::from_chars(text.data(), end, v);
      if (text.empty() || ec != std::errc() || p != end) throw_input_error("--{} '{}' is not an integer", spec.name, text);
      return v;
    }
    case OptionType::kFloat: {
      char* end = nullptr;
      double v = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) {
        throw_input_error("--{} '{}' is not a number", spec.name, text);
      }
      return v;
    }
    default:
      return text;
  }
}

OptionValue from_json(const OptionSpec& spec, const nlohmann::json& j) {
  if (j.is_null()) return std::monostate{};
  switch (spec.type) {
    case OptionType::kFlag:
      if (j.is_boolean()) return j.get<bool>();
      break;
    case OptionType::kInt:
      if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) break;
      if (j.is_number_integer()) return j.get<int64_t>();
      break;
    case OptionType::kFloat:
      if (j.is_number()) return j.get<double>();
      break;
    case OptionType::kString:
    case OptionType::kChoice:
      if (j.is_string()) return j.get<std::string>();
      break;
    case OptionType::kStringList:
      if (j.is_string()) return std::vector<std::string>{j.get<std::string>()};
      if (j.is_array() && std::all_of(j.begin(), j.end(), [](const auto& e) { return e.is_string(); })) {
        return j.get<std::vector<std::string>>();
      }
      break;
  }
  throw_input_error("option '{}' expects a value of type {}, got {}", spec.name, option_type_name(spec.type), j.dump());
}

}  // namespace

const OptionSpec& OptionValues::spec(std::string_view name) const {
  const OptionSpec* s = find_option(name);
  if (!s) throw_failure("internal: unknown option '{}'", name);
  return *s;
}

void OptionValues::set(std::string_view name, OptionValue value, OptionSource source) {
  const OptionSpec* s = find_option(name);
  if (!s) throw_input_error("unknown option '{}'", name);
  value = normalize(*s, scope_, std::move(value));
  if (source == OptionSource::kDefault) throw_failure("internal: --{} cannot be set as a default; defaults live in the option table", s->name);
  auto& layer = source == OptionSource::kConfigFile ? config_ : cli_;
  layer[s->name] = std::move(value);
  if (!s->native && !warned_.contains(s->name)) {
    warned_.insert(s->name);
    log::warn("--{} has no native meaning ({}); ignored", s->name, s->native_note);
  }
}

void OptionValues::set_from_text(std::string_view name, const std::vector<std::string>& text, OptionSource source) {
  const OptionSpec* s = find_option(name);
  if (!s) throw_input_error("unknown option '{}'", name);
  if (s->type == OptionType::kStringList) {
    set(name, text, source);
  } else {
    set(name, parse_text(*s, text.empty() ? std::string() : text.back()), source);
  }
}

void OptionValues::load_config_file(const std::string& path) {
  const std::optional<std::string> text = read_whole_file(path);
  if (!text) throw_input_error("--config_file {}: cannot open", path);
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw_input_error("--config_file {}: not valid JSON", path);
  load_config_json(j, path);
}

void OptionValues::load_config_json(const nlohmann::json& object, std::string_view origin) {
  if (!object.is_object()) throw_input_error("config file {}: expected a JSON object of option values", origin);
  for (const auto& [key, value] : object.items()) {
    const OptionSpec* s = find_option(key);
    if (!s || key.starts_with("-")) {
      throw_input_error("config file {}: unknown option '{}' (see `genai pipeline --help`)", origin, key);
    }
    if (s->name == "config_file") throw_input_error("config file {}: 'config_file' cannot be nested", origin);
    try {
      OptionValue v = from_json(*s, value);
      if (std::holds_alternative<std::monostate>(v)) continue;  // null = keep the default
      set(s->name, std::move(v), OptionSource::kConfigFile);
    } catch (const InputError& e) {
      throw_input_error("config file {}: {}", origin, e.what());
    }
  }
}

bool OptionValues::was_set(std::string_view name) const {
  const std::string& n = spec(name).name;
  return cli_.contains(n) || config_.contains(n);
}

OptionSource OptionValues::source(std::string_view name) const {
  const std::string& n = spec(name).name;
  if (cli_.contains(n)) return OptionSource::kCommandLine;
  if (config_.contains(n)) return OptionSource::kConfigFile;
  return OptionSource::kDefault;
}

const OptionValue& OptionValues::get(std::string_view name) const {
  const OptionSpec& s = spec(name);
  if (auto it = cli_.find(s.name); it != cli_.end()) return it->second;
  if (auto it = config_.find(s.name); it != config_.end()) return it->second;
  return default_for(s, scope_);
}

bool OptionValues::has_value(std::string_view name) const { return !std::holds_alternative<std::monostate>(get(name)); }

namespace {
template <typename V>
const V& typed(const OptionValue& v, std::string_view name, std::string_view type) {
  const V* p = std::get_if<V>(&v);
  if (!p) throw_failure("internal: option '{}' has no {} value", name, type);
  return *p;
}
}  // namespace

bool OptionValues::get_flag(std::string_view name) const { return typed<bool>(get(name), name, "flag"); }
int64_t OptionValues::get_int(std::string_view name) const { return typed<int64_t>(get(name), name, "int"); }
double OptionValues::get_float(std::string_view name) const { return typed<double>(get(name), name, "float"); }
const std::string& OptionValues::get_string(std::string_view name) const {
  return typed<std::string>(get(name), name, "string");
}
const std::vector<std::string>& OptionValues::get_list(std::string_view name) const {
  return typed<std::vector<std::string>>(get(name), name, "list");
}
std::optional<int64_t> OptionValues::get_optional_int(std::string_view name) const {
  if (!has_value(name)) return std::nullopt;
  return get_int(name);
}
std::optional<std::string> OptionValues::get_optional_string(std::string_view name) const {
  if (!has_value(name)) return std::nullopt;
  return get_string(name);
}

nlohmann::json option_value_to_json(const OptionValue& value) {
  return std::visit(
      [](const auto& v) -> nlohmann::json {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::monostate>) {
          return nullptr;
        } else {
          return v;
        }
      },
      value);
}

nlohmann::json OptionValues::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& s : option_table()) j[s.name] = option_value_to_json(get(s.name));
  return j;
}

std::vector<std::string> OptionValues::ignored_options_set() const {
  std::vector<std::string> out;
  for (const auto& s : option_table()) {
    if (!s.native && was_set(s.name)) out.push_back(s.name);
  }
  return out;
}

}  // namespace genai::options
