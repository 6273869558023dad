#include "sweep/sweep_results.h"

#include <fmt/format.h>


namespace genai::sweep {
namespace {

using nlohmann::json;

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_value(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return csv_field(v.get<std::string>());
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());
  return csv_field(v.dump());
}

}  // namespace

const std::vector<std::string>& metric_names() {
  static const std::vector<std::string> names = {
      "perplexity_float", "perplexity_quantized", "perplexity_ratio", "sqnr_db",       "top1_agreed",
      "eval_tokens",      "program_bytes",        "prefill_tok_s",    "decode_tok_s", "peak_rss_mb"};
  return names;
}

const std::vector<std::string>& axis_names() {
  static const std::vector<std::string> names = {"model", "soc_model", "lowering", "quant_recipe", "techniques"};
  return names;
}

json sweep_results_json(const SweepMatrix& matrix, const std::vector<json>& results) {
  int failed = 0;
  for (const json& r : results) failed += r.value("status", "") == "ok" ? 0 : 1;
  return json{{"matrix", matrix.file.string()},
              {"cells", results.size()},
              {"failed", failed},
              {"results", results}};
}

std::string sweep_results_csv(const std::vector<json>& results) {
  std::string out = "cell";
  for (const auto& a : axis_names()) out += "," + a;
  out += ",status";
  for (const auto& m : metric_names()) out += "," + m;
  out += ",seconds,failed_step,exit_code,error\n";
  for (const json& r : results) {
    out += csv_field(r.value("cell", ""));
    const json axes = r.value("axes", json::object());
    for (const auto& a : axis_names()) out += "," + csv_value(axes.value(a, json(nullptr)));
    out += "," + csv_value(r.value("status", json(nullptr)));
    const json metrics = r.value("metrics", json::object());
    for (const auto& m : metric_names()) out += "," + csv_value(metrics.value(m, json(nullptr)));
    for (const char* k : {"seconds", "failed_step", "exit_code", "error"}) out += "," + csv_value(r.value(k, json(nullptr)));
    out += "\n";
  }
  return out;
}

}  // namespace genai::sweep
