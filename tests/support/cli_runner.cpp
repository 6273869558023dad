#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/cli_runner.h"

#include <gtest/gtest.h>

namespace genai::testing {

std::string slurp_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {
CliResult run_argv(const std::vector<std::string>& full, bool search_path) {
  TempDir dir;
  const std::string out_path = dir.file("stdout"), err_path = dir.file("stderr");
  pid_t pid = ::fork();
  if (pid == 0) {
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int in = ::open("/dev/null", O_RDONLY);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::dup2(in, 0);
    std::vector<std::string> copy = full;
    std::vector<char*> argv;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (search_path)
      ::execvp(argv[0], argv.data());
    else
      ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp_file(out_path);
  r.err = slurp_file(err_path);
  return r;
}
}  // namespace

std::vector<std::string> genai_command() {
#ifdef GENAI_EXE_EMULATOR
  return {GENAI_EXE_EMULATOR, GENAI_EXE};
#else
  return {GENAI_EXE};
#endif
}

CliResult run_genai(const std::vector<std::string>& args) {
  std::vector<std::string> full = genai_command();
  full.insert(full.end(), args.begin(), args.end());
  return run_argv(full, false);
}

void expect_exit2(const std::vector<std::string>& args, const std::vector<std::string>& words) {
  const auto r = run_genai(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  for (const auto& w : words) EXPECT_NE(r.err.find(w), std::string::npos) << "missing '" << w << "' in: " << r.err;
}

CliResult run_process(const std::vector<std::string>& argv) { return run_argv(argv, true); }

CliResult run_genai_with_env(const std::vector<std::string>& assignments, const std::vector<std::string>& args) {
  std::vector<std::string> full{"/usr/bin/env"};
  full.insert(full.end(), assignments.begin(), assignments.end());
  const auto genai = genai_command();
  full.insert(full.end(), genai.begin(), genai.end());
  full.insert(full.end(), args.begin(), args.end());
  return run_argv(full, false);
}

pid_t spawn_genai(const std::vector<std::string>& args) {
  std::vector<std::string> argv_s = genai_command();
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv_s[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

std::string python_script(const std::string& name) { return std::string(GENAI_SOURCE_DIR) + "/tests/python/" + name; }

std::string default_model_path() {
  const char* env = std::getenv("GENAI_DEFAULT_MODEL");
  std::string p = env ? env : std::string(GENAI_SOURCE_DIR) + "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
  return std::filesystem::exists(p) ? p : std::string();
}

TempDir::TempDir() {
  std::string tmpl = std::string(GENAI_BINARY_DIR) + "/test-tmp";
  std::filesystem::create_directories(tmpl);
  tmpl += "/XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) std::abort();
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace genai::testing
