#include "runtime/worker_process.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"
#include "runtime/spawn.h"
#include "runtime/subprocess.h"

namespace genai::runtime {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr char kMagic[4] = {'G', 'W', 'P', '1'};
constexpr size_t kFrameHeader = 12;
// How long a child that closed its stdout, or was asked to quit, may take to exit before it is killed.
constexpr milliseconds kExitGrace{1000};

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

std::array<uint8_t, kFrameHeader> frame_header(uint64_t n) {
  std::array<uint8_t, kFrameHeader> h{};
  std::memcpy(h.data(), kMagic, 4);
  for (int i = 0; i < 8; ++i) h[4 + i] = static_cast<uint8_t>(n >> (8 * i));
  return h;
}

std::string hex_bytes(const uint8_t* p, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += fmt::format("{:02x}", p[i]);
  return s;
}

}  // namespace

WorkerProcess::WorkerProcess(std::vector<std::string> argv, std::string name) : name_(std::move(name)) {
  if (argv.empty()) throw_failure("internal: starting {} with an empty command", name_);
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  auto close_all = [&] {
    for (int* p : {in, out, err})
      for (int i = 0; i < 2; ++i) close_fd(p[i]);
  };
  // stdin is a socket so that writing to a child that died is EPIPE (MSG_NOSIGNAL), never a
  // SIGPIPE that would end this process.
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
      pipe2(err, O_CLOEXEC) != 0) {
    const int e = errno;
    close_all();
    throw_failure("cannot start {}: cannot create its pipes: {}", name_, std::strerror(e));
  }
  SpawnRequest request;
  request.argv = std::move(argv);
  request.fds = {{in[1], 0}, {out[1], 1}, {err[1], 2}};
  try {
    pid_ = spawn_process(request);  // its own process group: a deadline kills what it started too
  } catch (const Failure& e) {
    close_all();
    throw_failure("cannot start {}: {}", name_, e.what());
  }
  close_fd(in[1]);
  close_fd(out[1]);
  close_fd(err[1]);
  to_child_ = in[0];
  from_child_ = out[0];
  err_child_ = err[0];
  for (int fd : {to_child_, from_child_, err_child_}) set_nonblocking(fd);
  // Larger buffers, fewer wake-ups for tens of MB (best effort: the limits may refuse).
  fcntl(from_child_, F_SETPIPE_SZ, 1 << 20);
  const int sndbuf = 4 << 20;
  setsockopt(to_child_, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
}

WorkerProcess::~WorkerProcess() {
  if (pid_ > 0 && !reaped_) {
    close_fd(to_child_);  // end of input: a well-behaved worker exits now
    const auto until = Clock::now() + kExitGrace;
    while (!try_reap() && Clock::now() < until) {
      drain_stderr();
      usleep(2000);
    }
    kill_and_reap();
  }
  close_fd(to_child_);
  close_fd(from_child_);
  close_fd(err_child_);
}

bool WorkerProcess::try_reap() {
  if (reaped_) return true;
  if (waitpid(pid_, &status_, WNOHANG) == pid_) {
    reaped_ = true;
    signalled_ = WIFSIGNALED(status_) && !killed_by_us_;
  }
  return reaped_;
}

void WorkerProcess::kill_and_reap() {
  if (pid_ <= 0 || reaped_) return;
  killed_by_us_ = true;
  kill(-pid_, SIGKILL);  // the group: whatever the worker started too
  kill(pid_, SIGKILL);
  while (!reaped_) {
    if (waitpid(pid_, &status_, 0) == pid_) reaped_ = true;
    else if (errno != EINTR) break;
  }
}

void WorkerProcess::keep_stderr(const char* data, size_t n) {
  stderr_.append(data, n);
  if (stderr_.size() > 2 * kStderrKeep) stderr_.erase(0, stderr_.size() - kStderrKeep);
}

void WorkerProcess::drain_stderr() {
  char buf[65536];
  while (err_child_ >= 0) {
    const ssize_t n = read(err_child_, buf, sizeof buf);
    if (n > 0) {
      keep_stderr(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      close_fd(err_child_);
    } else {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) close_fd(err_child_);
      return;
    }
  }
}

std::string WorkerProcess::stderr_tail(size_t n) const {
  std::string_view s = stderr_;
  if (s.size() > kStderrKeep) s.remove_prefix(s.size() - kStderrKeep);
  return printable_tail(s, n);
}

std::string WorkerProcess::exit_description() const {
  if (!reaped_) return "still running";
  ProcessResult r;
  r.signal = WIFSIGNALED(status_) ? WTERMSIG(status_) : 0;
  r.exit_code = WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + r.signal;
  return r.describe();
}

void WorkerProcess::fail(std::string message) {
  const std::string tail = stderr_tail();
  if (!tail.empty()) message += fmt::format("; its stderr ends:\n{}", tail);
  failure_ = message;
  throw Failure(std::move(message));
}

std::string WorkerProcess::call(std::string_view what, std::span<const MessagePart> request, milliseconds timeout) {
  if (!failure_.empty()) throw_failure("{}: cannot run {}: the worker failed earlier ({})", name_, what, failure_);
  if (pid_ <= 0 || to_child_ < 0) throw_failure("{}: cannot run {}: the worker is not running", name_, what);
  uint64_t total = 0;
  for (const auto& p : request) total += p.size();
  const auto header = frame_header(total);
  std::vector<iovec> iov;
  iov.push_back({const_cast<uint8_t*>(header.data()), header.size()});
  for (const auto& p : request)
    if (!p.empty()) iov.push_back({const_cast<uint8_t*>(p.data()), p.size()});
  size_t iov_at = 0;  // first iovec not fully sent

  const auto start = Clock::now();
  const auto deadline = timeout > milliseconds(0) ? start + timeout : Clock::time_point::max();
  uint8_t in_header[kFrameHeader];
  size_t header_got = 0;
  std::string body;
  uint64_t body_len = 0;
  size_t body_got = 0;
  bool died = false;
  while (!died) {
    const auto now = Clock::now();
    if (now >= deadline) {
      timed_out_ = true;
      kill_and_reap();
      drain_stderr();
      const auto ms = timeout.count();
      fail(ms % 1000 == 0 ? fmt::format("{}: {} timed out after {} s (killed)", name_, what, ms / 1000)
                          : fmt::format("{}: {} timed out after {:.3g} s (killed)", name_, what, ms / 1000.0));
    }
    const bool writing = iov_at < iov.size();
    pollfd fds[3] = {{writing ? to_child_ : -1, POLLOUT, 0}, {from_child_, POLLIN, 0}, {err_child_, POLLIN, 0}};
    // Short waits, so a child that exited while a grandchild holds its pipes is noticed.
    auto wait = milliseconds(100);
    if (deadline != Clock::time_point::max())
      wait = std::min(wait, std::chrono::duration_cast<milliseconds>(deadline - now) + milliseconds(1));
    const int ready = poll(fds, 3, static_cast<int>(wait.count()));
    if (ready < 0 && errno != EINTR) fail(fmt::format("{}: {}: poll failed: {}", name_, what, std::strerror(errno)));
    if (ready <= 0) {
      if (try_reap()) died = true;
      continue;
    }
    if (fds[2].revents) drain_stderr();
    if (writing && (fds[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
      msghdr msg{};
      msg.msg_iov = iov.data() + iov_at;
      msg.msg_iovlen = std::min<size_t>(iov.size() - iov_at, IOV_MAX);
      const ssize_t n = sendmsg(to_child_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno != EAGAIN && errno != EINTR) died = true;  // EPIPE / ECONNRESET: the child is gone
      } else {
        size_t left = static_cast<size_t>(n);
        while (left > 0 && iov_at < iov.size()) {
          const size_t take = std::min(left, iov[iov_at].iov_len);
          iov[iov_at].iov_base = static_cast<uint8_t*>(iov[iov_at].iov_base) + take;
          iov[iov_at].iov_len -= take;
          left -= take;
          if (iov[iov_at].iov_len == 0) ++iov_at;
        }
      }
    }
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n;
      if (header_got < kFrameHeader) n = read(from_child_, in_header + header_got, kFrameHeader - header_got);
      else n = read(from_child_, body.data() + body_got, body_len - body_got);
      if (n == 0) {
        died = true;
      } else if (n < 0) {
        if (errno != EAGAIN && errno != EINTR) died = true;
      } else if (header_got < kFrameHeader) {
        header_got += static_cast<size_t>(n);
        if (header_got == kFrameHeader) {
          for (int i = 0; i < 8; ++i) body_len |= uint64_t{in_header[4 + i]} << (8 * i);
          if (std::memcmp(in_header, kMagic, 4) != 0 || body_len > kMaxWorkerMessage) {
            kill_and_reap();
            drain_stderr();
            fail(fmt::format("{}: {} failed: the worker answered garbage (frame header {}, expected \"GWP1\" and a "
                             "length up to {} bytes)",
                             name_, what, hex_bytes(in_header, kFrameHeader), kMaxWorkerMessage));
          }
          body.resize(body_len);
        }
      } else {
        body_got += static_cast<size_t>(n);
      }
      if (header_got == kFrameHeader && body_got == body_len) {
        if (iov_at < iov.size()) {
          kill_and_reap();
          drain_stderr();
          fail(fmt::format("{}: {} failed: the worker answered before it had read the request", name_, what));
        }
        drain_stderr();
        return body;
      }
    }
  }
  // The child closed its end: collect what it said, wait for its exit, or kill it.
  const auto until = Clock::now() + kExitGrace;
  while (!try_reap() && Clock::now() < until) {
    drain_stderr();
    usleep(2000);
  }
  kill_and_reap();
  drain_stderr();
  fail(fmt::format("{}: {} failed: the worker ended ({}) before answering", name_, what, exit_description()));
}

}  // namespace genai::runtime
