#include "runtime/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"
#include "runtime/spawn.h"

namespace genai::runtime {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// After the child has exited, how long its pipes may stay open (a grandchild such as an adb
// server inheriting them) before we stop reading.
constexpr milliseconds kDrainAfterExit{1000};

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (pipe2(fd, O_CLOEXEC) != 0) throw_failure("cannot create a pipe: {}", std::strerror(errno));
  }
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) close(f);
  }
  void close_end(int i) {
    if (fd[i] >= 0) close(fd[i]);
    fd[i] = -1;
  }
};

// Reaps the child on every path out of run_subprocess, killing its group first when it still
// runs (an exception while reading), so no zombie and no orphan is left.
struct Child {
  pid_t pid = -1;
  bool own_group = true;
  bool reaped = false;
  int status = 0;
  bool try_reap() {
    if (reaped) return true;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) reaped = true;
    return reaped;
  }
  void kill_group() {
    if (own_group) kill(-pid, SIGKILL);  // its process group: grandchildren too
    if (!reaped) kill(pid, SIGKILL);
  }
  void reap() {
    while (!reaped) {
      if (waitpid(pid, &status, 0) == pid) reaped = true;
      else if (errno != EINTR) break;
    }
  }
  ~Child() {
    if (pid > 0 && !reaped) {
      kill_group();
      reap();
    }
  }
};

}  // namespace

std::string ProcessResult::describe() const {
  if (timed_out) {
    const auto ms = timeout.count();
    return ms % 1000 == 0 ? fmt::format("timed out after {} s (killed)", ms / 1000)
                          : fmt::format("timed out after {:.3g} s (killed)", ms / 1000.0);
  }
  if (signal != 0) {
    const char* name = sigabbrev_np(signal);
    return name ? fmt::format("killed by signal {} (SIG{})", signal, name) : fmt::format("killed by signal {}", signal);
  }
  return fmt::format("exit {}", exit_code);
}

ProcessResult run_subprocess(const std::vector<std::string>& argv, milliseconds timeout, ProcessGroup group) {
  Pipe out, err;
  // Its own process group, so a deadline kills what it started as well.
  SpawnRequest request;
  request.argv = argv;
  request.fds = {{kSpawnDevNull, 0}, {out.fd[1], 1}, {err.fd[1], 2}};
  request.new_process_group = group == ProcessGroup::kOwn;
  Child child;
  child.own_group = request.new_process_group;
  child.pid = spawn_process(request);  // Failure "cannot run ..."
  out.close_end(1);
  err.close_end(1);

  // Both pipes drained together, so a child filling one of them never blocks.
  ProcessResult r;
  r.timeout = timeout;
  const auto start = Clock::now();
  const auto deadline = timeout > milliseconds(0) ? start + timeout : Clock::time_point::max();
  std::optional<Clock::time_point> exited_at;
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    const auto now = Clock::now();
    if (now >= deadline) {
      r.timed_out = true;
      child.kill_group();
      break;
    }
    if (!exited_at && child.try_reap()) exited_at = now;
    if (exited_at && now - *exited_at >= kDrainAfterExit) break;
    // Short waits: the child's exit is noticed even while a grandchild holds the pipes open.
    auto wait = std::chrono::duration_cast<milliseconds>(deadline - now);
    if (wait > milliseconds(100) || deadline == Clock::time_point::max()) wait = milliseconds(100);
    const int n_ready = poll(fds, 2, static_cast<int>(wait.count()) + 1);
    if (n_ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        const size_t room = kMaxCapturedOutput - std::min(kMaxCapturedOutput, sinks[i]->size());
        if (static_cast<size_t>(n) > room) r.output_truncated = true;
        sinks[i]->append(buf, std::min(room, static_cast<size_t>(n)));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  if (!child.reaped && !r.timed_out) {
    // Pipes closed; the child is exiting. Wait for it within the deadline.
    while (!child.try_reap()) {
      if (Clock::now() >= deadline) {
        r.timed_out = true;
        child.kill_group();
        break;
      }
      usleep(2000);
    }
  }
  child.reap();
  const int status = child.status;
  r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
  return r;
}

std::string printable_tail(std::string_view s, size_t n) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
  const bool cut = s.size() > n;
  if (cut) s = s.substr(s.size() - n);
  std::string out = cut ? "..." : "";
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    // Valid UTF-8 sequences pass; other bytes >= 0x80 are escaped like control characters.
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool valid = len > 0 && i + len <= s.size();
    for (size_t k = 1; valid && k < len; ++k) valid = (static_cast<unsigned char>(s[i + k]) >> 6) == 0x2;
    if (c >= 0x80 && valid) {
      out.append(s.substr(i, len));
      i += len - 1;
    } else if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out;
}

std::string python_interpreter() {
  const char* env = std::getenv("GENAI_PYTHON");
  return env != nullptr && *env != '\0' ? env : "python3";
}

std::optional<std::filesystem::path> this_executable() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  return self;
}

std::optional<std::filesystem::path> find_on_path(std::string_view program, std::string_view path_env) {
  if (program.find('/') != std::string_view::npos) {
    if (access(std::string(program).c_str(), X_OK) == 0) return std::filesystem::path(program);
    return std::nullopt;
  }
  if (path_env.empty()) return std::nullopt;
  size_t start = 0;
  while (start <= path_env.size()) {
    size_t end = path_env.find(':', start);
    if (end == std::string_view::npos) end = path_env.size();
    // An empty entry means the current directory, as for execvp.
    const std::string dir = end > start ? std::string(path_env.substr(start, end - start)) : ".";
    const std::filesystem::path candidate = std::filesystem::path(dir) / program;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace genai::runtime
