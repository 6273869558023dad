// Test strategies for the orchestrator: each records the input it received, writes a marker file
// (<artifact_dir>/<stage>.done) as its "artifact", hands on a recognisable output, and fails on
// request, so tests can check data flow, skipping, and what stays on disk after a failure.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/error.h"
#include "graph/graph.h"
#include "model/model.h"
#include "orchestrator/strategy_registry.h"
#include "pipeline/engine_proxy.h"
#include "quant/encoding_set.h"

namespace genai::orchestrator::testing {

// What the strategies saw and how they should behave; shared by all four.
struct Probe {
  std::string fail_stage;       // this stage throws
  bool fail_with_input_error = false;
  std::optional<pipeline::ModelPreparationInputConfig> prep_in;
  std::optional<pipeline::QuantizationInputConfig> quant_in;
  std::optional<pipeline::CompilationInputConfig> compile_in;
  std::optional<pipeline::InferenceInputConfig> infer_in;
  int calls = 0;
};

inline void mark(const pipeline::PipelineContext& ctx, std::string_view stage) {
  std::filesystem::create_directories(ctx.artifact_dir());
  std::ofstream(std::filesystem::path(ctx.artifact_dir()) / (std::string(stage) + ".done")) << stage;
}

inline void maybe_fail(const Probe& p, std::string_view stage) {
  if (p.fail_stage != stage) return;
  if (p.fail_with_input_error) throw_input_error("test {} rejects its input", stage);
  throw std::runtime_error("test " + std::string(stage) + " broke");
}

class TestPreparation final : public ModelPreparationStrategy {
 public:
  explicit TestPreparation(std::shared_ptr<Probe> p) : p_(std::move(p)) {}
  pipeline::ModelPreparationOutputConfig invoke(const pipeline::PipelineContext& ctx,
                                                const pipeline::ModelPreparationInputConfig& in, StageNotes& notes) override {
    ++p_->calls;
    p_->prep_in = in;
    maybe_fail(*p_, pipeline::kStageModelPreparation);
    mark(ctx, pipeline::kStageModelPreparation);
    pipeline::ModelPreparationOutputConfig out;
    auto model = std::make_shared<Model>();
    model->config.name = "test-model";
    out.model = model;
    if (in.need_calibration_data) out.calibration_data = pipeline::CalibrationData{{1, 2, 3}};
    out.runtime_tokenizer_path = "/test/tokenizer.json";
    out.chat_template = "chatml";
    notes["summary"] = "prepared";
    return out;
  }

 private:
  std::shared_ptr<Probe> p_;
};

class TestQuantization final : public QuantizationStrategy {
 public:
  explicit TestQuantization(std::shared_ptr<Probe> p) : p_(std::move(p)) {}
  pipeline::QuantizationOutputConfig invoke(const pipeline::PipelineContext& ctx, const pipeline::QuantizationInputConfig& in,
                                            StageNotes& notes) override {
    ++p_->calls;
    p_->quant_in = in;
    maybe_fail(*p_, pipeline::kStageQuantization);
    in.check_ready();
    mark(ctx, pipeline::kStageQuantization);
    pipeline::QuantizationOutputConfig out;
    auto g = std::make_shared<graph::Graph>("kv_forward", nullptr);
    auto enc = std::make_shared<quant::EncodingSet>();
    enc->recipe = "test";
    pipeline::QuantIoDtypes io{{{"tokens", DType::kI32}}, {{"logits", DType::kU16}}};
    out.bundles.emplace(pipeline::GraphName::kKvForward,
                        pipeline::GraphBundle(g, {{"tokens", DType::kI32, {1, 1}}}, {}, io, {}, {}, enc));
    notes["eval"] = {{"sqnr_db", 42.0}, {"eval_tokens", 7}};
    return out;
  }

 private:
  std::shared_ptr<Probe> p_;
};

class TestCompilation final : public CompilationStrategy {
 public:
  explicit TestCompilation(std::shared_ptr<Probe> p) : p_(std::move(p)) {}
  pipeline::CompilationOutputConfig invoke(const pipeline::PipelineContext& ctx, const pipeline::CompilationInputConfig& in,
                                           StageNotes& notes) override {
    ++p_->calls;
    p_->compile_in = in;
    maybe_fail(*p_, pipeline::kStageCompilation);
    if (in.graphs.empty() && !in.model) throw pipeline::ConfigValidationError("[compilation] nothing to compile");
    mark(ctx, pipeline::kStageCompilation);
    pipeline::CompilationOutputConfig out;
    out.artifact_paths[pipeline::ArtifactKey::kTextDecoder] = std::filesystem::path(ctx.artifact_dir()) / "text_decoder.pte";
    notes["planned_bytes"] = 2 * 1024 * 1024;
    notes["lower_bound_bytes"] = 1024 * 1024;
    return out;
  }

 private:
  std::shared_ptr<Probe> p_;
};

class TestInference final : public InferenceStrategy {
 public:
  explicit TestInference(std::shared_ptr<Probe> p) : p_(std::move(p)) {}
  pipeline::InferenceOutputConfig invoke(const pipeline::PipelineContext& ctx, const pipeline::InferenceInputConfig& in,
                                         StageNotes& notes) override {
    ++p_->calls;
    p_->infer_in = in;
    maybe_fail(*p_, pipeline::kStageInference);
    in.check_ready();
    mark(ctx, pipeline::kStageInference);
    pipeline::InferenceOutputConfig out;
    for (const auto& prompt : in.prompt) out.inference_results.push_back("reply to " + prompt);
    out.tokens = {5, 6, 7};
    out.performance_metrics["decode_tok_s"] = 10.0;
    notes["stats"] = {{"prompt_tokens", 3}, {"generated_tokens", 3}, {"decode_tok_s", 10.0}};
    return out;
  }

 private:
  std::shared_ptr<Probe> p_;
};

// A registry holding the four test strategies under `engine`.
inline StrategyRegistry test_registry(const std::shared_ptr<Probe>& p, const std::string& engine = "executorch") {
  StrategyRegistry r;
  r.add<ModelPreparationStrategy>(engine, [p] { return std::make_unique<TestPreparation>(p); });
  r.add<QuantizationStrategy>(engine, [p] { return std::make_unique<TestQuantization>(p); });
  r.add<CompilationStrategy>(engine, [p] { return std::make_unique<TestCompilation>(p); });
  r.add<InferenceStrategy>(engine, [p] { return std::make_unique<TestInference>(p); });
  return r;
}

inline pipeline::EngineProxy htp_proxy() { return pipeline::EngineProxy({}, target::BackendType::kHtpBackend); }

}  // namespace genai::orchestrator::testing
