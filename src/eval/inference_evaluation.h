// --eval_methods tasks_eval and sqnr_eval, which the inference stage runs after the generation
// (prompt_eval) as upstream's llama.py evaluates in its inference step: the same windows run
// teacher-forced through up to three decoder sessions of one graph shape, the programs':
//   float    the prepared model's graphs on the fp32 interpreter,
//   qdq      the same graphs under the encodings (this run's quantization, else the
//            decode_qdq.json next to prebuilt programs) on the QDQ reference,
//   program  the compiled text_decoder program on the host runtime,
// compared by window_comparison.h. tasks_eval: perplexity of each over --eval_limit windows of
// the programs' context from each --eval_tasks text; sqnr_eval: logits SQNR (and top-1
// agreement) of each --prompt's tokens against float. Absent sides (no --checkpoint next to -a,
// a float program) are null in the report. The orchestrator's inference stage
// (orchestrator/inference_evaluation.h) reads the settings and calls this.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/eval_request.h"
#include "graph/decoder_graphs.h"
#include "llm/attention_sink.h"
#include "pipeline/stage_configs.h"

namespace genai::eval {

// The run's settings the sides are built with, as the options (and the programs' manifest) give them.
struct InferenceEvalSetup {
  // The float and QDQ graphs; a program, when there is one, sets their mode and context.
  graph::DecoderGraphOptions graphs;
  // With an attention sink every side evicts, and a window holds `sink_window` tokens (upstream's
  // tasks_eval with a sink: sequences of --max_seq_len, past the context).
  std::optional<AttentionSinkOptions> sink;
  int64_t sink_window = 0;
};

// Runs `request`'s evaluations on the run `in` describes. Returns the stage's "eval" notes
// {"tasks_eval": {task: {...}}, "sqnr_eval": {...}, "qdq_encodings": ...} and adds the figures to
// `results` ("tasks_eval.<task>.perplexity_<side>", "sqnr_eval.sqnr_db_<side>").
nlohmann::json evaluate_inference(const pipeline::InferenceInputConfig& in, const EvalRequest& request,
                                  const InferenceEvalSetup& setup, std::map<std::string, double>& results);

}  // namespace genai::eval
