#include "sweep/sweep_cell.h"

#include <chrono>
#include <initializer_list>
#include <optional>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/log.h"
#include "core/whole_file.h"
#include "runtime/subprocess.h"

namespace genai::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The message a failed genai child gave: its last "error: " line, else the tail of its stderr.
std::string child_error(const runtime::ProcessResult& r) {
  const std::string_view err = r.err;
  size_t end = err.size();
  while (end > 0) {
    size_t start = err.rfind('\n', end - 1);
    start = start == std::string_view::npos ? 0 : start + 1;
    std::string_view line = err.substr(start, end - start);
    if (line.starts_with("error: ")) return runtime::printable_tail(line.substr(7), 1000);
    if (start == 0) break;
    end = start - 1;
  }
  const std::string tail = runtime::printable_tail(r.err, 1000);
  return tail.empty() ? r.describe() : tail;
}

std::optional<json> parse_json(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::parse_error&) {
    return std::nullopt;
  }
}

const json* find_path(const json& j, std::initializer_list<const char*> keys) {
  const json* at = &j;
  for (const char* k : keys) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(k);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

json number_or_null(const json& j, std::initializer_list<const char*> keys) {
  const json* v = find_path(j, keys);
  return v && v->is_number() ? *v : json(nullptr);
}

// The figures a sweep compares cells by, from the steps' JSON and the program's manifest.
json cell_metrics(const json& compile, const json* bench, const json& manifest) {
  json m = json::object();
  m["perplexity_float"] = number_or_null(compile, {"eval", "perplexity_float"});
  m["perplexity_quantized"] = number_or_null(compile, {"eval", "perplexity_quantized"});
  const json& pf = m["perplexity_float"];
  const json& pq = m["perplexity_quantized"];
  m["perplexity_ratio"] = pf.is_number() && pq.is_number() && pf.get<double>() > 0
                              ? json(pq.get<double>() / pf.get<double>())
                              : json(nullptr);
  m["sqnr_db"] = number_or_null(compile, {"eval", "sqnr_db"});
  m["top1_agreed"] = number_or_null(compile, {"eval", "top1_agreed"});
  m["eval_tokens"] = number_or_null(compile, {"eval", "eval_tokens"});
  uint64_t bytes = 0;
  if (const json* c = find_path(manifest, {"checksums"}); c && c->is_object())
    for (const auto& [_, f] : c->items())
      if (f.contains("size") && f["size"].is_number_unsigned()) bytes += f["size"].get<uint64_t>();
  m["program_bytes"] = bytes;
  m["prefill_tok_s"] = nullptr;
  m["decode_tok_s"] = nullptr;
  m["peak_rss_mb"] = nullptr;
  if (bench) {
    if (const json* rows = find_path(*bench, {"results"}); rows && rows->is_array()) {
      for (const json& r : *rows) {
        if (!r.contains("test") || !r["test"].is_string() || !r.contains("mean")) continue;
        const std::string test = r["test"].get<std::string>();
        if (test.starts_with("pp")) m["prefill_tok_s"] = r["mean"];
        if (test.starts_with("tg")) m["decode_tok_s"] = r["mean"];
      }
    }
    m["peak_rss_mb"] = number_or_null(*bench, {"peak_rss_mb"});
  }
  return m;
}

// The program's per-file checksums (the manifest's chunked_xxh3_128): what two runs of a cell
// compare their artifacts by.
json artifact_checksums(const json& manifest) {
  json out = json::object();
  if (const json* c = find_path(manifest, {"checksums"}); c && c->is_object())
    for (const auto& [file, f] : c->items())
      if (f.contains("chunked_xxh3_128")) out[file] = f["chunked_xxh3_128"];
  return out;
}

json base_result(const SweepCell& cell) {
  return json{{"cell", cell.name}, {"axes", cell.axes}, {"options", cell.options}};
}

struct Step {
  runtime::ProcessResult process;
  std::optional<json> output;  // stdout parsed as JSON
};

Step run_step(const CellJob& job, const fs::path& dir, const std::string& name, const std::vector<std::string>& argv) {
  log::info("sweep cell {}: {}", job.cell.name, name);
  // In our process group: a Ray worker killed mid-cell takes its steps with it (Ray kills the
  // worker's group), so no orphaned compile goes on writing into a cell that is run again.
  Step s{runtime::run_subprocess(argv, runtime::kNoTimeout, runtime::ProcessGroup::kCallers), std::nullopt};
  write_file_atomic(dir / (name + ".log"), s.process.err);
  if (s.process.ok()) {
    s.output = parse_json(s.process.out);
    if (s.output) write_file_atomic(dir / (name + ".json"), s.output->dump(1) + "\n");
  }
  return s;
}

json step_failure(const SweepCell& cell, const std::string& step, const Step& s) {
  if (s.process.ok()) return failed_cell_result(cell, step, 0, fmt::format("genai {} printed no JSON", step));
  return failed_cell_result(cell, step, s.process.exit_code, child_error(s.process));
}

}  // namespace

json cell_job_to_json(const CellJob& job) {
  return json{{"cell", {{"name", job.cell.name},
                        {"axes", job.cell.axes},
                        {"options", job.cell.options},
                        {"checkpoint", job.cell.checkpoint.string()},
                        {"checkpoint_bytes", job.cell.checkpoint_bytes}}},
              {"bench", job.bench ? json{{"pp", job.bench->pp},
                                         {"tg", job.bench->tg},
                                         {"reps", job.bench->reps},
                                         {"threads", job.bench->threads}}
                                  : json(false)},
              {"out", job.out.string()},
              {"genai", job.genai.string()}};
}

CellJob cell_job_from_json(const json& j, const std::string& origin) {
  try {
    CellJob job;
    const json& c = j.at("cell");
    job.cell.name = c.at("name").get<std::string>();
    job.cell.axes = c.at("axes");
    job.cell.options = c.at("options");
    job.cell.checkpoint = c.at("checkpoint").get<std::string>();
    job.cell.checkpoint_bytes = c.at("checkpoint_bytes").get<uint64_t>();
    const json& b = j.at("bench");
    if (!b.is_boolean()) {
      job.bench = BenchSettings{b.at("pp").get<int64_t>(), b.at("tg").get<int64_t>(), b.at("reps").get<int64_t>(),
                                b.at("threads").get<int64_t>()};
    }
    job.out = j.at("out").get<std::string>();
    job.genai = j.at("genai").get<std::string>();
    if (job.cell.name.empty() || job.cell.name.find('/') != std::string::npos || job.cell.name.starts_with("."))
      throw_input_error("sweep cell {}: bad cell name '{}'", origin, job.cell.name);
    return job;
  } catch (const json::exception& e) {
    throw_input_error("sweep cell {}: {}", origin, e.what());
  }
}

json failed_cell_result(const SweepCell& cell, const std::string& step, int exit_code, const std::string& error) {
  json r = base_result(cell);
  r["status"] = "failed";
  r["failed_step"] = step;
  r["exit_code"] = exit_code;
  r["error"] = error;
  return r;
}

void write_cell_result(const fs::path& out, const std::string& name, const json& result) {
  fs::create_directories(out / name);
  write_file_atomic(out / name / kCellResultFile, result.dump(1) + "\n");
}

json completed_cell_result(const fs::path& out, const std::string& name) {
  const std::optional<std::string> text = read_whole_file(out / name / kCellResultFile);
  if (!text) return nullptr;
  std::optional<json> j = parse_json(*text);
  if (!j || !j->is_object() || j->value("cell", "") != name || !j->contains("status") || !(*j)["status"].is_string())
    return nullptr;
  return *j;
}

json run_cell(const CellJob& job) {
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path dir = job.out / job.cell.name;
  fs::create_directories(dir);
  // An earlier run's result goes first: until this run writes its own, the cell is unfinished.
  std::error_code ec;
  fs::remove(dir / kCellResultFile, ec);
  remove_stale_temp_files(dir);
  const fs::path options_file = dir / "options.json";
  write_file_atomic(options_file, job.cell.options.dump(1) + "\n");
  const fs::path program = dir / "program";

  json result;
  const Step compile = run_step(job, dir, "compile",
                                {job.genai.string(), "pipeline", "--config_file", options_file.string(), "--compile_only",
                                 "-a", program.string(), "--json"});
  std::optional<Step> bench;
  if (!compile.output) {
    result = step_failure(job.cell, "compile", compile);
  } else {
    if (job.bench) {
      const BenchSettings& b = *job.bench;
      bench = run_step(job, dir, "bench",
                       {job.genai.string(), "bench", "-a", program.string(), "--pp", std::to_string(b.pp), "--tg",
                        std::to_string(b.tg), "--reps", std::to_string(b.reps), "--threads", std::to_string(b.threads),
                        "--json"});
    }
    if (bench && !bench->output) {
      result = step_failure(job.cell, "bench", *bench);
    } else {
      const std::optional<std::string> manifest_text = read_whole_file(program / "manifest.json");
      const json manifest = manifest_text ? parse_json(*manifest_text).value_or(json::object()) : json::object();
      result = base_result(job.cell);
      result["status"] = "ok";
      result["metrics"] = cell_metrics(*compile.output, bench && bench->output ? &*bench->output : nullptr, manifest);
      result["checksums"] = artifact_checksums(manifest);
    }
  }
  result["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  write_cell_result(job.out, job.cell.name, result);
  return result;
}

}  // namespace genai::sweep
