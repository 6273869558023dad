// Lower-case names of the QNN schema enums, derived from the flatc-generated names (so there is
// no second list to keep in sync): kHtpBurst -> "burst", kLogLevelError -> "error",
// kGpuPrecisionUserProvided -> "user_provided", kHtpBackend -> "htp".
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace genai::target {

// Strips the first matching prefix (and a trailing "Backend"), then CamelCase -> snake_case.
std::string snake_enum_name(std::string_view flatc_name, std::initializer_list<std::string_view> prefixes);

}  // namespace genai::target
