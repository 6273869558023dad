// Builds the compile specs of one QNN delegate: a single CompileSpec "qnn_compile_spec" holding the
// QnnExecuTorchOptions flatbuffer, with upstream's generate_htp/gpu/lpai_compiler_spec +
// generate_qnn_executorch_compiler_spec semantics (log level error unless debug, profile level
// mapping, saver library, and the same rejected combinations, as InputErrors).
//
// Defaults follow what upstream's llama flow passes for a decoder, not the helper functions' own
// defaults: weight sharing ON and shared buffer ON, both switched off by x86 emulation because the
// emulator supports neither (llama.py: use_weight_sharing = shared_buffer = not enable_x86_64).
// NOTE: the option set (src/options, --shared_buffer) defaults shared_buffer OFF, as upstream's
// CLI does; spec_builder_from_options() in src/options maps one onto the other.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "pte/compile_spec.h"
#include "target/qnn_options.h"

namespace genai::target {

// Library recorded in library_path when the QNN saver is on (upstream's saver lib name).
inline constexpr std::string_view kQnnSaverLibrary = "libQnnSaver.so";

class QnnSpecBuilder {
 public:
  // soc_model by name (any case); InputError listing valid SoCs otherwise.
  explicit QnnSpecBuilder(std::string_view soc_model, BackendType backend = BackendType::kHtpBackend);
  QnnSpecBuilder(Chipset soc_model, BackendType backend);

  QnnSpecBuilder& backend(BackendType backend);
  // Target is the x86 emulator: forces weight sharing and shared buffers off.
  QnnSpecBuilder& x86_emulation(bool on);
  QnnSpecBuilder& debug(bool on);  // log level debug instead of error
  QnnSpecBuilder& saver(bool on);
  QnnSpecBuilder& online_prepare(bool on);
  QnnSpecBuilder& dump_intermediate_outputs(bool on);
  // 0 off, 1 basic (deprecated upstream: warns and turns profiling off), 2 detailed, 3 optrace.
  QnnSpecBuilder& profile_level(int level);
  QnnSpecBuilder& shared_buffer(bool on);
  QnnSpecBuilder& is_from_context_binary(bool on);
  QnnSpecBuilder& use_mha2sha(bool on);
  QnnSpecBuilder& op_packages(std::vector<OpPackageInfo> infos);

  // HTP (generate_htp_compiler_spec)
  QnnSpecBuilder& use_fp16(bool on);
  QnnSpecBuilder& use_multi_contexts(bool on);
  QnnSpecBuilder& use_weight_sharing(bool on);  // HTP and GPU; off under x86 emulation
  QnnSpecBuilder& use_dlbc(bool on);
  QnnSpecBuilder& use_slc_allocator(bool on);
  // 0..8 (kHtpDefault .. kHtpBalanced); default 2 = burst. InputError outside the range.
  QnnSpecBuilder& htp_performance_mode(int mode);

  // GPU (generate_gpu_compiler_spec)
  QnnSpecBuilder& gpu_precision(fb::QnnExecuTorchGpuPrecision precision);
  QnnSpecBuilder& gpu_memory_optimizations(bool on);
  QnnSpecBuilder& gpu_node_optimizations(bool on);
  QnnSpecBuilder& gpu_queue_recording(bool on);

  // LPAI (generate_lpai_compiler_spec)
  QnnSpecBuilder& lpai_options(const LpaiBackendOptions& options);

  bool x86_emulation() const { return x86_; }
  const SocInfo& soc() const { return *soc_; }

  // The validated options (InputError for rejected combinations, naming the option and SoC).
  QnnOptions options() const;
  // {CompileSpec{"qnn_compile_spec", encode_qnn_options(options())}}.
  std::vector<CompileSpec> build() const;

 private:
  const SocInfo* soc_;
  BackendType backend_;
  bool x86_ = false;
  bool debug_ = false;
  bool saver_ = false;
  bool online_prepare_ = false;
  bool dump_intermediate_outputs_ = false;
  int profile_level_ = 0;
  bool shared_buffer_ = true;  // ON here, OFF in the option set: see the header comment
  bool is_from_context_binary_ = false;
  bool use_mha2sha_ = false;
  std::vector<OpPackageInfo> op_packages_;
  bool use_fp16_ = false;
  bool use_multi_contexts_ = false;
  bool use_weight_sharing_ = true;
  bool use_dlbc_ = false;
  bool use_slc_allocator_ = false;
  int htp_performance_mode_ = static_cast<int>(fb::QnnExecuTorchHtpPerformanceMode::kHtpBurst);
  GpuBackendOptions gpu_;
  LpaiBackendOptions lpai_;
};

}  // namespace genai::target
