#include <gtest/gtest.h>

#include "core/error.h"
#include "graph/graph.h"
#include "pipeline/engine_proxy.h"
#include "pipeline/exceptions.h"
#include "pipeline/graph_bundle.h"
#include "pipeline/stage_configs.h"
#include "pipeline/stage_names.h"
#include "quant/encoding_set.h"
#include "target/qnn_spec_builder.h"

namespace genai::pipeline {
namespace {

std::shared_ptr<const graph::Graph> a_graph() { return std::make_shared<graph::Graph>("kv_forward", nullptr); }
std::shared_ptr<const quant::EncodingSet> some_encodings() {
  auto e = std::make_shared<quant::EncodingSet>();
  e->recipe = "16a8w";
  return e;
}

std::vector<InputSpec> decode_inputs() {
  return {{"tokens", DType::kI32, {1, 1}}, {"atten_mask", DType::kF32, {1, 1, 1, 128}}, {"input_pos", DType::kI32, {1, 1}}};
}

TEST(StageNames, AllStagesInOrder) {
  EXPECT_EQ(kAllStages.size(), 4u);
  EXPECT_EQ(kAllStages[0], "model_preparation");
  EXPECT_EQ(kAllStages[3], "inference");
  EXPECT_TRUE(is_stage_name("quantization"));
  EXPECT_FALSE(is_stage_name("training"));
  EXPECT_EQ(valid_stage_names(), "compilation, inference, model_preparation, quantization");
}

TEST(EngineProxy, DefaultsToExecuTorchAndRejectsUnknownStages) {
  EngineProxy empty({}, target::BackendType::kHtpBackend);
  EXPECT_EQ(empty.engine("compilation"), EngineType::kExecuTorch);
  EXPECT_EQ(empty.backend_type(), target::BackendType::kHtpBackend);
  EngineProxy one({{"quantization", EngineType::kExecuTorch}}, target::BackendType::kGpuBackend);
  EXPECT_EQ(one.stage_engines().size(), 1u);
  EXPECT_EQ(engine_type_name(one.engine("quantization")), "executorch");
  try {
    EngineProxy bad({{"training", EngineType::kExecuTorch}}, target::BackendType::kHtpBackend);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "Unknown stage 'training'. Valid stages: compilation, inference, model_preparation, quantization");
  }
}

TEST(Exceptions, StageErrorFormatsAndKeepsCauseCode) {
  StageError plain("compilation", "no graphs");
  EXPECT_STREQ(plain.what(), "[compilation] no graphs");
  EXPECT_EQ(plain.stage_name(), "compilation");
  EXPECT_EQ(plain.original_exception(), nullptr);
  EXPECT_EQ(plain.code(), ExitCode::kFailure);
  try {
    throw InputError("bad SoC");
  } catch (...) {
    StageError e("quantization", "recipe failed", std::current_exception());
    EXPECT_STREQ(e.what(), "[quantization] recipe failed (caused by InputError: bad SoC)");
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_THROW(std::rethrow_exception(e.original_exception()), InputError);
  }
  try {
    throw std::out_of_range("index 9");
  } catch (...) {
    StageError e("inference", "decode", std::current_exception());
    EXPECT_STREQ(e.what(), "[inference] decode (caused by out_of_range: index 9)");
  }
  EXPECT_STREQ(EngineNotAvailableError("qnn").what(), "Engine 'qnn' is not available");
  EXPECT_STREQ(EngineNotAvailableError("qnn", "no SDK").what(), "Engine 'qnn' is not available: no SDK");
  EXPECT_EQ(ConfigValidationError("x").code(), ExitCode::kBadInput);
}

TEST(GraphBundle, HoldsEverything) {
  QuantIoDtypes io{{{"atten_mask", DType::kU16}}, {{"logits", DType::kU16}}};
  Metadata meta{{"get_max_seq_len", int64_t{128}}, {"get_logits_scale", 0.25}, {"get_use_kv_cache", true}};
  GraphBundle b(a_graph(), decode_inputs(), meta, io, {{ArtifactKey::kVisionEncoder, {"img.png"}}}, {},
                some_encodings());
  EXPECT_EQ(b.encodings()->recipe, "16a8w");
  EXPECT_TRUE(b.quantized());
  EXPECT_EQ(b.example_inputs().size(), 3u);
  EXPECT_EQ(std::get<int64_t>(b.metadata().at("get_max_seq_len")), 128);
  EXPECT_EQ(b.quant_io_dtypes()->outputs.at("logits"), DType::kU16);
  EXPECT_EQ(b.modality_inputs().at(ArtifactKey::kVisionEncoder).size(), 1u);
  EXPECT_FALSE(b.program_options().alloc_graph_input);
  EXPECT_FALSE(b.program_options().alloc_graph_output);
  GraphBundle unquantized(a_graph(), decode_inputs(), {}, std::nullopt);
  EXPECT_FALSE(unquantized.quantized());
}

TEST(GraphBundle, ChecksOnConstruction) {
  EXPECT_THROW(GraphBundle(nullptr, decode_inputs(), {}, std::nullopt), Failure);
  const QuantIoDtypes complete{{{"tokens", DType::kI32}}, {{"logits", DType::kU16}}};
  EXPECT_NO_THROW(GraphBundle(a_graph(), decode_inputs(), {}, complete, {}, {}, some_encodings()));
  EXPECT_THROW(GraphBundle(a_graph(), decode_inputs(), {}, complete), Failure);  // quantized without encodings
  EXPECT_THROW(GraphBundle(a_graph(), decode_inputs(), {}, QuantIoDtypes{{{"tokens", DType::kI32}}, {}}, {}, {},
                           some_encodings()),
               Failure);
  EXPECT_THROW(GraphBundle(a_graph(), decode_inputs(), {}, QuantIoDtypes{{}, {{"logits", DType::kU16}}}, {}, {},
                           some_encodings()),
               Failure);
  EXPECT_THROW(GraphBundle(a_graph(), decode_inputs(), {},
                           QuantIoDtypes{{{"k_cache_9", DType::kU8}}, {{"logits", DType::kU16}}}, {}, {},
                           some_encodings()),
               Failure);
  auto dup = decode_inputs();
  dup.push_back(dup.front());
  EXPECT_THROW(GraphBundle(a_graph(), dup, {}, std::nullopt), Failure);
  EXPECT_THROW(GraphBundle(a_graph(), {{"x", DType::kF32, {1, -1}}}, {}, std::nullopt), Failure);
  EXPECT_THROW(GraphBundle(a_graph(), {{"", DType::kF32, {1}}}, {}, std::nullopt), Failure);
}

TEST(StageConfigs, EmptyOutputsMeanTheStageDidNotRun) {
  EXPECT_FALSE(ModelPreparationOutputConfig{}.ran());
  EXPECT_FALSE(QuantizationOutputConfig{}.ran());
  EXPECT_FALSE(CompilationOutputConfig{}.ran());
  EXPECT_FALSE(InferenceOutputConfig{}.ran());
  ModelPreparationOutputConfig prep;
  prep.chat_template = "{{ x }}";
  EXPECT_TRUE(prep.ran());
  CompilationOutputConfig out;
  out.artifact_paths[ArtifactKey::kTextDecoder] = "a.pte";
  EXPECT_TRUE(out.ran());
}

TEST(StageConfigs, QuantizationNeedsModelAndCalibration) {
  QuantizationInputConfig in;
  try {
    in.check_ready();
    FAIL();
  } catch (const ConfigValidationError& e) {
    EXPECT_STREQ(e.what(), "[quantization] missing required inputs: model, calibration_data");
  }
}

TEST(StageConfigs, CompilationChecksGraphsAndSpecTarget) {
  CompilationInputConfig in;
  in.soc_model = target::Chipset::SM8650;
  EXPECT_THROW(in.check_ready(), ConfigValidationError);
  in.graphs.emplace(GraphName::kKvForward, GraphBundle(a_graph(), decode_inputs(), {}, std::nullopt));
  EXPECT_EQ(in.artifact_dir, ".");
  EXPECT_NO_THROW(in.check_ready());
  in.compile_specs = target::QnnSpecBuilder("SM8650").build();
  EXPECT_NO_THROW(in.check_ready());
  in.compile_specs = target::QnnSpecBuilder("SM8750").build();
  try {
    in.check_ready();
    FAIL();
  } catch (const ConfigValidationError& e) {
    EXPECT_STREQ(e.what(), "[compilation] compile specs target SM8750 / htp but the stage targets SM8650 / htp");
  }
  in.compile_specs = std::vector<CompileSpec>{{"other", {}}};
  EXPECT_THROW(in.check_ready(), ConfigValidationError);
  in.compile_specs = std::vector<CompileSpec>{{"qnn_compile_spec", {0, 1, 2}}};
  EXPECT_THROW(in.check_ready(), InputError);  // malformed flatbuffer
}

TEST(StageConfigs, InferenceNeedsDecoderAndPrompt) {
  InferenceInputConfig in;
  try {
    in.check_ready();
    FAIL();
  } catch (const ConfigValidationError& e) {
    EXPECT_STREQ(e.what(), "[inference] missing required inputs: artifact_paths[text_decoder], prompt");
  }
  in.artifact_paths[ArtifactKey::kTextDecoder] = "x.pte";
  in.prompt = {"hi"};
  EXPECT_NO_THROW(in.check_ready());
}

}  // namespace
}  // namespace genai::pipeline
