// The end-of-run summary of `genai pipeline`, as text and as one JSON object:
//   {"stages": {name: {"ran", "seconds", "engine", ...notes}}, "artifacts": {key: path},
//    "memory": {"planned_bytes", "lower_bound_bytes"}, "text", "tokens", "stats", "eval"}
// Stage notes follow a few conventions the report reads: any stage's "summary" (one line shown
// next to its time), compilation's "planned_bytes"/"lower_bound_bytes", quantization's "eval"
// (SQNR and perplexity against float), inference's "stats" (generation_json's stats object) and
// "eval" (--eval_methods tasks_eval / sqnr_eval, merged into "eval" next to quantization's).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "orchestrator/genai_pipeline.h"

namespace genai::orchestrator {

nlohmann::json pipeline_report_json(const PipelineResult& result);
std::string pipeline_report_text(const PipelineResult& result);

}  // namespace genai::orchestrator
