#include "orchestrator/stage_plan.h"

#include <algorithm>

#include "pipeline/stage_names.h"

namespace genai::orchestrator {

bool float_program_requested(const options::OptionValues& v) {
  return v.get_flag("use_fp16") || v.get_string("backend") == "gpu" ||
         (v.has_value("quant_recipe") && v.get_string("quant_recipe") == "fp16");
}

SkipPlan plan_skipped_stages(const options::OptionValues& v) {
  SkipPlan plan;
  if (v.has_value("skip_stages")) {
    for (const auto& s : v.get_list("skip_stages")) plan.emplace(s, "--skip_stages");
  }
  // Programs of an earlier run evaluated against the float model (--eval_methods tasks_eval or
  // sqnr_eval with --checkpoint): model_preparation prepares it.
  bool evaluates = false;
  if (v.has_value("eval_methods")) {
    const auto& m = v.get_list("eval_methods");
    const auto asks = [&m](const char* method) { return std::find(m.begin(), m.end(), method) != m.end(); };
    evaluates = asks("tasks_eval") || asks("sqnr_eval");
  }
  const bool float_for_eval = evaluates && v.has_value("checkpoint");
  for (const char* prebuilt : {"pre_gen_pte", "pte"}) {
    if (!v.has_value(prebuilt)) continue;
    for (auto s : {pipeline::kStageModelPreparation, pipeline::kStageQuantization, pipeline::kStageCompilation}) {
      if (float_for_eval && s == pipeline::kStageModelPreparation) continue;
      plan.emplace(std::string(s), std::string("--") + prebuilt);
    }
  }
  if (v.get_flag("compile_only")) plan.emplace(std::string(pipeline::kStageInference), "--compile_only");
  if (float_program_requested(v)) {
    const char* why = v.get_flag("use_fp16") ? "--use_fp16" : v.get_string("backend") == "gpu" ? "--backend gpu" : "--quant_recipe fp16";
    plan.emplace(std::string(pipeline::kStageQuantization), std::string(why) + ": float program");
  }
  return plan;
}

}  // namespace genai::orchestrator
