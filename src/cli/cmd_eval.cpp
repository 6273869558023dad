// `genai eval`: how much accuracy a quantization recipe costs (orchestrator/recipe_evaluation.h:
// the pipeline's model_preparation and quantization stages with eval's settings). Its options are
// the option table's eval scope (src/options); this file only prints the result.
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/json_number.h"
#include "core/log.h"
#include "core/thread_pool.h"
#include "options/cli_options.h"
#include "orchestrator/recipe_evaluation.h"

namespace genai::cli {
namespace {

// Rows of the worst-tensor table in the text output.
constexpr size_t kWorstTensorRows = 15;

nlohmann::json eval_json(const orchestrator::RecipeEvaluation& e) {
  const EvalReport& r = e.report;
  nlohmann::json j;
  j["recipe"] = r.recipe;
  if (!e.lora.empty()) j["lora"] = e.lora;
  j["eval_tokens"] = r.eval_tokens;
  j["eval_windows"] = r.eval_windows;
  j["eval_text"] = e.eval_text;
  if (e.sqnr_eval) {
    j["sqnr_db"] = finite_json_number(r.sqnr_db);
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& t : r.per_layer) layers.push_back({{"name", t.name}, {"sqnr_db", finite_json_number(t.sqnr_db)}});
    j["per_layer"] = layers;
    j["perplexity"] = {{"float", r.perplexity_float}, {"quantized", r.perplexity_quantized}};
    j["top1_agreement"] = {{"tokens", r.eval_tokens}, {"agreed", r.top1_agreed}};
  }
  if (e.prompt_eval)
    j["greedy_agreement"] = {
        {"tokens", r.greedy_tokens}, {"agreed", r.greedy_agreed}, {"common_prefix", r.greedy_common_prefix}};
  j["overrides"] = nlohmann::json::array();
  for (const auto& [pattern, scheme] : r.overrides) j["overrides"].push_back(pattern + "=" + scheme);
  if (e.per_layer) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& t : r.sensitivity) layers.push_back({{"layer", t.name}, {"sqnr_db", finite_json_number(t.sqnr_db)}});
    j["sensitivity"] = layers;
    j["proposed_overrides"] = r.proposed_overrides;
  }
  j["quantize_seconds"] = e.quantize_seconds;
  j["eval_seconds"] = r.seconds;
  return j;
}

void print_text(const orchestrator::RecipeEvaluation& e) {
  const EvalReport& r = e.report;
  std::printf("recipe: %s%s\n", r.recipe.c_str(), e.lora.empty() ? "" : (", LoRA adapter " + e.lora).c_str());
  if (e.sqnr_eval) {
    std::printf("eval text: %s, %lld windows of %lld tokens\n", e.eval_text.c_str(), static_cast<long long>(r.eval_windows),
                static_cast<long long>(r.eval_windows > 0 ? r.eval_tokens / r.eval_windows + 1 : 0));
    std::printf("logits SQNR: %.2f dB over %lld tokens\n", r.sqnr_db, static_cast<long long>(r.eval_tokens));
    std::printf("perplexity: float %.3f, quantized %.3f (delta %+.3f)\n", r.perplexity_float, r.perplexity_quantized,
                r.perplexity_quantized - r.perplexity_float);
    std::printf("top-1 agreement (teacher-forced): %lld / %lld\n", static_cast<long long>(r.top1_agreed),
                static_cast<long long>(r.eval_tokens));
    std::printf("worst tensors (SQNR dB):\n");
    for (size_t i = 0; i < r.per_layer.size() && i < kWorstTensorRows; ++i)
      std::printf("  %8.2f  %s\n", r.per_layer[i].sqnr_db, r.per_layer[i].name.c_str());
  }
  if (e.prompt_eval)
    std::printf("greedy agreement: %lld / %lld tokens (common prefix %lld)\n", static_cast<long long>(r.greedy_agreed),
                static_cast<long long>(r.greedy_tokens), static_cast<long long>(r.greedy_common_prefix));
  if (e.per_layer) {
    std::printf("layer sensitivity (logits SQNR dB with only that layer's weights quantized, worst first):\n");
    for (const auto& t : r.sensitivity) std::printf("  %8.2f  %s\n", t.sqnr_db, t.name.c_str());
    std::printf("proposed overrides:%s\n", r.proposed_overrides.empty() ? " none" : "");
    for (const auto& o : r.proposed_overrides) std::printf("  --quant_override '%s'\n", o.c_str());
  }
  if (e.quantize_seconds > 0) std::printf("quantize time: %.1f s, eval time: %.1f s\n", e.quantize_seconds, r.seconds);
}

int eval_action(const options::OptionValues& values) {
  if (values.get_flag("verbose")) log::set_level(log::Level::kDebug);
  if (const int64_t threads = values.get_int("threads"); threads > 0) ThreadPool::set_global_threads(static_cast<int>(threads));
  const orchestrator::RecipeEvaluation e = orchestrator::evaluate_recipe(values);
  if (values.get_flag("json")) {
    std::printf("%s\n", eval_json(e).dump().c_str());
  } else {
    print_text(e);
  }
  return 0;
}

const CommandRegistration kEval{
    "eval", "Measure the accuracy cost of a quantization recipe (SQNR, perplexity, greedy agreement)",
    [](CLI::App& sub) -> CommandAction {
      auto values = std::make_shared<options::OptionValues>(options::kEvalScope);
      options::add_options_to(sub, *values, options::kEvalScope);
      return [values] { return eval_action(*values); };
    }};

}  // namespace
}  // namespace genai::cli
