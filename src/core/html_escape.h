// Text into HTML: the five characters with a meaning in markup or attribute values become
// entities. Every string a report takes from its input goes through it.
#pragma once

#include <string>
#include <string_view>

namespace genai {

inline std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace genai
