// Crash consistency of artifact dirs: `genai compile` SIGKILLed at random moments over a dir that
// holds a complete set from another compile. Afterwards the dir holds exactly the previous
// complete set or the new one (every visible file byte for byte), and `genai run -a` on it runs
// that set (the same tokens as the set's reference dir). Two different compiles (16a8w and 16a4w)
// alternate as "previous" and "new".
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/cli_runner.h"
#include "support/sanitizers.h"

extern char** environ;

namespace genai {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using testing::run_genai;

std::vector<std::string> compile_args(const std::string& checkpoint, const std::string& recipe, const std::string& out) {
  return {"compile", "--checkpoint", checkpoint, "--soc_model", "SM8650", "--lowering", "genai", "--backend", "htp", "--model_mode", "hybrid",
          "--max_seq_len", "64", "--prefill_ar_len", "16", "--quant_recipe", recipe, "-a", out};
}

// The visible files of a dir (hidden leftovers of a killed writer are not part of a set).
using FileSet = std::map<std::string, std::string>;
FileSet visible_files(const fs::path& dir) {
  FileSet files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::ifstream in(e.path(), std::ios::binary);
    files[name] = std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  return files;
}

bool has_hidden_sibling(const fs::path& dir) {
  const std::string prefix = "." + dir.filename().string() + ".";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir.parent_path(), ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0) return true;
  return false;
}

// What `genai run -a dir` generates, greedily: exit code and tokens.
std::pair<int, std::string> run_tokens(const std::string& dir) {
  const auto r = run_genai({"run", "-a", dir, "--prompt", "hi", "--max_new_tokens", "6", "--temperature", "0", "--json"});
  if (r.exit_code != 0) return {r.exit_code, r.err};
  return {0, nlohmann::json::parse(r.out)["tokens"].dump()};
}

// How long a compile over a complete set keeps its staged copy: from the copy's appearance to the
// process's exit (the swap happens at the end of it).
double write_window_seconds(const std::vector<std::string>& args, const fs::path& dir) {
  const pid_t pid = testing::spawn_genai(args);
  int status = 0;
  std::optional<Clock::time_point> staged;
  while (::waitpid(pid, &status, WNOHANG) != pid) {
    if (!staged && has_hidden_sibling(dir)) staged = Clock::now();
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return staged ? std::chrono::duration<double>(Clock::now() - *staged).count() : 0.0;
}

struct CompleteSet {
  std::string recipe;
  FileSet files;
  std::string tokens;
};

void kill_compiles_at_random_points(int rounds) {
  testing::TempDir tmp;
  const std::string checkpoint = tmp.file("tiny.gguf");
  ASSERT_EQ(run_genai({"synth", "--shape", "tiny", "--seed", "5", "--out", checkpoint}).exit_code, 0);
  CompleteSet sets[2] = {{"16a8w", {}, {}}, {"16a4w", {}, {}}};
  double compile_seconds = 0;
  for (auto& set : sets) {
    const std::string ref = tmp.file("ref_" + set.recipe);
    const auto start = Clock::now();
    const auto r = run_genai(compile_args(checkpoint, set.recipe, ref));
    compile_seconds = std::max(compile_seconds, std::chrono::duration<double>(Clock::now() - start).count());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    set.files = visible_files(ref);
    const auto [code, tokens] = run_tokens(ref);
    ASSERT_EQ(code, 0) << tokens;
    set.tokens = tokens;
  }
  ASSERT_NE(sets[0].files, sets[1].files);
  const std::string ref0 = tmp.file("ref_" + sets[0].recipe);
  const double window = write_window_seconds(compile_args(checkpoint, sets[0].recipe, ref0), ref0);
  ASSERT_EQ(visible_files(ref0), sets[0].files);

  const std::string art = tmp.file("art");
  ASSERT_EQ(run_genai(compile_args(checkpoint, sets[0].recipe, art)).exit_code, 0);
  ASSERT_EQ(visible_files(art), sets[0].files);
  int current = 0;
  int kept_previous = 0, got_new = 0, finished_first = 0, killed_while_staging = 0;
  std::mt19937 rng(2021);
  for (int round = 0; round < rounds; ++round) {
    const int next = 1 - current;
    const pid_t pid = testing::spawn_genai(compile_args(checkpoint, sets[next].recipe, art));
    ASSERT_GT(pid, 0);
    int status = 0;
    bool exited = false;
    if (round % 2 == 0) {
      // Anywhere in the run, uniformly (or after it: some rounds must finish, to have new sets).
      std::this_thread::sleep_for(std::chrono::duration<double>(compile_seconds * 2.5 * (rng() % 1000) / 1000.0));
    } else {
      // In the write window: as soon as the staged copy appears, then a random moment later.
      const auto deadline = Clock::now() + std::chrono::seconds(30);
      while (Clock::now() < deadline && !has_hidden_sibling(art)) {
        if (::waitpid(pid, &status, WNOHANG) == pid) {
          exited = true;
          break;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
      if (!exited) {
        ++killed_while_staging;
        std::this_thread::sleep_for(std::chrono::duration<double>(window * 1.2 * (rng() % 1000) / 1000.0));
      }
    }
    if (!exited) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
    if (WIFEXITED(status)) ++finished_first;

    const FileSet now = visible_files(art);
    int holds = -1;
    for (int s = 0; s < 2; ++s)
      if (now == sets[s].files) holds = s;
    ASSERT_NE(holds, -1) << "round " << round << ": the dir holds neither complete set (" << now.size() << " files)";
    (holds == current ? kept_previous : got_new)++;
    const auto [code, tokens] = run_tokens(art);
    ASSERT_EQ(code, 0) << "round " << round << ": " << tokens;
    EXPECT_EQ(tokens, sets[holds].tokens) << "round " << round;
    current = holds;
  }
  std::printf("%d kills: %d kept the previous set, %d the new one (%d finished before the kill, %d aimed at the %.1f ms "
              "write window)\n",
              rounds, kept_previous, got_new, finished_first, killed_while_staging, window * 1000);
  EXPECT_GT(kept_previous, 0);
  EXPECT_GT(got_new, 0);

  // The next compile removes what killed ones left.
  ASSERT_EQ(run_genai(compile_args(checkpoint, sets[1 - current].recipe, art)).exit_code, 0);
  EXPECT_EQ(visible_files(art), sets[1 - current].files);
  EXPECT_FALSE(has_hidden_sibling(art));
  for (const auto& e : fs::directory_iterator(art)) EXPECT_NE(e.path().filename().string()[0], '.') << e.path();
}

TEST(CrashConsistency, CompileKilledAtRandomPointsLeavesThePreviousOrTheNewSet) {
  kill_compiles_at_random_points(testing::rounds(20, 5));
}

TEST(CrashConsistency, LongCompileKilledAtRandomPointsLeavesThePreviousOrTheNewSet) { kill_compiles_at_random_points(200); }

}  // namespace
}  // namespace genai
