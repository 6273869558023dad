#include "backends/qnn/qnn_provider_options.h"

#include "core/error.h"
#include "target/compile_spec.h"
#include "target/qnn_soc_support.h"
#include "target/soc.h"

namespace genai::backends::qnn {
namespace {

// ONNX Runtime's spelling of the HTP performance modes.
std::string ort_performance_mode(target::fb::QnnExecuTorchHtpPerformanceMode mode) {
  using M = target::fb::QnnExecuTorchHtpPerformanceMode;
  switch (mode) {
    case M::kHtpDefault: return "";
    case M::kHtpSustainedHighPerformance: return "sustained_high_performance";
    case M::kHtpBurst: return "burst";
    case M::kHtpHighPerformance: return "high_performance";
    case M::kHtpPowerSaver: return "power_saver";
    case M::kHtpLowPowerSaver: return "low_power_saver";
    case M::kHtpHighPowerSaver: return "high_power_saver";
    case M::kHtpLowBalanced: return "low_balanced";
    case M::kHtpBalanced: return "balanced";
  }
  return "";
}

}  // namespace

QnnTarget qnn_target_from_specs(const std::vector<CompileSpec>& specs, std::string_view what) {
  const auto options = target::options_from_specs(specs);
  if (!options || !options->htp_options)
    throw_input_error("{}: the compile specs hold no QNN HTP options (key qnn_compile_spec with htp_options)", what);
  QnnTarget t;
  for (const auto& soc : target::soc_table()) {
    if (soc.chipset != options->soc_model) continue;
    t.soc = std::string(soc.name);
    t.binary_soc = std::string(target::qnn_binary_soc_name(soc));
    t.elementwise_one_type = target::qnn_elementwise_needs_one_type(soc);
  }
  if (t.soc.empty()) throw_input_error("{}: the compile specs name no known SoC", what);
  t.arch = static_cast<int>(options->htp_arch);
  const auto& h = *options->htp_options;
  t.provider.soc_model = static_cast<int>(options->soc_model);
  t.provider.htp_arch = t.arch;
  t.provider.vtcm_mb = static_cast<int>(options->vtcm_size_in_mb);
  t.provider.htp_performance_mode = ort_performance_mode(h.performance_mode);
  t.provider.enable_htp_fp16_precision = h.precision == target::fb::QnnExecuTorchHtpPrecision::kHtpFp16;
  t.provider.enable_htp_weight_sharing = h.use_weight_sharing;
  return t;
}

}  // namespace genai::backends::qnn
