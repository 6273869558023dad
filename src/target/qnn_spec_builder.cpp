#include "target/qnn_spec_builder.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"

namespace genai::target {
namespace {

std::string lpai_soc_names() {
  std::string out;
  for (const auto& s : soc_table()) {
    if (!s.lpai) continue;
    if (!out.empty()) out += ", ";
    out += s.name;
  }
  return out;
}

}  // namespace

QnnSpecBuilder::QnnSpecBuilder(std::string_view soc_model, BackendType backend)
    : soc_(&resolve_soc(soc_model)), backend_(backend) {}

QnnSpecBuilder::QnnSpecBuilder(Chipset soc_model, BackendType backend)
    : soc_(&soc_info(soc_model)), backend_(backend) {}

QnnSpecBuilder& QnnSpecBuilder::backend(BackendType b) { backend_ = b; return *this; }
QnnSpecBuilder& QnnSpecBuilder::x86_emulation(bool on) { x86_ = on; return *this; }
QnnSpecBuilder& QnnSpecBuilder::debug(bool on) { debug_ = on; return *this; }
QnnSpecBuilder& QnnSpecBuilder::saver(bool on) { saver_ = on; return *this; }
QnnSpecBuilder& QnnSpecBuilder::online_prepare(bool on) { online_prepare_ = on; return *this; }
QnnSpecBuilder& QnnSpecBuilder::dump_intermediate_outputs(bool on) { dump_intermediate_outputs_ = on; return *this; }
QnnSpecBuilder& QnnSpecBuilder::shared_buffer(bool on) { shared_buffer_ = on; return *this; }
QnnSpecBuilder& QnnSpecBuilder::is_from_context_binary(bool on) { is_from_context_binary_ = on; return *this; }
QnnSpecBuilder& QnnSpecBuilder::use_mha2sha(bool on) { use_mha2sha_ = on; return *this; }
QnnSpecBuilder& QnnSpecBuilder::op_packages(std::vector<OpPackageInfo> infos) { op_packages_ = std::move(infos); return *this; }
QnnSpecBuilder& QnnSpecBuilder::use_fp16(bool on) { use_fp16_ = on; return *this; }
QnnSpecBuilder& QnnSpecBuilder::use_multi_contexts(bool on) { use_multi_contexts_ = on; return *this; }
QnnSpecBuilder& QnnSpecBuilder::use_weight_sharing(bool on) { use_weight_sharing_ = on; return *this; }
QnnSpecBuilder& QnnSpecBuilder::use_dlbc(bool on) { use_dlbc_ = on; return *this; }
QnnSpecBuilder& QnnSpecBuilder::use_slc_allocator(bool on) { use_slc_allocator_ = on; return *this; }
QnnSpecBuilder& QnnSpecBuilder::gpu_precision(fb::QnnExecuTorchGpuPrecision p) { gpu_.precision = p; return *this; }
QnnSpecBuilder& QnnSpecBuilder::gpu_memory_optimizations(bool on) { gpu_.use_memory_optimizations = on; return *this; }
QnnSpecBuilder& QnnSpecBuilder::gpu_node_optimizations(bool on) { gpu_.use_node_optimizations = on; return *this; }
QnnSpecBuilder& QnnSpecBuilder::gpu_queue_recording(bool on) { gpu_.use_queue_recording = on; return *this; }
QnnSpecBuilder& QnnSpecBuilder::lpai_options(const LpaiBackendOptions& o) { lpai_ = o; return *this; }

QnnSpecBuilder& QnnSpecBuilder::profile_level(int level) {
  if (level < 0 || level > 3) {
    throw_input_error("--profile_level {} is not supported; valid choices: 0 (off), 2 (detailed), 3 (optrace)", level);
  }
  profile_level_ = level;
  return *this;
}

QnnSpecBuilder& QnnSpecBuilder::htp_performance_mode(int mode) {
  if (mode < 0 || mode > 8) {
    throw_input_error("--htp_performance_mode {} is out of range; valid choices: 0..8 (2 = burst)", mode);
  }
  htp_performance_mode_ = mode;
  return *this;
}

QnnOptions QnnSpecBuilder::options() const {
  const std::string backend_name = backend_type_name(backend_);
  QnnOptions o;
  o.soc_model = soc_->chipset;
  o.htp_arch = soc_->htp_arch;
  o.vtcm_size_in_mb = soc_->vtcm_mb;
  o.lpai_hardware_version = soc_->lpai;
  o.backend_type = backend_;

  // The emulator has neither weight sharing nor shared (RPC) buffers.
  const bool weight_sharing = use_weight_sharing_ && !x86_;
  switch (backend_) {
    case BackendType::kHtpBackend: {
      HtpBackendOptions h;
      h.precision = use_fp16_ ? fb::QnnExecuTorchHtpPrecision::kHtpFp16 : fb::QnnExecuTorchHtpPrecision::kHtpQuantized;
      h.performance_mode = static_cast<fb::QnnExecuTorchHtpPerformanceMode>(htp_performance_mode_);
      h.use_multi_contexts = use_multi_contexts_;
      h.use_weight_sharing = weight_sharing;
      h.use_dlbc = use_dlbc_;
      h.use_slc_allocator = use_slc_allocator_;
      o.htp_options = h;
      break;
    }
    case BackendType::kGpuBackend: {
      GpuBackendOptions g = gpu_;
      g.use_weight_sharing = weight_sharing;
      o.gpu_options = g;
      break;
    }
    case BackendType::kLpaiBackend:
      o.lpai_options = lpai_;
      break;
    default:
      throw_input_error("--backend {} is not supported for compilation on {}; valid choices: htp, gpu, lpai",
                        backend_name, soc_->name);
  }

  if (online_prepare_ && backend_ == BackendType::kHtpBackend && use_multi_contexts_) {
    throw_input_error(
        "--online_prepare cannot be combined with use_multi_contexts (model sharding) on {}: multiple "
        "contexts only work with offline-prepared context binaries",
        soc_->name);
  }
  if (online_prepare_ && backend_ == BackendType::kLpaiBackend) {
    throw_input_error("--online_prepare is not supported with --backend lpai (SoC {})", soc_->name);
  }
  if (backend_ == BackendType::kLpaiBackend && !soc_->lpai) {
    throw_input_error("--backend lpai needs a SoC with an LPAI block, {} has none; LPAI SoCs: {}", soc_->name,
                      lpai_soc_names());
  }
  if (profile_level_ != 0 && dump_intermediate_outputs_) {
    log::warn("--profile_level and --dump_intermediate_outputs are both set: profiling figures include the dumps");
  }

  o.log_level = debug_ ? fb::QnnExecuTorchLogLevel::kLogLevelDebug : fb::QnnExecuTorchLogLevel::kLogLevelError;
  o.dump_intermediate_outputs = dump_intermediate_outputs_;
  if (saver_) {
    o.library_path = std::string(kQnnSaverLibrary);
    o.saver = true;
    o.saver_output_dir = "saver_output";
  }
  switch (profile_level_) {
    case 3: o.profile_level = fb::QnnExecuTorchProfileLevel::kProfileOptrace; break;
    case 2: o.profile_level = fb::QnnExecuTorchProfileLevel::kProfileDetailed; break;
    case 1:
      log::warn("--profile_level 1 (kProfileBasic) is not supported; profiling is off");
      o.profile_level = fb::QnnExecuTorchProfileLevel::kProfileOff;
      break;
    default: o.profile_level = fb::QnnExecuTorchProfileLevel::kProfileOff; break;
  }
  o.shared_buffer = shared_buffer_ && !x86_;
  o.online_prepare = online_prepare_;
  o.is_from_context_binary = is_from_context_binary_;
  if (!op_packages_.empty()) o.op_package_infos = op_packages_;
  o.use_mha2sha = use_mha2sha_;
  return o;
}

std::vector<CompileSpec> QnnSpecBuilder::build() const {
  return {CompileSpec{kQnnCompileSpecKey, encode_qnn_options(options())}};
}

}  // namespace genai::target
