// A double as a JSON number that every reader can parse. JSON has no infinities (nlohmann writes
// them as null), but an SQNR of identical logits is +inf dB: reports write it as 999 (-999 for
// -inf and NaN), a figure far beyond any real SQNR that still sorts and plots as a number.
#pragma once

#include <cmath>

#include <nlohmann/json.hpp>

namespace genai {

inline nlohmann::json finite_json_number(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(v > 0 ? 999.0 : -999.0);
}

}  // namespace genai
