#include "target/qnn_spec_builder.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "target/compile_spec.h"

namespace genai::target {
namespace {

using fb::QnnExecuTorchHtpPerformanceMode;
using fb::QnnExecuTorchLogLevel;
using fb::QnnExecuTorchProfileLevel;

// The decoder spec of upstream's x86 stories flow: htp(use_fp16=False, use_multi_contexts=False,
// use_weight_sharing=not x86) + qnn(shared_buffer=not x86, use_mha2sha=True, online_prepare=False).
QnnSpecBuilder x86_stories_builder() {
  QnnSpecBuilder b("SM8650", BackendType::kHtpBackend);
  b.x86_emulation(true).use_fp16(false).use_mha2sha(true).online_prepare(false);
  return b;
}

TEST(QnnSpecBuilder, X86StoriesFlowDecodesToUpstreamValues) {
  const auto specs = x86_stories_builder().build();
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].key, "qnn_compile_spec");
  const auto o = options_from_specs(specs);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->soc_model, Chipset::SM8650);
  EXPECT_EQ(o->htp_arch, HtpArch::V75);
  EXPECT_EQ(o->vtcm_size_in_mb, 8u);
  EXPECT_FALSE(o->lpai_hardware_version.has_value());
  EXPECT_EQ(o->backend_type, BackendType::kHtpBackend);
  EXPECT_EQ(o->log_level, QnnExecuTorchLogLevel::kLogLevelError);
  ASSERT_TRUE(o->htp_options.has_value());
  EXPECT_EQ(o->htp_options->performance_mode, QnnExecuTorchHtpPerformanceMode::kHtpBurst);
  EXPECT_EQ(o->htp_options->precision, fb::QnnExecuTorchHtpPrecision::kHtpQuantized);
  EXPECT_TRUE(o->htp_options->use_conv_hmx);
  EXPECT_TRUE(o->htp_options->use_fold_relu);
  EXPECT_FALSE(o->htp_options->use_weight_sharing);
  EXPECT_FALSE(o->htp_options->use_multi_contexts);
  EXPECT_FALSE(o->shared_buffer);
  EXPECT_TRUE(o->use_mha2sha);
  EXPECT_FALSE(o->online_prepare);
  EXPECT_EQ(o->profile_level, QnnExecuTorchProfileLevel::kProfileOff);
  EXPECT_EQ(o->library_path, std::optional<std::string>(""));
  EXPECT_EQ(o->saver_output_dir, std::optional<std::string>("saver_output"));
  EXPECT_FALSE(o->gpu_options.has_value());
  EXPECT_FALSE(o->lpai_options.has_value());
}

// Field presence in the vtables: schema defaults (0 / false / first enum) omitted, strings and
// non-default values written.
TEST(QnnSpecBuilder, X86StoriesFlowVtableFieldPresence) {
  const auto specs = x86_stories_builder().build();
  const auto* root = fb::GetQnnExecuTorchOptions(specs[0].value.data());
  using R = fb::QnnExecuTorchOptions;
  auto present = [](const flatbuffers::Table* t, flatbuffers::voffset_t field) { return t->GetOptionalFieldOffset(field) != 0; };
  const auto* rt = reinterpret_cast<const flatbuffers::Table*>(root);
  EXPECT_TRUE(present(rt, R::VT_SOC_INFO));
  EXPECT_TRUE(present(rt, R::VT_BACKEND_OPTIONS));
  EXPECT_TRUE(present(rt, R::VT_LIBRARY_PATH));      // "" is written (non-null string)
  EXPECT_TRUE(present(rt, R::VT_LOG_LEVEL));         // error = 1
  EXPECT_FALSE(present(rt, R::VT_ONLINE_PREPARE));
  EXPECT_FALSE(present(rt, R::VT_DUMP_INTERMEDIATE_OUTPUTS));
  EXPECT_FALSE(present(rt, R::VT_PROFILE_LEVEL));
  EXPECT_FALSE(present(rt, R::VT_SHARED_BUFFER));
  EXPECT_FALSE(present(rt, R::VT_IS_FROM_CONTEXT_BINARY));
  EXPECT_FALSE(present(rt, R::VT_SAVER));
  EXPECT_TRUE(present(rt, R::VT_SAVER_OUTPUT_DIR));
  EXPECT_TRUE(present(rt, R::VT_OP_PACKAGE_OPTIONS));  // upstream's empty table
  EXPECT_TRUE(present(rt, R::VT_USE_MHA2SHA));
  EXPECT_EQ(root->op_package_options()->op_package_infos()->size(), 0u);

  const auto* soc = reinterpret_cast<const flatbuffers::Table*>(root->soc_info());
  EXPECT_TRUE(present(soc, fb::SocInfo::VT_SOC_MODEL));
  EXPECT_TRUE(present(soc, fb::SocInfo::VT_HTP_INFO));
  EXPECT_FALSE(present(soc, fb::SocInfo::VT_LPAI_INFO));
  const auto* htp_info = reinterpret_cast<const flatbuffers::Table*>(root->soc_info()->htp_info());
  EXPECT_TRUE(present(htp_info, fb::HtpInfo::VT_HTP_ARCH));
  EXPECT_TRUE(present(htp_info, fb::HtpInfo::VT_VTCM_SIZE_IN_MB));

  const auto* backend = reinterpret_cast<const flatbuffers::Table*>(root->backend_options());
  using B = fb::QnnExecuTorchBackendOptions;
  EXPECT_TRUE(present(backend, B::VT_BACKEND_TYPE));
  EXPECT_TRUE(present(backend, B::VT_HTP_OPTIONS));
  EXPECT_FALSE(present(backend, B::VT_GPU_OPTIONS));
  EXPECT_FALSE(present(backend, B::VT_LPAI_OPTIONS));

  const auto* htp = reinterpret_cast<const flatbuffers::Table*>(root->backend_options()->htp_options());
  using H = fb::QnnExecuTorchHtpBackendOptions;
  EXPECT_FALSE(present(htp, H::VT_MAX_SF_BUF_SIZE));
  EXPECT_TRUE(present(htp, H::VT_PERFORMANCE_MODE));
  EXPECT_FALSE(present(htp, H::VT_PRECISION));
  EXPECT_FALSE(present(htp, H::VT_PD_SESSION));
  EXPECT_TRUE(present(htp, H::VT_USE_CONV_HMX));
  EXPECT_FALSE(present(htp, H::VT_USE_DLBC));
  EXPECT_TRUE(present(htp, H::VT_USE_FOLD_RELU));
  EXPECT_FALSE(present(htp, H::VT_USE_MULTI_CONTEXTS));
  EXPECT_FALSE(present(htp, H::VT_USE_WEIGHT_SHARING));
  EXPECT_FALSE(present(htp, H::VT_USE_SLC_ALLOCATOR));
}

TEST(QnnSpecBuilder, NoFileIdentifierAndRootOffsetFirst) {
  const auto bytes = x86_stories_builder().build()[0].value;
  ASSERT_GE(bytes.size(), 8u);
  const uint32_t root = bytes[0] | (bytes[1] << 8) | (bytes[2] << 16) | (static_cast<uint32_t>(bytes[3]) << 24);
  EXPECT_LT(root, bytes.size());
  // Without an identifier the root table follows the 4-byte offset directly (aligned), never at 8
  // with an identifier in bytes 4..7: the verifier accepts it with no identifier requested.
  flatbuffers::Verifier v(bytes.data(), bytes.size());
  EXPECT_TRUE(v.VerifyBuffer<fb::QnnExecuTorchOptions>(nullptr));
}

TEST(QnnSpecBuilder, DeviceDefaultsShareWeightsAndBuffers) {
  // Builder defaults follow the decoder path on a device: shared buffer ON (the option set's
  // --shared_buffer defaults OFF: pinned in tests/options), weight sharing ON.
  const auto o = QnnSpecBuilder("SM8650").use_mha2sha(true).options();
  EXPECT_TRUE(o.shared_buffer);
  EXPECT_TRUE(o.htp_options->use_weight_sharing);
  EXPECT_FALSE(QnnSpecBuilder("SM8650").x86_emulation());
}

TEST(QnnSpecBuilder, X86EmulationOverridesExplicitRequests) {
  auto b = QnnSpecBuilder("SM8650");
  b.use_weight_sharing(true).shared_buffer(true).x86_emulation(true);
  const auto o = b.options();
  EXPECT_FALSE(o.shared_buffer);
  EXPECT_FALSE(o.htp_options->use_weight_sharing);
  const auto gpu = QnnSpecBuilder("SM8650", BackendType::kGpuBackend).x86_emulation(true).options();
  EXPECT_FALSE(gpu.gpu_options->use_weight_sharing);
  EXPECT_FALSE(gpu.shared_buffer);
}

TEST(QnnSpecBuilder, Fp16AndPerformanceMode) {
  const auto o = QnnSpecBuilder("SM8750").use_fp16(true).htp_performance_mode(8).options();
  EXPECT_EQ(o.htp_options->precision, fb::QnnExecuTorchHtpPrecision::kHtpFp16);
  EXPECT_EQ(o.htp_options->performance_mode, QnnExecuTorchHtpPerformanceMode::kHtpBalanced);
  EXPECT_EQ(o.htp_arch, HtpArch::V79);
  QnnSpecBuilder b("SM8750");
  EXPECT_THROW(b.htp_performance_mode(9), InputError);
  EXPECT_THROW(b.htp_performance_mode(-1), InputError);
}

TEST(QnnSpecBuilder, LogLevelErrorUnlessDebug) {
  EXPECT_EQ(QnnSpecBuilder("SM8650").options().log_level, QnnExecuTorchLogLevel::kLogLevelError);
  EXPECT_EQ(QnnSpecBuilder("SM8650").debug(true).options().log_level, QnnExecuTorchLogLevel::kLogLevelDebug);
}

TEST(QnnSpecBuilder, ProfileLevelMapping) {
  auto level = [](int l) { return QnnSpecBuilder("SM8650").profile_level(l).options().profile_level; };
  EXPECT_EQ(level(0), QnnExecuTorchProfileLevel::kProfileOff);
  EXPECT_EQ(level(1), QnnExecuTorchProfileLevel::kProfileOff);  // basic: deprecated upstream
  EXPECT_EQ(level(2), QnnExecuTorchProfileLevel::kProfileDetailed);
  EXPECT_EQ(level(3), QnnExecuTorchProfileLevel::kProfileOptrace);
  QnnSpecBuilder b("SM8650");
  EXPECT_THROW(b.profile_level(4), InputError);
}

TEST(QnnSpecBuilder, SaverSetsLibraryAndDir) {
  const auto o = QnnSpecBuilder("SM8650").saver(true).options();
  EXPECT_TRUE(o.saver);
  EXPECT_EQ(o.library_path, std::optional<std::string>(std::string(kQnnSaverLibrary)));
  EXPECT_EQ(o.saver_output_dir, std::optional<std::string>("saver_output"));
}

TEST(QnnSpecBuilder, GpuSpec) {
  const auto specs = QnnSpecBuilder("SM8650", BackendType::kGpuBackend).build();
  const auto o = options_from_specs(specs);
  ASSERT_TRUE(o && o->gpu_options);
  EXPECT_FALSE(o->htp_options.has_value());
  EXPECT_EQ(o->gpu_options->precision, fb::QnnExecuTorchGpuPrecision::kGpuPrecisionUserProvided);
  EXPECT_EQ(o->gpu_options->performance_mode, fb::QnnExecuTorchGpuPerformanceMode::kGpuPerfHintHigh);
  EXPECT_TRUE(o->gpu_options->use_memory_optimizations);
  EXPECT_TRUE(o->gpu_options->use_node_optimizations);
  EXPECT_TRUE(o->gpu_options->use_queue_recording);
  EXPECT_TRUE(o->gpu_options->use_weight_sharing);
  const auto fp16 = QnnSpecBuilder("SM8650", BackendType::kGpuBackend)
                        .gpu_precision(fb::QnnExecuTorchGpuPrecision::kGpuPrecisionFp16)
                        .gpu_queue_recording(false)
                        .options();
  EXPECT_EQ(fp16.gpu_options->precision, fb::QnnExecuTorchGpuPrecision::kGpuPrecisionFp16);
  EXPECT_FALSE(fp16.gpu_options->use_queue_recording);
}

TEST(QnnSpecBuilder, LpaiOnLpaiSoc) {
  const auto o = options_from_specs(QnnSpecBuilder("SM8850", BackendType::kLpaiBackend).build());
  ASSERT_TRUE(o && o->lpai_options);
  EXPECT_EQ(o->lpai_hardware_version, std::optional<LpaiVersion>(LpaiVersion::V6));
  EXPECT_EQ(o->lpai_options->fps, 1);
  EXPECT_EQ(o->lpai_options->ftrt_ratio, 10);
  EXPECT_EQ(o->lpai_options->client_perf_type, fb::QnnExecuTorchLpaiClientPerf::kRealTime);
  EXPECT_EQ(o->lpai_options->affinity, fb::QnnExecuTorchLpaiCoreAffinity::kSoft);
  EXPECT_EQ(o->lpai_options->target_env, fb::QnnExecuTorchLpaiTargetEnv::kArm);
  // An LPAI SoC carries lpai_info whatever the backend (upstream copies the SoC table entry).
  EXPECT_TRUE(QnnSpecBuilder("SAR2230P").options().lpai_hardware_version.has_value());
}

std::string error_of(const QnnSpecBuilder& b) {
  try {
    b.options();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(QnnSpecBuilder, RejectsOnlinePrepareWithMultiContexts) {
  auto m = error_of(QnnSpecBuilder("SM8650").online_prepare(true).use_multi_contexts(true));
  EXPECT_NE(m.find("--online_prepare"), std::string::npos) << m;
  EXPECT_NE(m.find("use_multi_contexts"), std::string::npos) << m;
  EXPECT_NE(m.find("SM8650"), std::string::npos) << m;
  // Each alone is fine.
  EXPECT_NO_THROW(QnnSpecBuilder("SM8650").online_prepare(true).options());
  EXPECT_NO_THROW(QnnSpecBuilder("SM8650").use_multi_contexts(true).options());
}

TEST(QnnSpecBuilder, RejectsOnlinePrepareWithLpai) {
  auto m = error_of(QnnSpecBuilder("SM8850", BackendType::kLpaiBackend).online_prepare(true));
  EXPECT_NE(m.find("--online_prepare"), std::string::npos) << m;
  EXPECT_NE(m.find("lpai"), std::string::npos) << m;
  EXPECT_NE(m.find("SM8850"), std::string::npos) << m;
}

TEST(QnnSpecBuilder, RejectsLpaiOnSocWithoutLpai) {
  auto m = error_of(QnnSpecBuilder("SM8650", BackendType::kLpaiBackend));
  EXPECT_NE(m.find("SM8650"), std::string::npos) << m;
  EXPECT_NE(m.find("SM8850"), std::string::npos) << m;
  EXPECT_NE(m.find("SAR2230P"), std::string::npos) << m;
}

TEST(QnnSpecBuilder, RejectsBackendsWithoutCompiler) {
  for (auto b : {BackendType::kDspBackend, BackendType::kUndefinedBackend}) {
    auto m = error_of(QnnSpecBuilder("SM8650", b));
    EXPECT_NE(m.find("--backend"), std::string::npos) << m;
    EXPECT_NE(m.find("htp, gpu, lpai"), std::string::npos) << m;
  }
}

TEST(QnnSpecBuilder, UnknownSocIsInputError) { EXPECT_THROW(QnnSpecBuilder("SM1234"), InputError); }

TEST(QnnSpecBuilder, BuildIsDeterministic) {
  EXPECT_EQ(x86_stories_builder().build(), x86_stories_builder().build());
}

TEST(QnnSpecBuilder, OpPackagesWrittenOnlyWhenGiven) {
  OpPackageInfo info{"pkg", "/lib/pkg.so", "provider", fb::QnnExecuTorchOpPackageTarget::HTP, "my_op", "MyOp",
                     fb::QnnExecuTorchOpPackagePlatform::AARCH64_ANDROID};
  const auto o = options_from_specs(QnnSpecBuilder("SM8650").op_packages({info}).build());
  ASSERT_TRUE(o && o->op_package_infos);
  ASSERT_EQ(o->op_package_infos->size(), 1u);
  EXPECT_EQ(o->op_package_infos->front(), info);
}

}  // namespace
}  // namespace genai::target
