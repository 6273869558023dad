// Encoding/decoding QnnExecuTorchOptions, reading specs back, the JSON view, hostile bytes, and
// wire compatibility with flatc's own JSON -> binary path (upstream's serializer).
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "core/error.h"
#include "support/cli_runner.h"
#include "target/compile_spec.h"
#include "target/qnn_spec_builder.h"

namespace genai::target {
namespace {

QnnOptions everything_set() {
  QnnOptions o;
  o.soc_model = Chipset::SM8850;
  o.htp_arch = HtpArch::V81;
  o.vtcm_size_in_mb = 8;
  o.lpai_hardware_version = LpaiVersion::V6;
  o.backend_type = BackendType::kHtpBackend;
  o.htp_options = HtpBackendOptions{123, fb::QnnExecuTorchHtpPerformanceMode::kHtpLowBalanced,
                                    fb::QnnExecuTorchHtpPrecision::kHtpFp16, fb::QnnExecuTorchHtpPdSession::kHtpSignedPd,
                                    false, true, false, true, true, true};
  o.gpu_options = GpuBackendOptions{fb::QnnExecuTorchGpuPerformanceMode::kGpuPerfHintLow,
                                    fb::QnnExecuTorchGpuPrecision::kGpuPrecisionHybrid, false, true, false, true};
  o.lpai_options = LpaiBackendOptions{30, 5, fb::QnnExecuTorchLpaiClientPerf::kNonRealTime,
                                      fb::QnnExecuTorchLpaiCoreAffinity::kHard, 0x3, fb::QnnExecuTorchLpaiTargetEnv::kAdsp};
  o.library_path = "libX.so";
  o.log_level = fb::QnnExecuTorchLogLevel::kLogLevelVerbose;
  o.online_prepare = true;
  o.dump_intermediate_outputs = true;
  o.profile_level = fb::QnnExecuTorchProfileLevel::kProfileDetailed;
  o.shared_buffer = true;
  o.is_from_context_binary = true;
  o.saver = true;
  o.saver_output_dir = "out";
  o.op_package_infos = std::vector<OpPackageInfo>{{"a", "b", "c", fb::QnnExecuTorchOpPackageTarget::CPU, "d", "e",
                                                    fb::QnnExecuTorchOpPackagePlatform::X86_64}};
  o.use_mha2sha = true;
  return o;
}

TEST(QnnOptionsCodec, RoundTripsEveryField) {
  const QnnOptions o = everything_set();
  EXPECT_EQ(decode_qnn_options(encode_qnn_options(o)), o);
}

TEST(QnnOptionsCodec, AbsentFieldsReadAsSchemaDefaults) {
  QnnOptions o;  // dataclass defaults: use_conv_hmx etc. only matter when written
  o.soc_model = Chipset::SM8650;
  o.library_path.reset();
  o.saver_output_dir.reset();
  o.op_package_infos.reset();
  const QnnOptions d = decode_qnn_options(encode_qnn_options(o));
  EXPECT_EQ(d.library_path, std::nullopt);
  EXPECT_EQ(d.saver_output_dir, std::nullopt);
  EXPECT_EQ(d.op_package_infos, std::nullopt);
  EXPECT_EQ(d.log_level, fb::QnnExecuTorchLogLevel::kLogOff);
  EXPECT_EQ(d, o);
}

TEST(QnnOptionsCodec, SpecsWithoutQnnKeyGiveNullopt) {
  EXPECT_EQ(options_from_specs({}), std::nullopt);
  EXPECT_EQ(qnn_options_json_from_specs({CompileSpec{"other", {1, 2, 3}}}), std::nullopt);
  // Other keys are skipped (upstream ignores them with a warning).
  auto specs = QnnSpecBuilder("SM8650").build();
  specs.insert(specs.begin(), CompileSpec{"other", {1, 2, 3}});
  EXPECT_TRUE(options_from_specs(specs).has_value());
}

TEST(QnnOptionsCodec, JsonView) {
  QnnSpecBuilder b("SM8650");
  b.x86_emulation(true).use_mha2sha(true);
  const auto j = qnn_options_json_from_specs(b.build());
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ((*j)["soc_model"], "SM8650");
  EXPECT_EQ((*j)["htp_arch"], "V75");
  EXPECT_EQ((*j)["vtcm_mb"], 8);
  EXPECT_EQ((*j)["backend_type"], "htp");
  EXPECT_EQ((*j)["htp_precision"], "quantized");
  EXPECT_EQ((*j)["htp_performance_mode"], "burst");
  EXPECT_EQ((*j)["use_weight_sharing"], false);
  EXPECT_EQ((*j)["use_multi_contexts"], false);
  EXPECT_EQ((*j)["shared_buffer"], false);
  EXPECT_EQ((*j)["online_prepare"], false);
  EXPECT_EQ((*j)["log_level"], "error");
  EXPECT_EQ((*j)["profile_level"], "off");
  EXPECT_EQ((*j)["use_mha2sha"], true);
  EXPECT_EQ((*j)["use_conv_hmx"], true);
  EXPECT_EQ((*j)["saver_output_dir"], "saver_output");
  EXPECT_EQ((*j)["library_path"], "");
  EXPECT_TRUE((*j)["gpu_options"].is_null());
  const auto all = qnn_options_to_json(everything_set());
  EXPECT_EQ(all["htp_performance_mode"], "low_balanced");
  EXPECT_EQ(all["htp_precision"], "fp16");
  EXPECT_EQ(all["htp_pd_session"], "signed_pd");
  EXPECT_EQ(all["log_level"], "verbose");
  EXPECT_EQ(all["profile_level"], "detailed");
  EXPECT_EQ(all["lpai_hardware_version"], "V6");
  EXPECT_EQ(all["gpu_options"]["precision"], "hybrid");
  EXPECT_EQ(all["gpu_options"]["performance_mode"], "low");
  EXPECT_EQ(all["lpai_options"]["client_perf_type"], "non_real_time");
  EXPECT_EQ(all["lpai_options"]["target_env"], "adsp");
  EXPECT_EQ(all["op_package_infos"][0]["platform"], "x86_64");
  EXPECT_EQ(all["op_package_infos"][0]["target"], "cpu");
}

TEST(QnnOptionsCodec, MalformedBytesAreInputErrors) {
  EXPECT_THROW(qnn_options_json_from_specs({CompileSpec{"qnn_compile_spec", {}}}), InputError);
  EXPECT_THROW(qnn_options_json_from_specs({CompileSpec{"qnn_compile_spec", {1, 2, 3, 4, 5, 6, 7, 8}}}), InputError);
  const auto good = QnnSpecBuilder("SM8650").build()[0].value;
  // Every truncation either fails verification or (never) decodes; none may crash.
  for (size_t n = 0; n < good.size(); ++n) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + n);
    EXPECT_THROW(decode_qnn_options(cut), InputError) << n;
  }
  // Random byte flips: decode or InputError, nothing else.
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    auto bad = good;
    for (int k = 0; k < 3; ++k) bad[rng() % bad.size()] = static_cast<uint8_t>(rng());
    try {
      const auto j = qnn_options_json_from_specs({CompileSpec{"qnn_compile_spec", bad}});
      EXPECT_FALSE(j->dump().empty());
    } catch (const InputError&) {
    }
  }
}

TEST(QnnOptionsCodec, StringsMustBeUtf8) {
  QnnOptions o;
  o.saver_output_dir = "sortie/\xC3\xA9t\xC3\xA9";  // "été": valid UTF-8 survives
  EXPECT_EQ(decode_qnn_options(encode_qnn_options(o)).saver_output_dir, o.saver_output_dir);
  for (const char* bad : {"\xFF", "a\xC3", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80"}) {
    o.library_path = bad;
    try {
      decode_qnn_options(encode_qnn_options(o));
      FAIL() << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("library_path"), std::string::npos);
    }
  }
}

TEST(QnnOptionsCodec, MissingRequiredTablesAreInputErrors) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(fb::CreateQnnExecuTorchOptions(fbb));
  std::vector<uint8_t> bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  try {
    decode_qnn_options(bytes);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("soc_info"), std::string::npos);
  }
}

// Upstream serializes with `flatc --binary` from the dataclass JSON. Feed flatc the JSON of the
// x86 stories decoder spec and check our decoder reads it exactly as our builder's options, and
// that both buffers carry the same fields.
TEST(QnnOptionsCodec, WireCompatibleWithFlatcJsonPath) {
  genai::testing::TempDir dir;
  const std::string json_path = dir.file("spec.json");
  {
    std::ofstream f(json_path);
    f << R"({"soc_info": {"soc_model": 57, "htp_info": {"htp_arch": 75, "vtcm_size_in_mb": 8}},
            "backend_options": {"backend_type": 2, "htp_options": {"max_sf_buf_size": 0, "performance_mode": 2,
              "precision": 0, "pd_session": 0, "use_conv_hmx": true, "use_dlbc": false, "use_fold_relu": true,
              "use_multi_contexts": false, "use_weight_sharing": false, "use_slc_allocator": false}},
            "library_path": "", "log_level": 1, "online_prepare": false, "dump_intermediate_outputs": false,
            "profile_level": 0, "shared_buffer": false, "is_from_context_binary": false, "saver": false,
            "saver_output_dir": "saver_output", "op_package_options": {"op_package_infos": []},
            "use_mha2sha": true})";
  }
  const auto r = genai::testing::run_process(
      {"flatc", "--binary", "-o", dir.path(), std::string(GENAI_SOURCE_DIR) + "/schema/qnn_options.fbs", json_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(dir.file("spec.bin"), std::ios::binary);
  std::vector<uint8_t> flatc_bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(flatc_bytes.empty());

  QnnSpecBuilder b("SM8650");
  b.x86_emulation(true).use_mha2sha(true);
  EXPECT_EQ(decode_qnn_options(flatc_bytes), b.options());

  const auto ours = b.build()[0].value;
  auto fields = [](const std::vector<uint8_t>& bytes) {
    const auto* t = reinterpret_cast<const flatbuffers::Table*>(fb::GetQnnExecuTorchOptions(bytes.data()));
    std::vector<bool> present;
    for (flatbuffers::voffset_t id = 0; id < 13; ++id) present.push_back(t->GetOptionalFieldOffset(4 + 2 * id) != 0);
    return present;
  };
  EXPECT_EQ(fields(ours), fields(flatc_bytes));
}

}  // namespace
}  // namespace genai::target
