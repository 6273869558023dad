// Reading QNN options back out of a delegate's compile specs: compilation checks the target of
// what it is handed, and `genai inspect` renders it. The builder (qnn_spec_builder.h) is the
// writing side; both agree with upstream's QnnExecuTorchOptions flatbuffer (schema/qnn_options.fbs).
#pragma once

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "pte/compile_spec.h"
#include "target/qnn_options.h"

namespace genai::target {

// The typed options of the first spec keyed "qnn_compile_spec"; nullopt when there is none.
// Throws InputError when the bytes fail the flatbuffers Verifier or a required table is missing.
std::optional<QnnOptions> options_from_specs(const std::vector<CompileSpec>& specs);

// Every field of QnnOptions as JSON, enums as lower-case names (soc_model "SM8650", htp_arch
// "V75", backend_type "htp", htp_precision "quantized", htp_performance_mode "burst",
// log_level "error", profile_level "off", ...).
nlohmann::json qnn_options_to_json(const QnnOptions& options);

// options_from_specs + qnn_options_to_json (what `genai inspect` prints); nullopt without a
// "qnn_compile_spec" key. Throws InputError on a malformed flatbuffer.
std::optional<nlohmann::json> qnn_options_json_from_specs(const std::vector<CompileSpec>& specs);

}  // namespace genai::target

namespace genai {
using target::qnn_options_json_from_specs;  // callable as genai::qnn_options_json_from_specs too
}  // namespace genai
