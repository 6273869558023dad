// What --eval_methods asks of the inference stage beyond prompt_eval (the generation itself):
// tasks_eval, the perplexity of the float model, the QDQ reference and the compiled program over
// windows of local texts (--eval_tasks: files, or the names of texts our scripts install;
// --eval_limit windows each), and sqnr_eval, the logits SQNR of the --prompt tokens against the
// float model. Upstream runs lm-eval tasks from the hub; we read texts on this machine.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/stage_settings.h"

namespace genai::eval {

struct EvalTask {
  std::string name;  // the built-in name, or the file as given
  std::filesystem::path file;
};

struct EvalRequest {
  bool tasks_eval = false;
  bool sqnr_eval = false;
  std::vector<EvalTask> tasks;  // tasks_eval only; default: opticks
  int64_t limit = 1;            // windows per task
  bool any() const { return tasks_eval || sqnr_eval; }
};

// Built-in task names and their texts: `opticks` = Newton's Opticks (Debian's golang-1.19-src
// test data, scripts/install_deps.sh), `genai eval`'s default text.
const std::vector<std::pair<std::string, std::filesystem::path>>& builtin_eval_tasks();

// InputError naming the option: --eval_limit below 1, a task that is neither a built-in name nor
// an existing file (valid names listed), a built-in text that is not installed, --eval_tasks or
// --eval_limit without --eval_methods tasks_eval.
// From the inference settings' --eval_methods, --eval_tasks, --eval_limit
// (orchestrator/stage_settings.h resolves them from the options).
EvalRequest eval_request(const pipeline::EvalRequestSettings& settings);

// The same checks against the stages the run has: the evaluations run in the inference stage,
// and sqnr_eval needs the float model (model_preparation).
void check_eval_plan(const EvalRequest& request, bool infers, bool prepares);

}  // namespace genai::eval
