// How reports print a measured number: three decimals and a unit, or "n/a" when it is absent.
#pragma once

#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace genai::eval {

inline std::string figure_text(const nlohmann::json& v, const char* unit = "") {
  return v.is_number() ? fmt::format("{:.3f}{}", v.get<double>(), unit) : std::string("n/a");
}

}  // namespace genai::eval
