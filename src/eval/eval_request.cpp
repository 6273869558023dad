#include "eval/eval_request.h"

#include <algorithm>

#include "core/error.h"
#include "eval/quant_evaluation.h"

namespace genai::eval {
namespace {

std::string builtin_names() {
  std::string s;
  for (const auto& [name, file] : builtin_eval_tasks()) s += (s.empty() ? "" : ", ") + name;
  return s;
}

EvalTask resolve_task(const std::string& given) {
  for (const auto& [name, file] : builtin_eval_tasks()) {
    if (given != name) continue;
    if (!std::filesystem::exists(file))
      throw_input_error("--eval_tasks {}: its text {} is missing (Debian package {}: scripts/install_deps.sh installs "
                        "it); or give a text file",
                        name, file.string(), default_eval_text_package());
    return {name, file};
  }
  if (std::filesystem::is_regular_file(given)) return {given, given};
  throw_input_error("--eval_tasks: '{}' is neither a text file nor a built-in task (valid names: {})", given,
                    builtin_names());
}

}  // namespace

const std::vector<std::pair<std::string, std::filesystem::path>>& builtin_eval_tasks() {
  static const std::vector<std::pair<std::string, std::filesystem::path>> tasks = {
      {"opticks", default_eval_text_file()}};
  return tasks;
}

EvalRequest eval_request(const pipeline::EvalRequestSettings& s) {
  EvalRequest r;
  const auto& methods = s.methods;
  r.tasks_eval = std::find(methods.begin(), methods.end(), "tasks_eval") != methods.end();
  r.sqnr_eval = std::find(methods.begin(), methods.end(), "sqnr_eval") != methods.end();
  const bool tasks_given = s.tasks_given, limit_given = s.limit.given;
  if (!r.tasks_eval && (tasks_given || limit_given))
    throw_input_error("--{} applies to --eval_methods tasks_eval, which this run does not ask for (add it to "
                      "--eval_methods)",
                      tasks_given ? "eval_tasks" : "eval_limit");
  if (!r.tasks_eval) return r;
  r.limit = s.limit.value;
  if (r.limit < 1) throw_input_error("--eval_limit must be >= 1 (windows per task), got {}", r.limit);
  const std::vector<std::string> names = s.tasks ? *s.tasks : std::vector<std::string>{builtin_eval_tasks().front().first};
  if (names.empty()) throw_input_error("--eval_tasks: no task given (valid names: {}, or text files)", builtin_names());
  for (const auto& n : names) r.tasks.push_back(resolve_task(n));
  return r;
}

void check_eval_plan(const EvalRequest& r, bool infers, bool prepares) {
  if (!r.any()) return;
  const char* method = r.tasks_eval ? "tasks_eval" : "sqnr_eval";
  if (!infers)
    throw_input_error("--eval_methods {} runs in the inference stage, which this run skips (--compile_only, "
                      "--skip_stages or the command)",
                      method);
  if (r.sqnr_eval && !prepares)
    throw_input_error("--eval_methods sqnr_eval compares the programs with the float model: give --checkpoint with "
                      "-a/--pre_gen_pte/--pte");
}

}  // namespace genai::eval
