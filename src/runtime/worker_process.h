// A long-lived helper program (the ONNX Runtime bridge) that answers requests over its stdin and
// stdout. Started without a shell (posix_spawn, its own process group); each message in either
// direction is one frame: 4 magic bytes "GWP1", a little-endian uint64 length, the bytes. The
// child's stderr is kept (the last kStderrKeep bytes) for error messages. Every request has a
// deadline; past it, or when the child dies or answers garbage, its process group is killed, it
// is reaped, and the call throws Failure naming the request. A worker that failed once stays
// failed: later calls throw at once.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace genai::runtime {

inline constexpr size_t kStderrKeep = 64u << 10;
inline constexpr uint64_t kMaxWorkerMessage = uint64_t{4} << 30;  // a longer frame is garbage

// A request is sent as the concatenation of its parts, so large tensors are never copied.
using MessagePart = std::span<const uint8_t>;

class WorkerProcess {
 public:
  // Starts argv (argv[0] absolute, or searched on PATH). `name` names the worker in messages
  // ("the QNN bridge"). Failure when it cannot be started.
  WorkerProcess(std::vector<std::string> argv, std::string name);
  // Closes its stdin (the signal to quit), waits briefly, kills its group, reaps it.
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends one message and returns the one message the child answers, at most `timeout` after the
  // call (0: no deadline). `what` names the request in errors ("compile of 2 models").
  std::string call(std::string_view what, std::span<const MessagePart> request, std::chrono::milliseconds timeout);

  bool running() const { return pid_ > 0 && failure_.empty(); }
  // After a failed call: true when the worker was killed by a signal this object did not send, or
  // hung past a deadline. Such a failure says nothing about whether the program can do the work
  // (a caller that maps "cannot run the worker" to bad input must not map this one).
  bool died_of_a_signal_or_hung() const { return signalled_ || timed_out_; }
  pid_t pid() const { return pid_; }
  const std::string& name() const { return name_; }
  // What the child wrote to stderr so far (its tail), fit for a message.
  std::string stderr_tail(size_t n = 2000) const;

 private:
  [[noreturn]] void fail(std::string message);
  void kill_and_reap();
  bool try_reap();
  void drain_stderr();
  void keep_stderr(const char* data, size_t n);
  std::string exit_description() const;

  std::string name_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  int to_child_ = -1;    // our end of the child's stdin (a socket: a write to a dead child is EPIPE, not SIGPIPE)
  int from_child_ = -1;  // the child's stdout
  int err_child_ = -1;   // the child's stderr
  std::string stderr_;
  std::string failure_;  // set once a call failed
  bool killed_by_us_ = false;
  bool signalled_ = false;  // reaped after a signal that kill_and_reap did not send
  bool timed_out_ = false;
};

}  // namespace genai::runtime
