// The long-lived worker (the ONNX Runtime bridge's transport): a framed request/response round
// trip, tens of MB both ways without deadlock, and every way a worker can go wrong (dying mid-
// request, hanging past the deadline, answering garbage, exiting before reading) is a Failure
// naming the request, with the worker's exit and the tail of its stderr; no child is left behind.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.h"
#include "runtime/worker_process.h"
#include "support/process_checks.h"

namespace genai {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using runtime::MessagePart;
using runtime::WorkerProcess;

// A worker in Python that reads GWP1 frames; the first 4 bytes of a request say what to do.
constexpr const char* kChild = R"PY(
import os, struct, sys, time
def read_exactly(n):
    buf = bytearray(n); view = memoryview(buf); got = 0
    while got < n:
        k = os.readv(0, [view[got:]])
        if k == 0: sys.exit(0)
        got += k
    return buf
def send(b):
    view = memoryview(b'GWP1' + struct.pack('<Q', len(b)) + b)
    while view: view = view[os.write(1, view):]
while True:
    h = read_exactly(12)
    assert h[:4] == b'GWP1'
    body = read_exactly(struct.unpack('<Q', h[4:])[0])
    cmd = bytes(body[:4])
    if cmd == b'echo': send(bytes(body))
    elif cmd == b'die!':
        sys.stderr.write('the worker says goodbye\n'); sys.stderr.flush(); os._exit(3)
    elif cmd == b'kill': os.kill(os.getpid(), 9)
    elif cmd == b'hang': time.sleep(60)
    elif cmd == b'garb': os.write(1, b'this is not a frame at all')
    elif cmd == b'chat':
        sys.stderr.write('x' * (1 << 20)); sys.stderr.flush(); send(b'ok')
)PY";

std::vector<std::string> child_argv() { return {"python3", "-c", kChild}; }

std::string call(WorkerProcess& w, std::string_view what, const std::string& body, std::chrono::milliseconds t = 10s) {
  const MessagePart part(reinterpret_cast<const uint8_t*>(body.data()), body.size());
  return w.call(what, std::span(&part, 1), t);
}

// Message of the Failure `f` throws (empty when it throws nothing or something else).
template <typename F>
std::string failure_of(F&& f) {
  try {
    f();
  } catch (const Failure& e) {
    return e.what();
  }
  return "";
}

TEST(WorkerProcess, EchoRoundTripsAndEndsCleanly) {
  {
    WorkerProcess w(child_argv(), "the echo worker");
    EXPECT_TRUE(w.running());
    for (int i = 0; i < 3; ++i) EXPECT_EQ(call(w, "echo", "echo " + std::to_string(i)), "echo " + std::to_string(i));
    // Several parts make one message; empty parts are fine.
    const std::string a = "echo", b, c = " in parts";
    const MessagePart parts[] = {{reinterpret_cast<const uint8_t*>(a.data()), a.size()}, {},
                                 {reinterpret_cast<const uint8_t*>(c.data()), c.size()}};
    EXPECT_EQ(w.call("parts", parts, 10s), "echo in parts");
  }
  testing::expect_no_children();
}

TEST(WorkerProcess, AChildDyingMidRequestIsAFailureWithItsExitAndStderr) {
  {
    WorkerProcess w(child_argv(), "the echo worker");
    const std::string msg = failure_of([&] { call(w, "request 'die'", "die!"); });
    EXPECT_NE(msg.find("the echo worker: request 'die' failed"), std::string::npos) << msg;
    EXPECT_NE(msg.find("exit 3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("the worker says goodbye"), std::string::npos) << msg;
    EXPECT_FALSE(w.running());
    EXPECT_FALSE(w.died_of_a_signal_or_hung()) << "it exited on its own";
    // Once failed, later calls fail at once, naming the first failure.
    const std::string again = failure_of([&] { call(w, "another", "echo"); });
    EXPECT_NE(again.find("failed earlier"), std::string::npos) << again;
  }
  {
    WorkerProcess w(child_argv(), "the echo worker");
    EXPECT_FALSE(w.died_of_a_signal_or_hung());
    const std::string msg = failure_of([&] { call(w, "kill", "kill"); });
    EXPECT_NE(msg.find("killed by signal 9"), std::string::npos) << msg;
    EXPECT_TRUE(w.died_of_a_signal_or_hung());
  }
  testing::expect_no_children();
}

TEST(WorkerProcess, ADeadlineKillsAHungWorker) {
  {
    WorkerProcess w(child_argv(), "the echo worker");
    const auto start = Clock::now();
    const std::string msg = failure_of([&] { call(w, "run of method 'hang'", "hang", 300ms); });
    EXPECT_NE(msg.find("run of method 'hang' timed out after 0.3 s (killed)"), std::string::npos) << msg;
    EXPECT_LT(Clock::now() - start, 5s);
    EXPECT_FALSE(w.running());
    EXPECT_TRUE(w.died_of_a_signal_or_hung());
  }
  testing::expect_no_children();
}

TEST(WorkerProcess, GarbageAndEarlyExitsAreFailures) {
  {
    WorkerProcess w(child_argv(), "the echo worker");
    const std::string msg = failure_of([&] { call(w, "probe", "garb"); });
    EXPECT_NE(msg.find("answered garbage"), std::string::npos) << msg;
    EXPECT_FALSE(w.died_of_a_signal_or_hung()) << "killed by us for its answer, not by a signal from elsewhere";
  }
  {
    // Exits without reading a 20 MB request: EPIPE, never SIGPIPE for this process.
    WorkerProcess w({"python3", "-c", "import sys; sys.stderr.write('no thanks'); sys.exit(5)"}, "a quitter");
    const std::string big(20 << 20, 'a');
    const std::string msg = failure_of([&] { call(w, "big request", big); });
    EXPECT_NE(msg.find("exit 5"), std::string::npos) << msg;
    EXPECT_NE(msg.find("no thanks"), std::string::npos) << msg;
  }
  EXPECT_NE(failure_of([] { WorkerProcess w({"/nonexistent/worker"}, "nothing"); }).find("cannot start nothing"),
            std::string::npos);
  testing::expect_no_children();
}

TEST(WorkerProcess, ChattyStderrDoesNotBlockTheWorker) {
  {
    WorkerProcess w(child_argv(), "the echo worker");
    for (int i = 0; i < 3; ++i) EXPECT_EQ(call(w, "chat", "chat"), "ok");
    EXPECT_LE(w.stderr_tail(100).size(), 103u);
  }
  testing::expect_no_children();
}

TEST(WorkerProcess, TheDestructorKillsAWorkerThatIgnoresEndOfInput) {
  const auto start = Clock::now();
  {
    WorkerProcess w({"sh", "-c", "trap '' TERM; sleep 30"}, "a stubborn worker");
  }
  EXPECT_LT(Clock::now() - start, 5s);
  testing::expect_no_children();
}

TEST(WorkerProcess, TensOfMegabytesBothWays) {
  WorkerProcess w(child_argv(), "the echo worker");
  std::string body = "echo";
  body.resize(size_t{48} << 20);
  for (size_t i = 4; i < body.size(); ++i) body[i] = static_cast<char>(i * 2654435761u >> 24);
  const auto start = Clock::now();
  const std::string back = call(w, "48 MB echo", body, 60s);
  const double s = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_TRUE(back == body);
  std::printf("48 MB each way in %.3f s: %.0f MB/s (request + response)\n", s, 2 * 48 / s);
}

}  // namespace
}  // namespace genai
