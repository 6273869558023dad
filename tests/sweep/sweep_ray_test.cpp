// genai sweep --ray on a Ray head started on loopback for the test (its own port and temp
// folder, stopped at the end): a 2 x 2 x 2 matrix of tiny models gives the local run's results
// cell by cell, and a worker killed in the middle of a cell gets the cell run again (with
// retries) or recorded as failed with Ray's reason (without), which a resumed sweep finishes.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "runtime/subprocess.h"
#include "support/cli_json.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"
#include "support/test_requirements.h"

namespace genai::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string python() { return runtime::python_interpreter(); }

struct Process {
  pid_t pid = 0, ppid = 0;
  std::string cmd;  // arguments joined by spaces
};

// Processes whose command line contains `needle`.
std::vector<Process> processes_with(const std::string& needle) {
  std::vector<Process> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmd = read_text(e.path() / "cmdline");
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (cmd.find(needle) == std::string::npos) continue;
    const std::string stat = read_text(e.path() / "stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    pid_t ppid = 0;
    char state = 0;
    if (sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) != 2) continue;
    out.push_back({static_cast<pid_t>(std::stoi(name)), ppid, cmd});
  }
  return out;
}

// A one-node Ray cluster on 127.0.0.1 only (Ray otherwise swaps loopback for the host's outward
// address), with usage reporting off and its memory monitor off (it kills tasks on a loaded host).
class RayHead {
 public:
  RayHead() {
    char tmpl[] = "/tmp/genai-ray-XXXXXX";  // short: Ray's socket paths must fit 107 bytes
    if (!mkdtemp(tmpl)) return;
    temp_ = tmpl;
    port_ = 21000 + static_cast<int>(getpid() % 4000);
    const CliResult r = run_process({"env", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0", "RAY_USAGE_STATS_ENABLED=0",
                                     "RAY_USAGE_STATS_REPORT_URL=http://127.0.0.1:9/", "RAY_memory_monitor_refresh_ms=0",
                                     python(), "-c",
                                     "import sys; from ray.scripts.scripts import main; sys.argv[0] = 'ray'; main()",
                                     "start", "--head", "--node-ip-address=127.0.0.1", "--port=" + std::to_string(port_),
                                     "--num-cpus=2", "--object-store-memory=100000000", "--disable-usage-stats",
                                     "--include-dashboard=false", "--temp-dir=" + temp_});
    started_ = r.exit_code == 0;
    if (!started_) error_ = r.out + r.err;
  }
  ~RayHead() {
    if (temp_.empty()) return;
    // Only this cluster's processes (`ray stop` would stop every cluster on the machine): those
    // naming its folder, raylet first; its workers end with it.
    for (int round = 0; round < 50; ++round) {
      const auto procs = processes_with(temp_);
      if (procs.empty()) break;
      for (const Process& p : procs) kill(p.pid, round < 25 ? SIGTERM : SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    std::error_code ec;
    fs::remove_all(temp_, ec);
  }
  bool started() const { return started_; }
  const std::string& error() const { return error_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  std::string temp_, error_;
  int port_ = 0;
  bool started_ = false;
};

bool ray_installed() { return run_process({python(), "-c", "import ray"}).exit_code == 0; }

// Tiny models, `recipes` on two SoCs.
struct Matrix {
  TempDir dir;
  std::string file = dir.file("matrix.json");
  Matrix(int models, const json& recipes) {
    json m = {{"models", json::array()},
              {"soc_models", {"SM8650", "SM8750"}},
              {"quant_recipes", recipes},
              {"options", {{"max_seq_len", 64}, {"prefill_ar_len", 16}, {"enable_x86_64", true}, {"eval_max_tokens", 96}}},
              {"bench", {{"pp", 16}, {"tg", 4}, {"reps", 1}, {"threads", 1}}}};
    for (int i = 1; i <= models; ++i) {
      const std::string f = dir.file("tiny" + std::to_string(i) + ".gguf");
      const CliResult r = run_genai({"synth", "--shape", "tiny", "--format", "gguf", "--seed", std::to_string(i), "--out", f});
      EXPECT_EQ(r.exit_code, 0) << r.err;
      m["models"].push_back(f);
    }
    std::ofstream(file) << m.dump(1);
  }
};

json results_of(const std::string& out) { return json::parse(read_text(fs::path(out) / "results.json")); }

// What two runs of a cell must agree on: everything but the timings.
void expect_same_cell(const json& a, const json& b) {
  SCOPED_TRACE(a["cell"].get<std::string>());
  ASSERT_EQ(a["cell"], b["cell"]);
  ASSERT_EQ(a["status"], "ok") << a.dump();
  ASSERT_EQ(b["status"], "ok") << b.dump();
  EXPECT_EQ(a["checksums"], b["checksums"]);
  for (const char* k : {"perplexity_float", "perplexity_quantized", "perplexity_ratio", "sqnr_db", "top1_agreed",
                        "eval_tokens", "program_bytes"})
    EXPECT_EQ(a["metrics"][k], b["metrics"][k]) << k;
}

TEST(SweepRay, SlowATwoByTwoByTwoMatrixOnRayGivesTheLocalResultsCellByCell) {
  GENAI_REQUIRE_AVAILABLE(ray_installed(), "the Python package ray (" + python() + ")");
  RayHead head;
  ASSERT_TRUE(head.started()) << head.error();
  Matrix m(2, {"16a8w", "16a4w"});
  const std::string local = m.dir.file("local"), ray = m.dir.file("ray");
  const json l = run_genai_json({"sweep", "--matrix", m.file, "-a", local, "--jobs", "2", "--json"});
  EXPECT_EQ(l["failed"], 0) << l.dump();
  const CliResult r = run_genai_with_env({"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0"},
                                         {"sweep", "--matrix", m.file, "-a", ray, "--ray", head.address(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json a = results_of(local), b = results_of(ray);
  ASSERT_EQ(a["results"].size(), 8u);
  ASSERT_EQ(b["results"].size(), 8u);
  for (size_t i = 0; i < 8; ++i) expect_same_cell(a["results"][i], b["results"][i]);
  EXPECT_NE(read_text(fs::path(ray) / "report.html").find("<svg"), std::string::npos);
}

// Starts the sweep, kills the Ray worker of the first cell it sees running once that cell's
// compile has started, and waits for the sweep; its exit code.
int sweep_killing_one_worker(const std::vector<std::string>& args, std::string* killed_cell) {
  const pid_t sweep = spawn_genai(args);
  if (sweep < 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (killed_cell->empty() && std::chrono::steady_clock::now() < deadline) {
    for (const Process& cell : processes_with(" sweep --cell ")) {
      // The cell is in its compile step once a pipeline child of its genai runs.
      bool compiling = false;
      for (const Process& step : processes_with(" pipeline --config_file ")) compiling = compiling || step.ppid == cell.pid;
      if (!compiling) continue;
      std::string job = cell.cmd.substr(cell.cmd.find(" --cell ") + 8);
      job = job.substr(0, job.find(' '));
      *killed_cell = fs::path(job).stem().string();
      kill(cell.ppid, SIGKILL);  // the Ray worker running the task
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  int status = 0;
  waitpid(sweep, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(SweepRay, SlowAWorkerKilledMidCellIsRetriedOrRecordedAsFailedAndResumingFinishes) {
  GENAI_REQUIRE_AVAILABLE(ray_installed(), "the Python package ray (" + python() + ")");
  RayHead head;
  ASSERT_TRUE(head.started()) << head.error();
  setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0", 1);  // for the sweeps spawned below
  Matrix m(1, {"16a8w"});
  const std::string local = m.dir.file("local");
  run_genai_json({"sweep", "--matrix", m.file, "-a", local, "--json"});

  // With a retry: the killed cell runs again and the sweep completes as the local one did.
  const std::string retried = m.dir.file("retried");
  std::string killed;
  EXPECT_EQ(sweep_killing_one_worker({"sweep", "--matrix", m.file, "-a", retried, "--ray", head.address(),
                                      "--ray_max_retries", "1"},
                                     &killed),
            0);
  ASSERT_FALSE(killed.empty()) << "no cell was seen compiling";
  for (size_t i = 0; i < 2; ++i) expect_same_cell(results_of(local)["results"][i], results_of(retried)["results"][i]);

  // Without: the cell is recorded as failed with Ray's reason, and a resumed sweep finishes it.
  const std::string failed = m.dir.file("failed");
  killed.clear();
  EXPECT_EQ(sweep_killing_one_worker({"sweep", "--matrix", m.file, "-a", failed, "--ray", head.address(),
                                      "--ray_max_retries", "0"},
                                     &killed),
            1);
  ASSERT_FALSE(killed.empty()) << "no cell was seen compiling";
  const std::string& cell = killed;
  const json r = results_of(failed);
  bool found = false;
  for (const json& c : r["results"]) {
    if (c["cell"] != cell) continue;
    found = true;
    EXPECT_EQ(c["status"], "failed");
    EXPECT_EQ(c["failed_step"], "ray");
    EXPECT_NE(c["error"].get<std::string>().find("WorkerCrashedError"), std::string::npos) << c.dump();
  }
  EXPECT_TRUE(found) << cell << " not in " << r.dump();
  const CliResult resumed = run_genai({"sweep", "--matrix", m.file, "-a", failed, "--ray", head.address(), "--json"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(json::parse(resumed.out)["ran"], 1);
  for (size_t i = 0; i < 2; ++i) expect_same_cell(results_of(local)["results"][i], results_of(failed)["results"][i]);
}

}  // namespace
}  // namespace genai::testing
