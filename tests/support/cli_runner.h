// Runs the built `genai` executable in tests: exit code, stdout and stderr.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace genai::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// The argv prefix that starts the built genai: {GENAI_EXE}, or in a cross build whose programs
// run under an emulator (the aarch64 tree under qemu-user, which cannot start a foreign binary
// by itself) {emulator, GENAI_EXE}.
std::vector<std::string> genai_command();
// args are passed without a shell; the executable is genai_command().
CliResult run_genai(const std::vector<std::string>& args);
// Argument lists joined: run_genai(common + {"--json"}).
inline std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
// Runs `genai args...` and expects exit 2 (bad input) with every word of `words` in stderr
// (gtest EXPECTs: the failures name the missing word and show stderr).
void expect_exit2(const std::vector<std::string>& args, const std::vector<std::string>& words);
// Starts `genai args...` without waiting, stdout and stderr to /dev/null (for tests that kill it
// mid-run); returns its pid, or -1 when it cannot be started. The caller reaps it.
pid_t spawn_genai(const std::vector<std::string>& args);
// `env assignments... genai args...`: genai with some environment variables set (PATH=...).
CliResult run_genai_with_env(const std::vector<std::string>& assignments, const std::vector<std::string>& args);
// Any program found on PATH (argv[0]), e.g. {"python3", script, ...} for test-side references.
CliResult run_process(const std::vector<std::string>& argv);
// Path of a test-side Python reference script: tests/python/<name>.
std::string python_script(const std::string& name);
// The embedded default model (GENAI_DEFAULT_MODEL or models/SmolLM2-135M-Instruct.Q4_1.gguf);
// empty when absent.
std::string default_model_path();

// A fresh empty directory under the build tree, removed by the caller's TempDir.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace genai::testing
