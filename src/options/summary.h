// The resolved view of an option set that `genai compile|pipeline` print before their stages run:
// target (SoC, HTP arch, VTCM, backend, emulation), the QNN options the compile spec will carry,
// derived values and every option's effective value.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "options/option_values.h"

namespace genai::options {

// Validates first (InputError on a rule violation or an unknown SoC/backend).
nlohmann::json resolved_summary(const OptionValues& values);
// Human-readable rendering of resolved_summary (a few lines).
std::string summary_text(const nlohmann::json& summary);

}  // namespace genai::options
