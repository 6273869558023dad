// QnnExecuTorchOptions as a plain value type, and its flatbuffer encoding.
//
// Member defaults are upstream's Python dataclass defaults (use_conv_hmx = true, GPU precision
// user-provided, LPAI fps 1, saver_output_dir "saver_output", ...), which differ from the *schema*
// defaults (all zero/false): the encoder writes every field whose value differs from the schema
// default and omits the rest, as flatc --binary does for upstream's JSON, so the bytes decode the
// same on both sides. Strings are written whenever present (even ""), as upstream writes them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "schema/qnn_options_generated.h"
#include "target/backend_type.h"
#include "target/soc.h"

namespace genai::target {

namespace fb = qnn_delegate;

struct HtpBackendOptions {
  int32_t max_sf_buf_size = 0;
  fb::QnnExecuTorchHtpPerformanceMode performance_mode = fb::QnnExecuTorchHtpPerformanceMode::kHtpDefault;
  fb::QnnExecuTorchHtpPrecision precision = fb::QnnExecuTorchHtpPrecision::kHtpQuantized;
  fb::QnnExecuTorchHtpPdSession pd_session = fb::QnnExecuTorchHtpPdSession::kHtpUnsignedPd;
  bool use_conv_hmx = true;
  bool use_dlbc = false;
  bool use_fold_relu = true;
  bool use_multi_contexts = false;
  bool use_weight_sharing = false;
  bool use_slc_allocator = false;
  bool operator==(const HtpBackendOptions&) const = default;
};

struct GpuBackendOptions {
  fb::QnnExecuTorchGpuPerformanceMode performance_mode = fb::QnnExecuTorchGpuPerformanceMode::kGpuPerfHintHigh;
  fb::QnnExecuTorchGpuPrecision precision = fb::QnnExecuTorchGpuPrecision::kGpuPrecisionUserProvided;
  bool use_memory_optimizations = true;
  bool use_node_optimizations = true;
  bool use_queue_recording = true;
  bool use_weight_sharing = false;
  bool operator==(const GpuBackendOptions&) const = default;
};

struct LpaiBackendOptions {
  int32_t fps = 1;
  int32_t ftrt_ratio = 10;
  fb::QnnExecuTorchLpaiClientPerf client_perf_type = fb::QnnExecuTorchLpaiClientPerf::kRealTime;
  fb::QnnExecuTorchLpaiCoreAffinity affinity = fb::QnnExecuTorchLpaiCoreAffinity::kSoft;
  uint32_t core_selection = 0;  // bit mask; all-0 and all-1 both mean "any core"
  fb::QnnExecuTorchLpaiTargetEnv target_env = fb::QnnExecuTorchLpaiTargetEnv::kArm;
  bool operator==(const LpaiBackendOptions&) const = default;
};

struct OpPackageInfo {
  std::string op_package_name;
  std::string op_package_path;
  std::string interface_provider;
  fb::QnnExecuTorchOpPackageTarget target = fb::QnnExecuTorchOpPackageTarget::UNKNOWN;
  std::string custom_op_name;
  std::string qnn_op_type_name;
  fb::QnnExecuTorchOpPackagePlatform platform = fb::QnnExecuTorchOpPackagePlatform::UNKNOWN;
  bool operator==(const OpPackageInfo&) const = default;
};

struct QnnOptions {
  // soc_info
  Chipset soc_model = Chipset::UNKNOWN_SM;
  HtpArch htp_arch = HtpArch::NONE;
  uint32_t vtcm_size_in_mb = 0;
  std::optional<LpaiVersion> lpai_hardware_version;  // lpai_info; absent when the SoC has none
  // backend_options
  BackendType backend_type = BackendType::kUndefinedBackend;
  std::optional<HtpBackendOptions> htp_options;
  std::optional<GpuBackendOptions> gpu_options;
  std::optional<LpaiBackendOptions> lpai_options;
  // root
  std::optional<std::string> library_path = std::string();
  fb::QnnExecuTorchLogLevel log_level = fb::QnnExecuTorchLogLevel::kLogOff;
  bool online_prepare = false;
  bool dump_intermediate_outputs = false;
  fb::QnnExecuTorchProfileLevel profile_level = fb::QnnExecuTorchProfileLevel::kProfileOff;
  bool shared_buffer = false;
  bool is_from_context_binary = false;
  bool saver = false;
  std::optional<std::string> saver_output_dir = std::string("saver_output");
  // Upstream's dataclass default is an empty op-package table, which its JSON path writes as a
  // table holding an empty vector; nullopt = the table is absent.
  std::optional<std::vector<OpPackageInfo>> op_package_infos = std::vector<OpPackageInfo>();
  bool use_mha2sha = false;
  bool operator==(const QnnOptions&) const = default;
};

// The root-table flatbuffer (no file identifier).
std::vector<uint8_t> encode_qnn_options(const QnnOptions& options);
// Verifies the bytes first; InputError (naming `what`) when they are not a valid
// QnnExecuTorchOptions or soc_info / backend_options are missing. Absent fields read as schema
// defaults (0 / false / first enum), absent strings as nullopt.
QnnOptions decode_qnn_options(std::span<const uint8_t> bytes, std::string_view what = "qnn_compile_spec");

}  // namespace genai::target
