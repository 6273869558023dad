// `genai run -a DIR --chat` on a pseudo-terminal, as a person uses it: a "> " cue, a typed line,
// the streamed answer, the next cue; Ctrl-D ends it. The conversation prefills and generates what
// the same turns given as --prompt values do (the cache carries over between typed turns too).
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace genai {
namespace {

using testing::run_genai;

// A child on a pty: what it printed (stdout and stderr share the terminal), typed input.
class PtyChild {
 public:
  explicit PtyChild(const std::vector<std::string>& args) {
    std::vector<std::string> argv_s = testing::genai_command();
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    pid_ = forkpty(&master_, nullptr, nullptr, nullptr);
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (auto& s : argv_s) argv.push_back(s.data());
      argv.push_back(nullptr);
      execvp(argv[0], argv.data());
      _exit(127);
    }
  }
  ~PtyChild() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (master_ >= 0) close(master_);
  }
  bool started() const { return pid_ > 0; }
  void type(const std::string& s) { ASSERT_EQ(write(master_, s.data(), s.size()), static_cast<ssize_t>(s.size())); }
  // Reads until `count` occurrences of `text` have been printed in all, or 60 s pass.
  bool wait_for(const std::string& text, size_t count) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (occurrences(text) < count) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      pollfd p{master_, POLLIN, 0};
      if (poll(&p, 1, 200) <= 0) continue;
      char buf[4096];
      const ssize_t n = read(master_, buf, sizeof buf);
      if (n <= 0) return occurrences(text) >= count;  // the child closed the terminal
      out_.append(buf, static_cast<size_t>(n));
    }
    return true;
  }
  int wait_exit() {
    wait_for("\x01never\x01", 1);  // drain until the terminal closes
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  const std::string& output() const { return out_; }

 private:
  size_t occurrences(const std::string& text) const {
    size_t n = 0;
    for (size_t at = out_.find(text); at != std::string::npos; at = out_.find(text, at + text.size())) ++n;
    return n;
  }
  pid_t pid_ = -1;
  int master_ = -1;
  bool reaped_ = false;
  std::string out_;
};

int64_t stat_line(const std::string& out, const char* name) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(std::string(name) + ": ([0-9]+)"))) return -1;
  return std::stoll(m[1].str());
}

TEST(ChatCli, TypedTurnsStreamAnswersAndMatchTheSamePromptsGivenUpFront) {
  testing::TempDir dir;
  const std::string model = dir.file("s.gguf"), art = dir.file("art");
  ASSERT_EQ(run_genai({"synth", "--shape", "tiny", "--format", "gguf", "--seed", "2", "--out", model}).exit_code, 0);
  const auto compiled = run_genai({"pipeline", "--checkpoint", model, "--soc_model", "SM8650", "--lowering", "genai", "--compile_only", "-a", art,
                                   "--max_seq_len", "256", "--prefill_ar_len", "16"});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  const std::vector<std::string> settings = {"--temperature", "0", "--max_new_tokens", "6", "--threads", "1"};

  std::vector<std::string> chat_args = {"run", "-a", art, "--chat"};
  chat_args.insert(chat_args.end(), settings.begin(), settings.end());
  PtyChild chat(chat_args);
  ASSERT_TRUE(chat.started());
  ASSERT_TRUE(chat.wait_for("> ", 1)) << chat.output();
  chat.type("Hello there\n");
  ASSERT_TRUE(chat.wait_for("> ", 2)) << chat.output();
  chat.type("Tell me more\n");
  ASSERT_TRUE(chat.wait_for("> ", 3)) << chat.output();
  chat.type("\x04");  // Ctrl-D: end of input
  EXPECT_EQ(chat.wait_exit(), 0) << chat.output();

  std::vector<std::string> given = {"run", "-a", art, "--prompt", "Hello there", "--prompt", "Tell me more", "--json"};
  given.insert(given.end(), settings.begin(), settings.end());
  const auto up_front = run_genai(given);
  ASSERT_EQ(up_front.exit_code, 0) << up_front.err;
  const auto j = nlohmann::json::parse(up_front.out);
  // The same tokens prefilled (the second turn only its own text) and generated.
  EXPECT_EQ(stat_line(chat.output(), "prompt tokens"), j["stats"]["prompt_tokens"].get<int64_t>()) << chat.output();
  EXPECT_EQ(stat_line(chat.output(), "generated tokens"), j["stats"]["generated_tokens"].get<int64_t>())
      << chat.output();
}

TEST(ChatCli, ChatRefusesJsonAndDevice) {
  testing::expect_exit2({"run", "-a", "/nonexistent", "--chat", "--json"}, {"--chat", "--json"});
  testing::expect_exit2({"run", "-a", "/nonexistent", "--chat", "--device", "X"}, {"--chat", "--device"});
}

}  // namespace
}  // namespace genai
