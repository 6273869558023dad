// The orchestrator core with test strategies: stage order and data flow, skipping (every stage,
// alone or together), the float fallback into compilation, --pre_gen_pte, failures wrapped per
// stage with earlier artifacts kept, the registry and the summary.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "orchestrator/genai_pipeline.h"
#include "orchestrator/pipeline_report.h"
#include "orchestrator/stage_plan.h"
#include "pipeline/exceptions.h"
#include "support/cli_runner.h"
#include "fault_injection.h"
#include "test_strategies.h"

namespace genai::orchestrator {
namespace {

namespace fs = std::filesystem;
using genai::testing::TempDir;
using testing::Probe;
using testing::test_registry;

pipeline::PipelineContext context(const std::string& dir, options::OptionValues values = options::OptionValues()) {
  return pipeline::PipelineContext::builder()
      .with_model("model.gguf")
      .with_soc("SM8650")
      .with_prompt(std::vector<std::string>{"hi", "again"})
      .with_artifact_dir(dir)
      .with_extra_options(std::move(values))
      .build();
}

SkipPlan skip(std::initializer_list<std::string_view> stages) {
  SkipPlan p;
  for (auto s : stages) p.emplace(std::string(s), "test");
  return p;
}

TEST(PipelineFlow, RunsAllStagesInOrderAndWiresTheirConfigs) {
  TempDir dir;
  auto probe = std::make_shared<Probe>();
  const auto pipe = GenAIPipeline::from_proxy(pipeline::EngineProxy({}, target::BackendType::kGpuBackend), test_registry(probe));
  const PipelineResult r = pipe.invoke(context(dir.path()));
  ASSERT_EQ(r.stages.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r.stages[i].name, pipeline::kAllStages[i]);
    EXPECT_TRUE(r.stages[i].ran);
    EXPECT_EQ(r.stages[i].engine, "executorch");
    EXPECT_GE(r.stages[i].seconds, 0.0);
  }
  EXPECT_EQ(probe->prep_in->model_name, "model.gguf");
  EXPECT_EQ(probe->prep_in->soc_model, "SM8650");
  EXPECT_TRUE(probe->prep_in->need_calibration_data);
  // quantization gets the prepared model and calibration data, the resolved SoC and the backend
  EXPECT_EQ(probe->quant_in->model, r.preparation.model);
  EXPECT_EQ(probe->quant_in->soc_model, target::Chipset::SM8650);
  EXPECT_EQ(probe->quant_in->backend_type, target::BackendType::kGpuBackend);
  ASSERT_TRUE(probe->quant_in->calibration_data);
  // compilation gets the bundles (and the model, tokenizer path, artifact dir)
  EXPECT_EQ(probe->compile_in->graphs.size(), 1u);
  EXPECT_EQ(probe->compile_in->artifact_dir, fs::path(dir.path()));
  EXPECT_EQ(probe->compile_in->tokenizer_path, fs::path("/test/tokenizer.json"));
  // inference gets the artifacts, prompts, tokenizer path and chat template
  EXPECT_EQ(probe->infer_in->artifact_paths.at(pipeline::ArtifactKey::kTextDecoder), fs::path(dir.file("text_decoder.pte")));
  EXPECT_EQ(probe->infer_in->prompt, (std::vector<std::string>{"hi", "again"}));
  EXPECT_EQ(probe->infer_in->chat_template, "chatml");
  EXPECT_EQ(r.inference.inference_results, (std::vector<std::string>{"reply to hi", "reply to again"}));
}

TEST(PipelineFlow, SkippedQuantizationHandsTheFloatModelToCompilation) {
  TempDir dir;
  auto probe = std::make_shared<Probe>();
  const auto pipe = GenAIPipeline::from_proxy(testing::htp_proxy(), test_registry(probe), skip({pipeline::kStageQuantization}));
  EXPECT_FALSE(pipe.runs(pipeline::kStageQuantization));
  const PipelineResult r = pipe.invoke(context(dir.path()));
  EXPECT_FALSE(probe->quant_in.has_value());
  EXPECT_FALSE(probe->prep_in->need_calibration_data);  // no calibration text without quantization
  EXPECT_FALSE(r.stage(pipeline::kStageQuantization).ran);
  EXPECT_FALSE(r.quantization.ran());  // empty output handed on
  ASSERT_TRUE(probe->compile_in);
  EXPECT_TRUE(probe->compile_in->graphs.empty());
  EXPECT_EQ(probe->compile_in->model, r.preparation.model);
  EXPECT_TRUE(r.inference.ran());
}

TEST(PipelineFlow, EveryStageAloneAndEverySkip) {
  for (auto only : pipeline::kAllStages) {
    SCOPED_TRACE(only);
    TempDir dir;
    auto probe = std::make_shared<Probe>();
    SkipPlan plan;
    for (auto s : pipeline::kAllStages)
      if (s != only) plan.emplace(std::string(s), "test");
    const auto pipe = GenAIPipeline::from_proxy(testing::htp_proxy(), test_registry(probe), plan);
    if (only == pipeline::kStageModelPreparation || only == pipeline::kStageCompilation) {
      // Preparation needs nothing; compilation alone has neither graphs nor a model.
      if (only == pipeline::kStageModelPreparation) {
        const auto r = pipe.invoke(context(dir.path()));
        EXPECT_TRUE(r.preparation.ran());
        EXPECT_TRUE(fs::exists(dir.file("model_preparation.done")));
      } else {
        EXPECT_THROW(pipe.invoke(context(dir.path())), pipeline::StageError);
      }
    } else {
      // Quantization without a model, inference without artifacts: a StageError of bad input
      // (exit 2) naming the stage and what is missing.
      try {
        pipe.invoke(context(dir.path()));
        FAIL() << "expected a StageError";
      } catch (const pipeline::StageError& e) {
        EXPECT_EQ(e.stage_name(), only);
        EXPECT_EQ(e.code(), ExitCode::kBadInput);
        EXPECT_NE(std::string(e.what()).find("missing required inputs"), std::string::npos) << e.what();
      }
    }
    EXPECT_EQ(probe->calls, 1);
  }
  // Everything skipped: four empty outputs.
  TempDir dir;
  auto probe = std::make_shared<Probe>();
  const auto pipe = GenAIPipeline::from_proxy(
      testing::htp_proxy(), test_registry(probe),
      skip({pipeline::kStageModelPreparation, pipeline::kStageQuantization, pipeline::kStageCompilation, pipeline::kStageInference}));
  const auto r = pipe.invoke(context(dir.path()));
  EXPECT_EQ(probe->calls, 0);
  EXPECT_FALSE(r.preparation.ran() || r.quantization.ran() || r.compilation.ran() || r.inference.ran());
  for (const auto& s : r.stages) EXPECT_EQ(s.notes.value("skipped", ""), "test");
}

TEST(PipelineFlow, CompileOnlyStopsAfterCompilation) {
  TempDir dir;
  auto probe = std::make_shared<Probe>();
  options::OptionValues v;
  v.set("compile_only", true);
  const auto pipe = GenAIPipeline::from_proxy(testing::htp_proxy(), test_registry(probe), plan_skipped_stages(v));
  const auto r = pipe.invoke(context(dir.path(), v));
  EXPECT_TRUE(r.compilation.ran());
  EXPECT_FALSE(probe->infer_in.has_value());
  EXPECT_EQ(r.stage(pipeline::kStageInference).notes.value("skipped", ""), "--compile_only");
}

TEST(PipelineFlow, PreGenPteRunsInferenceOnAnEarlierArtifactDir) {
  TempDir earlier, dir;
  std::ofstream(earlier.file("text_decoder.pte")) << "program";
  std::ofstream(earlier.file("manifest.json"))
      << R"({"format": "genai-artifacts", "version": 1, "artifacts": {"text_decoder": "text_decoder.pte"}})";
  auto probe = std::make_shared<Probe>();
  options::OptionValues v;
  v.set("pre_gen_pte", earlier.path());
  const SkipPlan plan = plan_skipped_stages(v);
  EXPECT_EQ(plan.size(), 3u);
  const auto pipe = GenAIPipeline::from_proxy(testing::htp_proxy(), test_registry(probe), plan);
  const auto r = pipe.invoke(context(dir.path(), v));
  EXPECT_EQ(probe->calls, 1);
  ASSERT_TRUE(probe->infer_in);
  EXPECT_EQ(fs::canonical(probe->infer_in->artifact_paths.at(pipeline::ArtifactKey::kTextDecoder)),
            fs::canonical(earlier.file("text_decoder.pte")));
  EXPECT_FALSE(probe->infer_in->tokenizer);  // preparation skipped: the strategy loads the dir's own
  EXPECT_TRUE(r.inference.ran());

  // A dir without a manifest is bad input of the inference stage.
  TempDir empty;
  options::OptionValues bad;
  bad.set("pre_gen_pte", empty.path());
  const auto pipe2 = GenAIPipeline::from_proxy(testing::htp_proxy(), test_registry(probe), plan_skipped_stages(bad));
  try {
    pipe2.invoke(context(dir.path(), bad));
    FAIL();
  } catch (const pipeline::StageError& e) {
    EXPECT_EQ(e.stage_name(), "inference");
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("--pre_gen_pte"), std::string::npos) << e.what();
  }
}

TEST(PipelineFlow, AFailingStageNamesItselfAndItsCauseAndKeepsEarlierArtifacts) {
  for (size_t i = 0; i < pipeline::kAllStages.size(); ++i) {
    const std::string stage(pipeline::kAllStages[i]);
    for (bool input_error : {false, true}) {
      SCOPED_TRACE(stage + (input_error ? " input error" : " failure"));
      TempDir dir;
      auto probe = std::make_shared<Probe>();
      probe->fail_stage = stage;
      probe->fail_with_input_error = input_error;
      const auto pipe = GenAIPipeline::from_proxy(testing::htp_proxy(), test_registry(probe));
      PipelineResult partial;
      try {
        pipe.invoke(context(dir.path()), partial);
        FAIL() << "expected a StageError";
      } catch (const pipeline::StageError& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("[" + stage + "]", 0), 0u) << what;
        EXPECT_EQ(e.stage_name(), stage);
        if (input_error) {
          EXPECT_NE(what.find("caused by InputError: test " + stage + " rejects its input"), std::string::npos) << what;
          EXPECT_EQ(e.code(), ExitCode::kBadInput);
        } else {
          EXPECT_NE(what.find("caused by runtime_error: test " + stage + " broke"), std::string::npos) << what;
          EXPECT_EQ(e.code(), ExitCode::kFailure);
        }
      }
      // Earlier stages' files stay; this and later stages wrote nothing; the record says so.
      for (size_t j = 0; j < pipeline::kAllStages.size(); ++j)
        EXPECT_EQ(fs::exists(dir.file(std::string(pipeline::kAllStages[j]) + ".done")), j < i) << pipeline::kAllStages[j];
      ASSERT_EQ(partial.stages.size(), i + 1);
      EXPECT_TRUE(partial.stages.back().failed);
      EXPECT_EQ(probe->calls, static_cast<int>(i + 1));
    }
  }
}

TEST(PipelineFlow, AnInjectedFaultFailsTheNamedStageOnly) {
  for (size_t i = 0; i < pipeline::kAllStages.size(); ++i) {
    const std::string_view stage = pipeline::kAllStages[i];
    SCOPED_TRACE(stage);
    TempDir dir;
    auto probe = std::make_shared<Probe>();
    StrategyRegistry registry = test_registry(probe);
    testing::inject_fault(registry, stage);
    const auto pipe = GenAIPipeline::from_proxy(testing::htp_proxy(), registry);
    try {
      pipe.invoke(context(dir.path()));
      ADD_FAILURE() << "expected a StageError";
    } catch (const pipeline::StageError& e) {
      EXPECT_EQ(e.stage_name(), stage);
      EXPECT_EQ(std::string(e.what()), fmt::format("[{}] stage failed (caused by Failure: fault injected into {})", stage, stage));
      EXPECT_EQ(e.code(), ExitCode::kFailure);
    }
    // The stages before it ran (their markers are on disk), the failing one and later ones did not.
    for (size_t j = 0; j < pipeline::kAllStages.size(); ++j)
      EXPECT_EQ(fs::exists(dir.file(std::string(pipeline::kAllStages[j]) + ".done")), j < i) << pipeline::kAllStages[j];
  }
}

TEST(PipelineFlow, RegistryAndProxyErrors) {
  auto probe = std::make_shared<Probe>();
  // Strategies under another engine only: the proxy's engine (executorch) has none.
  try {
    GenAIPipeline::from_proxy(testing::htp_proxy(), test_registry(probe, "other-engine"));
    FAIL();
  } catch (const pipeline::EngineNotAvailableError& e) {
    EXPECT_EQ(e.engine_name(), "executorch");
    EXPECT_NE(std::string(e.what()).find("no model_preparation strategy"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("other-engine"), std::string::npos) << e.what();
  }
  StrategyRegistry r = test_registry(probe, "other-engine");
  EXPECT_TRUE(r.contains("quantization", "other-engine"));
  EXPECT_FALSE(r.contains("quantization", "executorch"));
  EXPECT_EQ(r.engines("inference"), std::vector<std::string>{"other-engine"});
  // A skipped stage needs no strategy.
  StrategyRegistry partial;
  partial.add<ModelPreparationStrategy>("executorch", [probe] { return std::make_unique<testing::TestPreparation>(probe); });
  EXPECT_NO_THROW(GenAIPipeline::from_proxy(testing::htp_proxy(), partial,
                                            skip({pipeline::kStageQuantization, pipeline::kStageCompilation,
                                                  pipeline::kStageInference})));
  // Unknown stage names in the skip set are bad input listing the stages.
  try {
    GenAIPipeline::from_proxy(testing::htp_proxy(), test_registry(probe), skip({"training"}));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("compilation, inference, model_preparation, quantization"), std::string::npos);
  }
  // An unknown SoC is bad input before any stage runs.
  TempDir dir;
  auto ctx = pipeline::PipelineContext::builder().with_model("m").with_soc("SM0000").with_prompt("x").with_artifact_dir(dir.path()).build();
  EXPECT_THROW(GenAIPipeline::from_proxy(testing::htp_proxy(), test_registry(probe)).invoke(ctx), InputError);
  EXPECT_EQ(probe->calls, 0);
}

TEST(StagePlan, SkipsFollowTheOptions) {
  options::OptionValues none;
  EXPECT_TRUE(plan_skipped_stages(none).empty());
  options::OptionValues fp16;
  fp16.set("use_fp16", true);
  EXPECT_EQ(plan_skipped_stages(fp16).at("quantization"), "--use_fp16: float program");
  options::OptionValues gpu;
  gpu.set("backend", std::string("gpu"));
  EXPECT_TRUE(float_program_requested(gpu));
  EXPECT_EQ(plan_skipped_stages(gpu).at("quantization"), "--backend gpu: float program");
  options::OptionValues recipe;
  recipe.set("quant_recipe", std::string("fp16"));
  EXPECT_TRUE(plan_skipped_stages(recipe).contains("quantization"));
  options::OptionValues listed;
  listed.set_from_text("skip_stages", {"quantization", "inference"}, options::OptionSource::kCommandLine);
  EXPECT_EQ(plan_skipped_stages(listed).size(), 2u);
  EXPECT_THROW(listed.set_from_text("skip_stages", {"training"}, options::OptionSource::kCommandLine), InputError);
}

TEST(PipelineReport, JsonAndTextCarryStagesArtifactsMemoryEvalAndText) {
  TempDir dir;
  auto probe = std::make_shared<Probe>();
  const auto r = GenAIPipeline::from_proxy(testing::htp_proxy(), test_registry(probe)).invoke(context(dir.path()));
  const nlohmann::json j = pipeline_report_json(r);
  for (auto s : pipeline::kAllStages) {
    EXPECT_TRUE(j["stages"][std::string(s)]["ran"].get<bool>());
    EXPECT_TRUE(j["stages"][std::string(s)]["seconds"].is_number());
  }
  EXPECT_EQ(j["stages"]["model_preparation"]["summary"], "prepared");
  EXPECT_EQ(j["artifacts"]["text_decoder"], dir.file("text_decoder.pte"));
  EXPECT_EQ(j["memory"]["planned_bytes"], 2 * 1024 * 1024);
  EXPECT_EQ(j["text"], "reply to hi\nreply to again");
  EXPECT_EQ(j["tokens"], nlohmann::json::array({5, 6, 7}));
  EXPECT_EQ(j["stats"]["decode_tok_s"], 10.0);
  EXPECT_EQ(j["eval"]["sqnr_db"], 42.0);
  const std::string text = pipeline_report_text(r);
  for (const char* want : {"model_preparation", "quantization", "compilation", "inference", "text_decoder",
                           "planned memory: 2.0 MiB", "SQNR vs float: 42.00 dB", "text: reply to hi", "decode 10.0 tok/s"})
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
}

}  // namespace
}  // namespace genai::orchestrator
