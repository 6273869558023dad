// Which stages a run skips, and why, from its options (as upstream's llama.py decides):
//   --skip_stages S...       the named stages
//   --pre_gen_pte DIR        everything but inference (programs of an earlier run); with
//                            --checkpoint and --eval_methods tasks_eval|sqnr_eval,
//                            model_preparation runs too (the float side of the evaluation)
//   --pte FILE               the same for a lone program (no manifest)
//   --compile_only           inference
//   --use_fp16, --backend gpu, --quant_recipe fp16
//                            quantization: compilation then takes the float graphs
#pragma once

#include <map>
#include <string>

#include "options/option_values.h"

namespace genai::orchestrator {

// stage name -> reason ("--compile_only", ...); stages absent from the map run.
using SkipPlan = std::map<std::string, std::string, std::less<>>;

SkipPlan plan_skipped_stages(const options::OptionValues& values);

// True when the options ask for a float program (no quantization): fp16 HTP, GPU, fp16 recipe.
bool float_program_requested(const options::OptionValues& values);

}  // namespace genai::orchestrator
