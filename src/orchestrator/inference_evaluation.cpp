#include "orchestrator/inference_evaluation.h"

#include <filesystem>

#include "eval/eval_request.h"
#include "eval/inference_evaluation.h"
#include "orchestrator/option_readers.h"
#include "runtime/artifact_dir.h"

namespace genai::orchestrator {
namespace {

using namespace genai::pipeline;

// The evaluation's settings: the graphs the options describe, and the attention sink as given,
// else as the programs were compiled with it (their manifest's options).
eval::InferenceEvalSetup evaluation_setup(const InferenceInputConfig& in) {
  const InferenceSettings& o = in.settings;
  eval::InferenceEvalSetup setup;
  setup.graphs = decoder_graph_options(o.graphs);
  nlohmann::json compiled;
  if (in.artifact_paths.contains(ArtifactKey::kTextDecoder)) {
    const std::filesystem::path dir = in.artifact_paths.at(ArtifactKey::kTextDecoder).parent_path();
    if (std::filesystem::exists(dir / "manifest.json")) {
      const runtime::ArtifactDir artifacts = runtime::open_artifact_dir(dir);
      if (artifacts.has_manifest && artifacts.manifest.contains("options")) compiled = artifacts.manifest["options"];
    }
  }
  setup.sink = attention_sink_setting(o, compiled);
  setup.sink_window = o.graphs.max_seq_len.value;
  if (!o.graphs.max_seq_len.given && compiled.is_object() && compiled.contains("max_seq_len") &&
      compiled["max_seq_len"].is_number_integer())
    setup.sink_window = compiled["max_seq_len"].get<int64_t>();
  return setup;
}

class EvaluatedInference final : public InferenceStrategy {
 public:
  explicit EvaluatedInference(std::unique_ptr<InferenceStrategy> inner) : inner_(std::move(inner)) {}

  InferenceOutputConfig invoke(const PipelineContext& context, const InferenceInputConfig& in,
                               StageNotes& notes) override {
    const eval::EvalRequest req = eval::eval_request(in.settings.eval);
    InferenceOutputConfig out = inner_->invoke(context, in, notes);
    if (!req.any()) return out;
    notes["eval"] = eval::evaluate_inference(in, req, evaluation_setup(in), out.eval_results);
    return out;
  }

 private:
  std::unique_ptr<InferenceStrategy> inner_;
};

}  // namespace

std::unique_ptr<InferenceStrategy> with_evaluation(std::unique_ptr<InferenceStrategy> inference) {
  return std::make_unique<EvaluatedInference>(std::move(inference));
}

}  // namespace genai::orchestrator
