#include "orchestrator/pipeline_report.h"

#include <fmt/format.h>

#include "eval/report_figures.h"

namespace genai::orchestrator {
namespace {

using pipeline::kStageCompilation;
using pipeline::kStageInference;
using pipeline::kStageQuantization;

const nlohmann::json& notes_of(const PipelineResult& r, std::string_view stage) {
  static const nlohmann::json empty = nlohmann::json::object();
  for (const auto& s : r.stages) {
    if (s.name == stage) return s.notes;
  }
  return empty;
}

double number_or(const nlohmann::json& j, const char* key, double fallback = 0.0) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

std::string mib(double bytes) { return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0)); }

std::string figure(const nlohmann::json& j, const char* key, const char* unit = "") {
  return eval::figure_text(j.contains(key) ? j[key] : nlohmann::json(), unit);
}

// The inference stage's --eval_methods tasks_eval / sqnr_eval (orchestrator/inference_evaluation.h).
std::string evaluation_text(const nlohmann::json& infer) {
  if (!infer.contains("eval") || !infer["eval"].is_object()) return "";
  const auto& e = infer["eval"];
  std::string out;
  if (e.contains("tasks_eval"))
    for (const auto& [task, t] : e["tasks_eval"].items())
      out += fmt::format("tasks_eval {}: {} window(s) of {} tokens; perplexity float {}, QDQ {}, program {}\n", task,
                         t.value("windows", int64_t{0}), t.value("window_tokens", int64_t{0}),
                         figure(t, "perplexity_float"), figure(t, "perplexity_qdq"), figure(t, "perplexity_program"));
  if (e.contains("sqnr_eval")) {
    const auto& s = e["sqnr_eval"];
    out += fmt::format("sqnr_eval: logits SQNR vs float over {} prompt token(s): QDQ {}, program {}\n",
                       s.value("prompt_tokens", int64_t{0}), figure(s, "sqnr_db_qdq", " dB"),
                       figure(s, "sqnr_db_program", " dB"));
  }
  return out;
}

}  // namespace

nlohmann::json pipeline_report_json(const PipelineResult& r) {
  nlohmann::json j = nlohmann::json::object();
  nlohmann::json stages = nlohmann::json::object();
  for (const auto& s : r.stages) {
    nlohmann::json e = s.notes.is_object() ? s.notes : nlohmann::json::object();
    e["ran"] = s.ran;
    e["seconds"] = s.seconds;
    if (s.ran) e["engine"] = s.engine;
    if (s.failed) e["failed"] = true;
    stages[s.name] = std::move(e);
  }
  j["stages"] = std::move(stages);
  j["artifacts"] = pipeline::artifact_map_to_json(r.artifacts);
  const auto& compile = notes_of(r, kStageCompilation);
  if (compile.contains("planned_bytes"))
    j["memory"] = {{"planned_bytes", compile["planned_bytes"]}, {"lower_bound_bytes", compile.value("lower_bound_bytes", 0)}};
  std::string text;
  for (const auto& t : r.inference.inference_results) text += (text.empty() ? "" : "\n") + t;
  j["text"] = text;
  j["tokens"] = r.inference.tokens;
  const auto& infer = notes_of(r, kStageInference);
  j["stats"] = infer.contains("stats") ? infer["stats"] : nlohmann::json::object();
  nlohmann::json eval = nlohmann::json::object();
  const auto& quant = notes_of(r, kStageQuantization);
  if (quant.contains("eval") && quant["eval"].is_object()) eval = quant["eval"];
  const auto& infer_notes = notes_of(r, kStageInference);
  if (infer_notes.contains("eval") && infer_notes["eval"].is_object()) {
    for (const auto& [k, v] : infer_notes["eval"].items()) eval[k] = v;  // tasks_eval, sqnr_eval
  } else {
    for (const auto& [k, v] : r.inference.eval_results) eval[k] = v;
  }
  j["eval"] = std::move(eval);
  return j;
}

std::string pipeline_report_text(const PipelineResult& r) {
  std::string out = "\n== pipeline summary\n";
  double total = 0.0;
  for (const auto& s : r.stages) {
    total += s.seconds;
    std::string what;
    if (!s.ran) {
      what = "skipped";
      if (s.notes.contains("skipped")) what += fmt::format(" ({})", s.notes["skipped"].get<std::string>());
    } else if (s.failed) {
      what = "FAILED";
    }
    if (s.notes.contains("summary") && s.notes["summary"].is_string())
      what += (what.empty() ? "" : "; ") + s.notes["summary"].get<std::string>();
    out += fmt::format("  {:<18} {:>8.2f} s  {}\n", s.name, s.seconds, what);
  }
  out += fmt::format("  {:<18} {:>8.2f} s\n", "total", total);
  if (!r.artifacts.empty()) {
    out += "artifacts:\n";
    for (const auto& [key, path] : r.artifacts)
      out += fmt::format("  {:<18} {}\n", pipeline::artifact_key_name(key), path.string());
  }
  const auto& compile = notes_of(r, kStageCompilation);
  if (compile.contains("planned_bytes"))
    out += fmt::format("planned memory: {} scratch (lower bound {})\n", mib(number_or(compile, "planned_bytes")),
                       mib(number_or(compile, "lower_bound_bytes")));
  const auto& quant = notes_of(r, kStageQuantization);
  if (quant.contains("eval") && quant["eval"].contains("sqnr_db")) {
    const auto& e = quant["eval"];
    out += fmt::format("SQNR vs float: {:.2f} dB (logits, {} tokens)", number_or(e, "sqnr_db"),
                       static_cast<int64_t>(number_or(e, "eval_tokens")));
    if (e.contains("perplexity_float"))
      out += fmt::format("; perplexity float {:.3f}, quantized {:.3f}", number_or(e, "perplexity_float"),
                         number_or(e, "perplexity_quantized"));
    out += "\n";
  }
  out += evaluation_text(notes_of(r, kStageInference));
  if (!r.inference.inference_results.empty()) {
    for (const auto& t : r.inference.inference_results) out += fmt::format("text: {}\n", t);
    const auto& infer = notes_of(r, kStageInference);
    if (infer.contains("stats")) {
      const auto& st = infer["stats"];
      out += fmt::format("tokens: {} prompt, {} generated; prefill {:.1f} tok/s, decode {:.1f} tok/s, ttft {:.0f} ms\n",
                         static_cast<int64_t>(number_or(st, "prompt_tokens")),
                         static_cast<int64_t>(number_or(st, "generated_tokens")), number_or(st, "prefill_tok_s"),
                         number_or(st, "decode_tok_s"), number_or(st, "ttft_ms"));
    }
  }
  return out;
}

}  // namespace genai::orchestrator
