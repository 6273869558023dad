#include "llm/program_method_runner.h"

#include <variant>

#include <fmt/format.h>

namespace genai {

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
