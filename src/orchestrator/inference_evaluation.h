// The inference stage's evaluation step: --eval_methods tasks_eval and sqnr_eval after the
// generation, as upstream's llama.py evaluates in its inference step. The evaluation itself is
// the eval layer's (eval/inference_evaluation.h); this step reads its settings from the options
// and the programs' manifest. Notes: "eval" {"tasks_eval": {task: {...}}, "sqnr_eval": {...}}
// (pipeline_report.h shows it under "eval").
#pragma once

#include <memory>

#include "orchestrator/strategy.h"

namespace genai::orchestrator {

// `inference` followed by the evaluations its options ask for (eval/eval_request.h).
std::unique_ptr<InferenceStrategy> with_evaluation(std::unique_ptr<InferenceStrategy> inference);

}  // namespace genai::orchestrator
