// QNN backend types ("htp", "gpu", "lpai", "dsp", "undefined"). The name table is derived from the
// schema enum itself (flatc's EnumValues/EnumName), never a second hand-written list.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "schema/qnn_options_generated.h"

namespace genai::target {

using BackendType = qnn_delegate::QnnExecuTorchBackendType;

// "htp" for kHtpBackend, "undefined" for kUndefinedBackend (upstream's str()).
std::string backend_type_name(BackendType type);
// Every backend type name, in enum order.
std::vector<std::string> backend_type_names();
// Any letter case; InputError naming --backend and the valid choices otherwise.
BackendType resolve_backend_type(std::string_view name);

}  // namespace genai::target
