// --eval_methods tasks_eval and sqnr_eval, part of the inference stage as upstream's llama.py
// evaluates in its inference step: after the generation (prompt_eval), the same windows run
// teacher-forced through up to three decoder sessions of one graph shape, the programs':
//   float    the prepared model's graphs on the fp32 interpreter,
//   qdq      the same graphs under the encodings (this run's quantization, else the
//            decode_qdq.json next to prebuilt programs) on the QDQ reference,
//   program  the compiled text_decoder program on the host runtime,
// compared by llm/window_comparison.h. tasks_eval: perplexity of each over --eval_limit windows of
// the programs' context from each --eval_tasks text; sqnr_eval: logits SQNR (and top-1
// agreement) of each --prompt's tokens against float. Absent sides (no --checkpoint next to -a,
// a float program) are null in the report. Notes: "eval" {"tasks_eval": {task: {...}},
// "sqnr_eval": {...}} (pipeline_report.h shows it under "eval").
#pragma once

#include <memory>

#include "orchestrator/strategy.h"

namespace genai::orchestrator {

// `inference` followed by the evaluations its options ask for (eval_request.h).
std::unique_ptr<InferenceStrategy> with_evaluation(std::unique_ptr<InferenceStrategy> inference);

}  // namespace genai::orchestrator
