#include "target/enum_names.h"

namespace genai::target {

std::string snake_enum_name(std::string_view name, std::initializer_list<std::string_view> prefixes) {
  for (std::string_view p : prefixes) {
    if (name.size() > p.size() && name.substr(0, p.size()) == p) {
      name.remove_prefix(p.size());
      break;
    }
  }
  constexpr std::string_view kBackendSuffix = "Backend";
  if (name.size() > kBackendSuffix.size() && name.ends_with(kBackendSuffix)) {
    name.remove_suffix(kBackendSuffix.size());
  }
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c >= 'A' && c <= 'Z') {
      // A new word starts at an upper-case letter that follows a lower-case letter or digit.
      if (i > 0 && ((name[i - 1] >= 'a' && name[i - 1] <= 'z') || (name[i - 1] >= '0' && name[i - 1] <= '9'))) {
        out += '_';
      }
      out += static_cast<char>(c - 'A' + 'a');
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace genai::target
