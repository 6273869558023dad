#include "sweep/sweep_run.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/log.h"
#include "runtime/subprocess.h"
#include "sweep/ray_driver_source.h"
#include "sweep/sweep_cell.h"
#include "sweep/sweep_report_html.h"
#include "sweep/sweep_results.h"

namespace genai::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Folder of the jobs handed to Ray tasks (hidden: it is not a cell).
constexpr const char* kJobsFolder = ".jobs";

CellJob job_for(const SweepMatrix& m, const SweepCell& cell, const SweepRunOptions& o) {
  return CellJob{cell, m.bench, o.out, o.genai};
}

void run_local(const SweepMatrix& m, const std::vector<const SweepCell*>& cells, const SweepRunOptions& o) {
  std::atomic<size_t> next{0};
  std::mutex log_mutex;
  auto worker = [&] {
    for (size_t i = next++; i < cells.size(); i = next++) {
      const json r = run_cell(job_for(m, *cells[i], o));
      std::lock_guard<std::mutex> lock(log_mutex);
      log::info("sweep: {} {} ({:.1f} s){}", cells[i]->name, r.value("status", "?"), r.value("seconds", 0.0),
                r.contains("error") ? ": " + r["error"].get<std::string>() : "");
    }
  };
  const int jobs = std::max(1, std::min<int>(o.jobs, static_cast<int>(cells.size())));
  std::vector<std::thread> threads;
  for (int t = 1; t < jobs; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
}

// Each line the driver printed for a finished cell, by cell name.
std::map<std::string, json> driver_lines(const std::string& out) {
  std::map<std::string, json> lines;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    try {
      json j = json::parse(out.substr(start, end - start));
      if (j.is_object() && j.contains("cell") && j["cell"].is_string()) {
        const std::string name = j["cell"].get<std::string>();
        lines[name] = std::move(j);
      }
    } catch (const json::parse_error&) {
    }
    start = end + 1;
  }
  return lines;
}

void run_on_ray(const SweepMatrix& m, const std::vector<const SweepCell*>& cells, const SweepRunOptions& o) {
  const fs::path jobs = o.out / kJobsFolder;
  fs::create_directories(jobs);
  json spec = {{"address", o.ray}, {"max_retries", o.ray_max_retries}, {"cells", json::array()}};
  for (const SweepCell* c : cells) {
    const fs::path job_file = jobs / (c->name + ".json");
    write_file_atomic(job_file, cell_job_to_json(job_for(m, *c, o)).dump(1) + "\n");
    spec["cells"].push_back({{"name", c->name},
                             {"argv", {o.genai.string(), "sweep", "--cell", job_file.string()}},
                             {"num_cpus", cell_cpus(*c)},
                             {"memory", estimated_cell_memory(*c)}});
  }
  const fs::path spec_file = jobs / "ray_spec.json";
  write_file_atomic(spec_file, spec.dump(1) + "\n");
  log::info("sweep: {} cell(s) to Ray at {}", cells.size(), o.ray);
  const std::string python = runtime::python_interpreter();
  const runtime::ProcessResult r =
      runtime::run_subprocess({python, "-c", std::string(ray_driver_source()), spec_file.string()});
  const std::map<std::string, json> lines = driver_lines(r.out);
  if (!r.ok() && lines.empty()) {
    const std::string tail = runtime::printable_tail(r.err, 1500);
    if (tail.find("No module named 'ray'") != std::string::npos)
      throw_input_error("--ray needs the Python package ray for {} (python3 -m pip install ray; GENAI_PYTHON names "
                        "another interpreter)",
                        python);
    throw_failure("--ray {}: the Ray driver failed ({}): {}", o.ray, r.describe(), tail);
  }
  // A cell without its result.json never finished: its worker died on every attempt (the
  // driver's line says how), or the driver itself stopped before it.
  for (const SweepCell* c : cells) {
    if (!completed_cell_result(o.out, c->name).is_null()) {
      if (auto it = lines.find(c->name); it != lines.end() && it->second.contains("node") && it->second["node"].is_string())
        log::info("sweep: {} ran on Ray node {}", c->name, it->second["node"].get<std::string>().substr(0, 12));
      continue;
    }
    auto it = lines.find(c->name);
    const std::string why = it == lines.end() ? fmt::format("the Ray driver ended ({}) before the cell did", r.describe())
                                              : it->second.value("error", std::string("no result"));
    log::warn("sweep: {} failed on Ray: {}", c->name, why);
    const int code = it != lines.end() && it->second["exit_code"].is_number_integer() ? it->second["exit_code"].get<int>() : -1;
    write_cell_result(o.out, c->name, failed_cell_result(*c, "ray", code, why));
  }
}

}  // namespace

int cell_cpus(const SweepCell& cell) {
  int64_t threads = 1;
  if (auto it = cell.options.find("threads"); it != cell.options.end() && it->is_number_integer()) threads = it->get<int64_t>();
  if (threads <= 0) threads = std::max<long>(1, sysconf(_SC_NPROCESSORS_ONLN));
  return static_cast<int>(threads);
}

SweepSummary run_sweep(const SweepMatrix& m, const SweepRunOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  fs::create_directories(o.out);
  SweepSummary s;
  s.cells = static_cast<int>(m.cells.size());
  std::vector<const SweepCell*> pending;
  for (const SweepCell& c : m.cells) {
    const json done = completed_cell_result(o.out, c.name);
    if (!done.is_null() && done["status"] == "ok") {
      ++s.skipped;
    } else {
      pending.push_back(&c);
    }
  }
  log::info("sweep {}: {} cell(s), {} already complete, {} to run{}", m.file.string(), s.cells, s.skipped, pending.size(),
            o.ray.empty() ? fmt::format(" here, {} at a time", o.jobs) : fmt::format(" on Ray ({})", o.ray));
  if (!pending.empty()) {
    if (o.ray.empty()) {
      run_local(m, pending, o);
    } else {
      run_on_ray(m, pending, o);
    }
  }
  s.ran = static_cast<int>(pending.size());
  std::vector<json> results;
  for (const SweepCell& c : m.cells) {
    json r = completed_cell_result(o.out, c.name);
    if (r.is_null()) r = failed_cell_result(c, "sweep", -1, "the cell left no result");
    if (r["status"] != "ok") ++s.failed;
    results.push_back(std::move(r));
  }
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.results = sweep_results_json(m, results);
  write_file_atomic(o.out / "results.json", s.results.dump(1) + "\n");
  write_file_atomic(o.out / "results.csv", sweep_results_csv(results));
  write_file_atomic(o.out / "report.html", render_sweep_report_html(m, results));
  return s;
}

}  // namespace genai::sweep
