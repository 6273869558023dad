#include "target/backend_type.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "target/enum_names.h"

namespace genai::target {

std::string backend_type_name(BackendType type) {
  const char* n = qnn_delegate::EnumNameQnnExecuTorchBackendType(type);
  if (!n || !*n) return fmt::format("unknown({})", static_cast<int>(type));
  return snake_enum_name(n, {"k"});
}

std::vector<std::string> backend_type_names() {
  std::vector<std::string> out;
  for (BackendType t : qnn_delegate::EnumValuesQnnExecuTorchBackendType()) out.push_back(backend_type_name(t));
  return out;
}

BackendType resolve_backend_type(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; });
  for (BackendType t : qnn_delegate::EnumValuesQnnExecuTorchBackendType()) {
    if (backend_type_name(t) == lower) return t;
  }
  throw_input_error("unknown backend type '{}' for --backend; valid choices: {}", name,
                    fmt::join(backend_type_names(), ", "));
}

}  // namespace genai::target
