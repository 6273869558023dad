// The built-in strategies end to end, in process, on a tiny synthetic checkpoint: the quantized
// HTP path, the float paths with quantization skipped (fp16 HTP, GPU), --compile_only then
// --pre_gen_pte, stages run alone, and failures that keep what earlier stages wrote.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "model/synth.h"
#include "orchestrator/option_readers.h"
#include "quant/quantize.h"
#include "orchestrator/builtin_strategies.h"
#include "orchestrator/genai_pipeline.h"
#include "orchestrator/pipeline_report.h"
#include "pipeline/exceptions.h"
#include "support/cli_runner.h"
#include "support/process_checks.h"
#include "fault_injection.h"

namespace genai::orchestrator {
namespace {

namespace fs = std::filesystem;
using genai::testing::TempDir;

class BuiltinStrategies : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    SynthRequest req;
    req.shape = "tiny";
    req.seed = 3;
    req.out = dir_->file("tiny.gguf");
    write_synth_model(req);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static options::OptionValues base_options(const std::string& artifact) {
    options::OptionValues v;
    v.set("checkpoint", dir_->file("tiny.gguf"));
    v.set("soc_model", std::string("SM8650"));
    v.set("enable_x86_64", true);
    v.set("max_seq_len", int64_t{64});
    v.set("prefill_ar_len", int64_t{16});
    v.set("max_new_tokens", int64_t{6});
    v.set("temperature", 0.0);
    v.set("artifact", artifact);
    v.set_from_text("prompt", {"Once upon a time"}, options::OptionSource::kCommandLine);
    return v;
  }

  // `fault_stage`: a stage made to fail through the test seam (fault_injection.h).
  static PipelineResult run(const options::OptionValues& v, PipelineResult* partial = nullptr,
                            std::string_view fault_stage = {}) {
    StrategyRegistry registry;
    register_builtin_strategies(registry);
    if (!fault_stage.empty()) testing::inject_fault(registry, fault_stage);
    const SkipPlan plan = plan_skipped_stages(v);
    auto b = pipeline::PipelineContext::builder();
    b.with_model(v.get_optional_string("checkpoint").value_or("prebuilt"))
        .with_soc(v.get_string("soc_model"))
        .with_prompt(v.get_list("prompt"))
        .with_artifact_dir(v.get_string("artifact"))
        .with_extra_options(v);
    const auto pipe = GenAIPipeline::from_proxy(
        pipeline::EngineProxy({}, target::resolve_backend_type(v.get_string("backend"))), registry, plan);
    PipelineResult local;
    PipelineResult& r = partial ? *partial : local;
    pipe.invoke(b.build(), r);
    return r;
  }

  static TempDir* dir_;
};
TempDir* BuiltinStrategies::dir_ = nullptr;

TEST_F(BuiltinStrategies, QuantizedHtpRunWritesProgramsAndGenerates) {
  TempDir out;
  const PipelineResult r = run(base_options(out.path()));
  EXPECT_TRUE(fs::exists(out.file("text_decoder.pte")));
  EXPECT_TRUE(fs::exists(out.file("manifest.json")));
  EXPECT_TRUE(fs::exists(out.file("decode_qdq.json")));
  EXPECT_EQ(r.compilation.artifact_paths.at(pipeline::ArtifactKey::kTextDecoder), fs::path(out.file("text_decoder.pte")));
  EXPECT_FALSE(r.inference.tokens.empty());
  EXPECT_LE(r.inference.tokens.size(), 6u);
  const nlohmann::json j = pipeline_report_json(r);
  EXPECT_EQ(j["stages"]["compilation"]["program"], "quantized");
  EXPECT_GT(j["memory"]["planned_bytes"].get<uint64_t>(), 0u);
  EXPECT_TRUE(j["eval"]["sqnr_db"].is_number());
  // Measured: 22.0 dB logits SQNR for the stories default (16a4w) on this tiny model.
  EXPECT_GT(j["eval"]["sqnr_db"].get<double>(), 18.0);
  EXPECT_NEAR(j["eval"]["perplexity_quantized"].get<double>(), j["eval"]["perplexity_float"].get<double>(),
              0.02 * j["eval"]["perplexity_float"].get<double>());
  EXPECT_EQ(j["stages"]["model_preparation"]["calibration_windows"], 4);
  EXPECT_EQ(j["stages"]["inference"]["kv_io_dtype"], "uint8");  // the small-model (stories) recipe
  EXPECT_EQ(j["stats"]["generated_tokens"].get<int64_t>(), static_cast<int64_t>(r.inference.tokens.size()));
}

// The pipeline's check runs the text decoder it deploys: no private copy is lowered and written
// (that copy lives in a temporary directory, unreachable here), and the numbers are the copy's.
TEST_F(BuiltinStrategies, QuantizationCheckRunsTheDeployedProgram) {
  TempDir alone_out, out;
  options::OptionValues alone = base_options(alone_out.path());
  alone.set_from_text("skip_stages", {"compilation"}, options::OptionSource::kCommandLine);
  alone.set("compile_only", true);
  const nlohmann::json copy = run(alone).stage("quantization").notes["eval"];
  ASSERT_EQ(copy["quantized_by"], "program");

  options::OptionValues v = base_options(out.path());
  v.set("compile_only", true);
  PipelineResult r;
  {
    const genai::testing::ScopedTmpdir nowhere(out.file("no-such-dir"));
    EXPECT_NO_THROW(run(v, &r));
  }
  const nlohmann::json deployed = r.stage("quantization").notes["eval"];
  EXPECT_EQ(deployed["quantized_by"], "program");
  for (const char* k : {"sqnr_db", "perplexity_quantized", "perplexity_float", "top1_agreed", "eval_tokens"})
    EXPECT_EQ(deployed[k], copy[k]) << k;
  // Without the deployed program the copy is needed, and with no temporary directory it fails.
  const genai::testing::ScopedTmpdir nowhere(out.file("no-such-dir"));
  EXPECT_THROW(run(alone), pipeline::StageError);
}

TEST_F(BuiltinStrategies, Fp16AndGpuSkipQuantizationAndCompileTheFloatGraphs) {
  for (const char* flow : {"fp16", "gpu"}) {
    SCOPED_TRACE(flow);
    TempDir out;
    options::OptionValues v = base_options(out.path());
    if (std::string(flow) == "fp16") v.set("use_fp16", true);
    else v.set("backend", std::string("gpu"));
    const PipelineResult r = run(v);
    EXPECT_FALSE(r.stage("quantization").ran);
    EXPECT_FALSE(r.quantization.ran());
    EXPECT_FALSE(fs::exists(out.file("decode_qdq.json")));
    EXPECT_EQ(r.stage("compilation").notes["program"], "float");
    EXPECT_EQ(r.stage("inference").notes["kv_io_dtype"], "float32");
    EXPECT_FALSE(r.inference.tokens.empty());
    EXPECT_FALSE(pipeline_report_json(r)["eval"].contains("sqnr_db"));
  }
}

TEST_F(BuiltinStrategies, CompileOnlyThenPreGenPteGivesTheSameTokens) {
  TempDir full, compiled, rerun;
  const PipelineResult whole = run(base_options(full.path()));

  options::OptionValues c = base_options(compiled.path());
  c.set("compile_only", true);
  const PipelineResult first = run(c);
  EXPECT_FALSE(first.stage("inference").ran);
  EXPECT_TRUE(fs::exists(compiled.file("text_decoder.pte")));
  EXPECT_TRUE(first.inference.tokens.empty());

  options::OptionValues p = base_options(rerun.path());
  p.set("pre_gen_pte", compiled.path());
  const PipelineResult second = run(p);
  for (auto s : {"model_preparation", "quantization", "compilation"}) EXPECT_FALSE(second.stage(s).ran) << s;
  EXPECT_EQ(second.stage("inference").notes["chat_format_from"], "tokenizer template");
  EXPECT_EQ(second.inference.tokens, whole.inference.tokens);
  EXPECT_TRUE(fs::is_empty(rerun.path()));  // nothing written where nothing ran
}

TEST_F(BuiltinStrategies, StagesRunAloneOnTypedInputs) {
  TempDir out;
  // Typed settings only (pipeline/stage_settings.h): no option set reaches the stages. The
  // context carries none either; base_options' values, field by field.
  const auto ctx = pipeline::PipelineContext::builder()
                       .with_model(dir_->file("tiny.gguf"))
                       .with_soc("SM8650")
                       .with_prompt("hi")
                       .with_artifact_dir(out.path())
                       .build();
  pipeline::GraphShapeSettings graphs;
  graphs.max_seq_len = {64, true};
  graphs.prefill_ar_len = 16;
  pipeline::CalibrationSettings calibration;
  calibration.max_context_len = 64;
  ModelPreparationStage prep("executorch", make_model_preparation_strategy());
  pipeline::ModelPreparationInputConfig pin{dir_->file("tiny.gguf"), "SM8650", {}};
  pin.settings.checkpoint = dir_->file("tiny.gguf");
  pin.settings.calibration = calibration;
  const auto prepared = prep.invoke(ctx, pin);
  ASSERT_TRUE(prepared.model && prepared.tokenizer && prepared.calibration_data);
  EXPECT_EQ(prepared.calibration_data->size(), 4u);
  EXPECT_EQ(prepared.chat_template, "chatml");

  QuantizationStage quant("executorch", make_quantization_strategy());
  pipeline::QuantizationInputConfig qin;
  qin.soc_model = target::Chipset::SM8650;
  qin.model = prepared.model;
  qin.calibration_data = prepared.calibration_data;
  qin.settings.graphs = graphs;
  qin.settings.calibration = calibration;
  StageRecord qrec;
  const auto quantized = quant.invoke(ctx, qin, &qrec);
  EXPECT_EQ(quantized.bundles.size(), 2u);  // hybrid: kv_forward + prefill_forward
  EXPECT_TRUE(quantized.bundles.at(pipeline::GraphName::kKvForward).quantized());
  EXPECT_TRUE(qrec.notes["eval"]["sqnr_db"].is_number());

  CompilationStage comp("executorch", make_compilation_strategy());
  pipeline::CompilationInputConfig cin;
  cin.soc_model = target::Chipset::SM8650;
  cin.graphs = quantized.bundles;
  cin.model = prepared.model;
  cin.artifact_dir = out.path();
  cin.settings.graphs = graphs;
  cin.settings.spec.soc_model = "SM8650";
  cin.settings.spec.enable_x86_64 = true;
  const auto compiled = comp.invoke(ctx, cin);
  EXPECT_TRUE(fs::exists(compiled.artifact_paths.at(pipeline::ArtifactKey::kTextDecoder)));

  // Compilation alone without graphs or a model: bad input naming the stage.
  pipeline::CompilationInputConfig empty;
  empty.soc_model = target::Chipset::SM8650;
  empty.artifact_dir = out.path();
  try {
    comp.invoke(ctx, empty);
    FAIL();
  } catch (const pipeline::StageError& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_EQ(std::string(e.what()).rfind("[compilation]", 0), 0u) << e.what();
  }
}

// The windows model_preparation hands on calibrate exactly as quantize_model's own would.
TEST_F(BuiltinStrategies, PreparedCalibrationWindowsMatchTheQuantizersOwn) {
  TempDir out;
  const options::OptionValues v = base_options(out.path());
  const auto model = std::make_shared<const Model>(load_model(dir_->file("tiny.gguf")));
  quant::QuantizeOptions qo;
  qo.max_context_len = 64;
  qo.prefill_ar_len = 16;
  qo.recipe = quant::recipe_from_spelling("16a8w");
  qo.calibration = calibration_options(v);
  const auto own = quant::quantize_model(model, qo);
  qo.windows = quant::calibration_windows(*model, qo.calibration);
  ASSERT_EQ(qo.windows.size(), 4u);
  const auto given = quant::quantize_model(model, qo);
  EXPECT_EQ(given.encodings.at("kv_forward")->activations, own.encodings.at("kv_forward")->activations);
  qo.windows[1].pop_back();  // ragged windows are refused
  EXPECT_THROW(quant::quantize_model(model, qo), InputError);
}

TEST_F(BuiltinStrategies, InjectedFailuresKeepEarlierArtifacts) {
  struct Case {
    const char* stage;
    std::vector<const char*> kept, absent;
  };
  const std::vector<Case> cases = {
      {"model_preparation", {}, {"decode_qdq.json", "text_decoder.pte"}},
      {"quantization", {}, {"decode_qdq.json", "text_decoder.pte"}},
      {"compilation", {"decode_qdq.json"}, {"text_decoder.pte", "manifest.json"}},
      {"inference", {"decode_qdq.json", "text_decoder.pte", "manifest.json"}, {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.stage);
    TempDir out;
    PipelineResult partial;
    try {
      run(base_options(out.path()), &partial, c.stage);
      ADD_FAILURE() << "expected a StageError";
    } catch (const pipeline::StageError& e) {
      EXPECT_EQ(e.stage_name(), c.stage);
      EXPECT_EQ(std::string(e.what()).rfind(std::string("[") + c.stage + "]", 0), 0u) << e.what();
      // What `genai pipeline` prints after "error: ", and its exit code 1.
      EXPECT_EQ(std::string(e.what()),
                std::string("[") + c.stage + "] stage failed (caused by Failure: fault injected into " + c.stage + ")");
      EXPECT_EQ(e.code(), ExitCode::kFailure);
    }
    for (const char* f : c.kept) EXPECT_TRUE(fs::exists(out.file(f))) << f;
    for (const char* f : c.absent) EXPECT_FALSE(fs::exists(out.file(f))) << f;
    EXPECT_TRUE(partial.stages.back().failed);
  }
}

TEST_F(BuiltinStrategies, BadInputInsideAStageKeepsExitCodeTwo) {
  TempDir out;
  {
    options::OptionValues v = base_options(out.path());
    v.set("decoder_model", std::string("smollm2_135m"));
    try {
      run(v);
      FAIL();
    } catch (const pipeline::StageError& e) {
      EXPECT_EQ(e.stage_name(), "model_preparation");
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      EXPECT_NE(std::string(e.what()).find("--decoder_model smollm2_135m does not match --checkpoint"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("tiny.gguf"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace genai::orchestrator
