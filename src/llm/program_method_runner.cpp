#include "llm/program_method_runner.h"

#include <variant>

#include <fmt/format.h>

#include "core/error.h"

namespace genai {

std::vector<std::string> ProgramMethodRunner::method_names() const {
  std::vector<std::string> names = program_->method_names();
  for (const auto& p : more_)
    for (auto& n : p->method_names()) names.push_back(std::move(n));
  return names;
}

bool ProgramMethodRunner::has_method(std::string_view method) const {
  if (program_->has_method(method)) return true;
  for (const auto& p : more_)
    if (p->has_method(method)) return true;
  return false;
}

runtime::ProgramInstance& ProgramMethodRunner::owner(std::string_view method) const {
  for (const auto& p : more_)
    if (p->has_method(method)) return *p;
  return *program_;
}

void ProgramMethodRunner::add_program(std::unique_ptr<runtime::ProgramInstance> program) {
  for (const auto& name : program->method_names())
    if (has_method(name))
      throw_input_error("{}: method {} is also in {}", program->path().string(), name, owner(name).path().string());
  name_unnamed_methods(*program);
  more_.push_back(std::move(program));
}

void ProgramMethodRunner::name_unnamed_methods(const runtime::ProgramInstance& program) {
  for (const auto& name : program.method_names())
    if (auto s = name_by_upstream_layout(program.inputs(name), program.outputs(name))) named_.emplace(name, std::move(*s));
}

std::string ProgramMethodRunner::context_source() const {
  return fmt::format("get_max_context_len of {}", program_->path().string());
}

std::optional<std::vector<double>> ProgramMethodRunner::constant_numbers(std::string_view name) const {
  // Constant methods with no outputs are never written: an empty list is an absent method.
  const std::vector<pte::Value> values = program_->constant_list(name);
  if (values.empty()) return std::nullopt;
  std::vector<double> out;
  for (const pte::Value& v : values) {
    if (const auto* d = std::get_if<pte::Double>(&v)) out.push_back(d->value);
    else if (const auto* i = std::get_if<pte::Int>(&v)) out.push_back(static_cast<double>(i->value));
  }
  return out;
}

}  // namespace genai
