// `genai sweep`: every combination of a matrix's models, SoCs, lowerings, recipes and technique
// sets compiled, evaluated and benchmarked, here or on a Ray cluster, into one report.
#include <cstdio>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/error.h"
#include "core/log.h"
#include "core/whole_file.h"
#include "runtime/subprocess.h"
#include "sweep/sweep_cell.h"
#include "sweep/sweep_run.h"

namespace genai::cli {
namespace {

namespace fs = std::filesystem;

struct SweepArgs {
  std::string matrix, artifact, ray, cell;
  int jobs = 1;
  int ray_max_retries = 1;
  bool json = false;
};

int run_one_cell(const SweepArgs& a) {
  const std::optional<std::string> text = read_whole_file(a.cell);
  if (!text) throw_input_error("--cell {}: cannot read the file", a.cell);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::parse_error& e) {
    throw_input_error("--cell {}: not valid JSON: {}", a.cell, e.what());
  }
  const nlohmann::json r = sweep::run_cell(sweep::cell_job_from_json(j, a.cell));
  if (a.json) std::printf("%s\n", r.dump().c_str());
  return r.value("status", "") == "ok" ? 0 : static_cast<int>(ExitCode::kFailure);
}

CommandAction setup_sweep(CLI::App& sub) {
  auto a = std::make_shared<SweepArgs>();
  sub.add_option("--matrix", a->matrix,
                 "Sweep matrix (JSON): lists of models, soc_models, lowerings, quant_recipes and technique sets, common "
                 "options and the benchmark (docs/sweep.md)");
  sub.add_option("-a,--artifact", a->artifact, "Output folder: OUT/<cell>/ per cell, results.json, results.csv, report.html");
  sub.add_option("--jobs", a->jobs, "Cells at a time without --ray (each computes on its bench threads)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub.add_option("--ray", a->ray,
                 "Run each cell as a Ray task on this cluster: auto (the one `ray start` runs here) or HOST:PORT; the "
                 "output folder must be one every node sees");
  sub.add_option("--ray_max_retries", a->ray_max_retries, "Times a cell whose Ray worker died is run again")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub.add_option("--cell", a->cell, "Run one cell from its job file (what a Ray task runs; written by the sweep)");
  sub.add_flag("--json", a->json, "Print one JSON object on stdout");
  return [a]() {
    if (!a->cell.empty()) return run_one_cell(*a);
    if (a->matrix.empty()) throw_input_error("genai sweep needs --matrix FILE (or --cell JOB)");
    if (a->artifact.empty()) throw_input_error("genai sweep needs -a OUT, the folder of the cells and the report");
    const sweep::SweepMatrix m = sweep::read_sweep_matrix(a->matrix);
    sweep::SweepRunOptions o;
    o.out = fs::absolute(a->artifact);
    const std::optional<fs::path> self = runtime::this_executable();
    if (!self) throw_failure("cannot find genai's own executable (/proc/self/exe), which the cells run");
    o.genai = *self;
    o.jobs = a->jobs;
    o.ray = a->ray;
    o.ray_max_retries = a->ray_max_retries;
    const sweep::SweepSummary s = sweep::run_sweep(m, o);
    log::info("sweep: {} cell(s): {} run, {} already complete, {} failed, in {:.1f} s; {}", s.cells, s.ran, s.skipped,
              s.failed, s.seconds, (o.out / "report.html").string());
    if (a->json) {
      nlohmann::json j = {{"cells", s.cells},     {"ran", s.ran},         {"skipped", s.skipped},
                          {"failed", s.failed},   {"seconds", s.seconds}, {"out", o.out.string()},
                          {"results", (o.out / "results.json").string()}, {"report", (o.out / "report.html").string()}};
      std::printf("%s\n", j.dump().c_str());
    }
    return s.failed == 0 ? 0 : static_cast<int>(ExitCode::kFailure);
  };
}

const CommandRegistration kSweep("sweep",
                                 "Compile, evaluate and benchmark every cell of a matrix (models x SoCs x lowerings x "
                                 "recipes x techniques), here or on Ray, into one report",
                                 setup_sweep);

}  // namespace
}  // namespace genai::cli
