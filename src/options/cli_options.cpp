#include "options/cli_options.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"
#include "options/option_table.h"

namespace genai::options {
namespace {

std::string scope_command(OptionScope scope) {
  switch (scope) {
    case kCompileScope: return "compile";
    case kRunScope: return "run";
    case kEvalScope: return "eval";
    default: return "pipeline";
  }
}

std::string default_text(const OptionSpec& spec, OptionScope scope = kPipelineScope) {
  const auto j = option_value_to_json(default_for(spec, scope));
  if (j.is_null()) return "None";
  if (j.is_string()) return j.get<std::string>().empty() ? "\"\"" : j.get<std::string>();
  return j.dump();
}

}  // namespace

std::string options_markdown() {
  std::string md =
      "| option | alias | type | default | choices | native meaning |\n"
      "|---|---|---|---|---|---|\n";
  for (const OptionSpec& s : option_table()) {
    std::string aliases;
    if (!s.short_alias.empty()) aliases += "-" + s.short_alias;
    if (!s.upstream_spelling.empty()) aliases += (aliases.empty() ? "--" : ", --") + s.upstream_spelling;
    std::string choices;
    for (const auto& c : s.choices) choices += (choices.empty() ? "" : ", ") + c;
    md += fmt::format("| --{}{} | {} | {} | {} | {} | {}{} |\n", s.name, s.upstream ? "" : " *", aliases,
                      option_type_name(s.type), default_text(s), choices, s.native ? "" : "ignored: ", s.native_note);
  }
  return md;
}

std::string option_help_line(const OptionSpec& spec, OptionScope scope) {
  std::string h = help_for(spec, scope);
  if (const auto& choices = choices_for(spec, scope); !choices.empty()) {
    h += " {";
    for (size_t i = 0; i < choices.size(); ++i) h += (i ? "," : "") + choices[i];
    h += "}";
  }
  if (spec.type != OptionType::kFlag) h += fmt::format(" [default: {}]", default_text(spec, scope));
  if (!spec.native) h += fmt::format(" (ignored natively: {})", spec.native_note);
  return h;
}

void add_options_to(CLI::App& app, OptionValues& values, OptionScope scope) {
  for (const OptionSpec& spec : option_table()) {
    std::string names;
    if (!spec.short_alias.empty()) names += "-" + spec.short_alias + ",";
    names += "--" + spec.name;
    std::string kebab = spec.name;
    std::replace(kebab.begin(), kebab.end(), '_', '-');
    if (kebab != spec.name) names += ",--" + kebab;

    const bool in_scope = (spec.scopes & scope) != 0;
    const std::string name = spec.name;
    auto store = [&values, name, in_scope, scope](const std::vector<std::string>& text) {
      try {
        if (name == "config_file") {
          values.load_config_file(text.back());
        }
        values.set_from_text(name, text, OptionSource::kCommandLine);
      } catch (const InputError& e) {
        throw CLI::ValidationError(e.what());
      }
      if (!in_scope) log::warn("--{} has no effect for `genai {}`", name, scope_command(scope));
    };

    CLI::Option* o = nullptr;
    if (spec.type == OptionType::kFlag) {
      o = app.add_flag_function(names, [store](int64_t count) { store({count > 0 ? "true" : "false"}); }, option_help_line(spec, scope));
    } else if (spec.type == OptionType::kStringList) {
      o = app.add_option_function<std::vector<std::string>>(names, store, option_help_line(spec, scope));
      o->expected(1, CLI::detail::expected_max_vector_size);
    } else {
      o = app.add_option_function<std::string>(names, [store](const std::string& v) { store({v}); },
                                               option_help_line(spec, scope));
      o->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // as argparse: the last one wins
    }
    switch (spec.type) {
      case OptionType::kInt: o->type_name("INT"); break;
      case OptionType::kFloat: o->type_name("FLOAT"); break;
      case OptionType::kChoice: o->type_name("CHOICE"); break;
      case OptionType::kStringList: o->type_name("TEXT"); break;  // CLI11 appends " ..."
      default: break;
    }
    if (!in_scope) o->group("");
  }
}

}  // namespace genai::options
