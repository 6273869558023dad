// Running a helper program (adb; later the ONNX Runtime bridge) without a shell: the argument
// vector goes to posix_spawn as is, so no argument is ever re-parsed by a shell on this machine.
// Output is captured. The child runs in its own process group with a deadline: past it, the whole
// group is killed; the child is always reaped, so no call leaves a zombie behind.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace genai::runtime {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal number when killed by a signal
  int signal = 0;      // the signal that ended it, 0 when it exited
  bool timed_out = false;  // killed (SIGKILL to its process group) at the deadline
  std::chrono::milliseconds timeout{0};
  bool output_truncated = false;  // more than kMaxCapturedOutput on a stream; the rest was dropped
  std::string out, err;

  bool ok() const { return exit_code == 0 && !timed_out; }
  // "exit 3", "killed by signal 9", "timed out after 30 s (killed)".
  std::string describe() const;
};

inline constexpr size_t kMaxCapturedOutput = 16u << 20;  // per stream
inline constexpr std::chrono::milliseconds kNoTimeout{0};

// kOwn: the child leads a process group of its own, and a deadline kills the group. kCallers: it
// stays in ours, so whoever kills our group (a Ray worker's cleanup, a terminal's Ctrl-C) ends it
// with us; a deadline then kills the child alone.
enum class ProcessGroup { kOwn, kCallers };

// Runs argv[0] (an absolute path, or a name searched on PATH) with argv and waits, at most
// `timeout` (kNoTimeout: no deadline). Failure when the program cannot be started at all.
ProcessResult run_subprocess(const std::vector<std::string>& argv, std::chrono::milliseconds timeout = kNoTimeout,
                             ProcessGroup group = ProcessGroup::kOwn);

// The first executable file named `program` in the ':'-separated directory list `path_env`
// (the PATH value); nullopt when there is none.
std::optional<std::filesystem::path> find_on_path(std::string_view program, std::string_view path_env);

// The Python interpreter helper programs (the QNN bridge, the sweep's Ray driver) run in:
// $GENAI_PYTHON, else `python3` from PATH.
std::string python_interpreter();

// This process's executable (/proc/self/exe), or nullopt when it cannot be read.
std::optional<std::filesystem::path> this_executable();

// Output of a child fit for an error message: the last `n` bytes, trailing blanks dropped,
// control and non-UTF-8 bytes escaped (a child writing garbage must not garble the terminal).
std::string printable_tail(std::string_view s, size_t n = 2000);

}  // namespace genai::runtime
