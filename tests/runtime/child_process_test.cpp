// The child processes the runtime depends on (adb today) dying, hanging or writing garbage: the
// subprocess layer reports each as such (signal, deadline), kills what a hung child started and
// reaps every child; the device runner turns each into a Failure naming the adb call. Fake adb
// scripts on a private PATH die by SIGKILL at random calls and random moments within a call.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "core/error.h"
#include "runtime/device_runner.h"
#include "runtime/subprocess.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"
#include "support/process_checks.h"

namespace genai {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Process `pid` is gone (a zombie reparented to init counts as gone once init reaps it).
bool process_gone(pid_t pid) {
  for (int i = 0; i < 200; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return true;
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z') return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(ChildProcess, ASignalDeathIsReportedAsSuch) {
  const auto r = runtime::run_subprocess({"sh", "-c", "echo partial; kill -9 $$"});
  EXPECT_EQ(r.signal, 9);
  EXPECT_EQ(r.exit_code, 128 + 9);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.out, "partial\n");
  EXPECT_EQ(r.describe(), "killed by signal 9 (SIGKILL)");
  EXPECT_EQ(runtime::run_subprocess({"sh", "-c", "exit 3"}).describe(), "exit 3");
  testing::expect_no_children();
}

TEST(ChildProcess, ADeadlineKillsTheChildAndWhatItStarted) {
  testing::TempDir dir;
  const std::string pidfile = dir.file("grandchild.pid");
  const auto start = Clock::now();
  const auto r = runtime::run_subprocess({"sh", "-c", "sleep 30 & echo $! > '" + pidfile + "'; wait"}, 300ms);
  const auto took = Clock::now() - start;
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.describe(), "timed out after 0.3 s (killed)");
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 5s);
  testing::expect_no_children();
  const pid_t grandchild = std::stoi(testing::read_text(pidfile));
  EXPECT_TRUE(process_gone(grandchild)) << "sleep " << grandchild << " survived the deadline";
}

TEST(ChildProcess, AGrandchildHoldingThePipesDoesNotHangTheCall) {
  testing::TempDir dir;
  const std::string pidfile = dir.file("daemon.pid");
  // Like `adb` starting its server: the daemon inherits stdout and outlives the call.
  const auto start = Clock::now();
  const auto r = runtime::run_subprocess({"sh", "-c", "sleep 30 & echo $! > '" + pidfile + "'; echo done"});
  EXPECT_LT(Clock::now() - start, 10s);
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.out, "done\n");
  testing::expect_no_children();
  ::kill(std::stoi(testing::read_text(pidfile)), SIGKILL);
}

TEST(ChildProcess, EndlessOutputIsCappedAndStoppedByTheDeadline) {
  const auto r = runtime::run_subprocess({"sh", "-c", "cat /dev/urandom"}, 600ms);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LE(r.out.size(), runtime::kMaxCapturedOutput);
  testing::expect_no_children();
}

TEST(ChildProcess, GarbageIsEscapedForMessages) {
  EXPECT_EQ(runtime::printable_tail(std::string("ok \x1b[2J\xff\xfe caf\xc3\xa9\n\n", 17)), "ok \\x1b[2J\\xff\\xfe café");
  EXPECT_EQ(runtime::printable_tail("abcdef", 3), "...def");
}

// An artifact dir with one program and a tokenizer; a fake adb that behaves like a phone except
// at call number `die_at` (1-based), where it does `action`.
struct FakePhone {
  testing::TempDir tmp;
  std::string art, bin;
  runtime::DeviceRunRequest req;
  FakePhone() {
    art = tmp.file("my_model");
    bin = tmp.file("bin");
    fs::create_directories(art);
    fs::create_directories(bin);
    for (const char* f : {"text_decoder.pte", "tokenizer.json", "manifest.json"}) testing::write_file(art + "/" + f, std::string(4096, 'x'));
    req.target = {"R58M123", ""};
    req.artifacts.dir = art;
    req.artifacts.artifacts[pipeline::ArtifactKey::kTextDecoder] = art + "/text_decoder.pte";
    req.artifacts.tokenizer_path = art + "/tokenizer.json";
    req.runner_binary = tmp.file("genai-aarch64");
    testing::write_file(req.runner_binary, "elf");
    req.run_args = {"--prompt=hi"};
    req.path_env = bin;
    const std::chrono::milliseconds short_deadline = 400ms;
    req.timeouts = {short_deadline, short_deadline, short_deadline, 1u << 30, short_deadline};
  }
  void fake_adb(int die_at, const std::string& action) {
    const std::string count = tmp.file("calls");
    std::remove(count.c_str());
    testing::write_file(bin + "/adb",
               "#!/bin/sh\nn=$(($(cat '" + count + "' 2>/dev/null || echo 0) + 1)); echo $n > '" + count + "'\n"
               "while [ \"$1\" = -H ] || [ \"$1\" = -s ]; do shift 2; done\n"
               "if [ $n -eq " + std::to_string(die_at) + " ]; then " + action + "; fi\n"
               "case \"$1\" in\n"
               "  devices) printf 'List of devices attached\\nR58M123\\tdevice\\n';;\n"
               "  pull) case \"$2\" in */run.json) printf '{\"text\": \"hi\", \"stats\": {}}' > \"$3\";; *) : > \"$3\";; esac;;\n"
               "esac\nexit 0\n",
               true);
  }
};

// The adb calls of a full run, in order (FakePhone pushes 4 files).
const char* const kCalls[] = {"adb devices", "adb shell", "adb push", "adb push", "adb push", "adb push",
                              "adb shell", "adb shell", "adb pull", "adb pull"};
constexpr int kRunLogPull = 9;  // the device log is best effort: without it the run still succeeds

std::string failure_of(const runtime::DeviceRunRequest& req) {
  try {
    runtime::run_on_device(req);
  } catch (const Failure& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a Failure (exit 1): " << e.what();
    return e.what();
  }
  return "";
}

TEST(ChildProcess, AdbKilledAtRandomPointsFailsNamingTheCall) {
  std::mt19937 rng(21);
  FakePhone phone;
  int failures = 0;
  for (int round = 0; round < 20; ++round) {
    const int call = 1 + static_cast<int>(rng() % std::size(kCalls));
    // Dies at once, after a partial answer, or a moment into the call.
    const std::string action = round % 3 == 0   ? "kill -9 $$"
                               : round % 3 == 1 ? "printf 'List of dev'; kill -9 $$"
                                                : "sleep 0.0" + std::to_string(rng() % 10) + "; kill -9 $$";
    phone.fake_adb(call, action);
    const std::string msg = failure_of(phone.req);
    if (call == kRunLogPull) {
      EXPECT_EQ(msg, "") << "round " << round;
    } else {
      ++failures;
      EXPECT_NE(msg.find(kCalls[call - 1]), std::string::npos) << "round " << round << " call " << call << ": " << msg;
      EXPECT_NE(msg.find("killed by signal 9"), std::string::npos) << msg;
    }
    testing::expect_no_children();
  }
  EXPECT_GT(failures, 10);
}

TEST(ChildProcess, AHungAdbHitsItsDeadlineAtEveryCall) {
  FakePhone phone;
  const std::string pidfile = phone.tmp.file("sleep.pid");
  for (int call = 1; call <= static_cast<int>(std::size(kCalls)); ++call) {
    if (call == kRunLogPull) continue;
    phone.fake_adb(call, "sleep 60 & echo $! > '" + pidfile + "'; wait");
    const auto start = Clock::now();
    const std::string msg = failure_of(phone.req);
    EXPECT_LT(Clock::now() - start, 10s);
    EXPECT_NE(msg.find(kCalls[call - 1]), std::string::npos) << msg;
    EXPECT_NE(msg.find("timed out after 0.4 s (killed)"), std::string::npos) << msg;
    testing::expect_no_children();
    EXPECT_TRUE(process_gone(std::stoi(testing::read_text(pidfile)))) << "call " << call;
  }
}

TEST(ChildProcess, GarbageFromAdbOrTheRunnerIsAFailure) {
  FakePhone phone;
  // `adb devices` answering with bytes that are no device list.
  phone.fake_adb(1, "head -c 3000 /dev/urandom; printf '\\n\\001\\377 x\\n'; exit 0");
  std::string msg = failure_of(phone.req);
  EXPECT_NE(msg.find("adb devices"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not a device list"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\x01'), std::string::npos);
  // A pulled run.json that is garbage (a partial or corrupted result file).
  phone.fake_adb(10, "head -c 500 /dev/urandom > \"$3\"; exit 0");
  msg = failure_of(phone.req);
  EXPECT_NE(msg.find("run.json is not JSON"), std::string::npos) << msg;
  // A push that floods its output until the deadline.
  phone.fake_adb(3, "cat /dev/urandom");
  msg = failure_of(phone.req);
  EXPECT_NE(msg.find("adb push"), std::string::npos) << msg;
  EXPECT_NE(msg.find("timed out"), std::string::npos) << msg;
  testing::expect_no_children();
}

// The command as a user runs it: `genai run -a DIR --device S` whose adb dies mid-push ends with
// exit 1 and the message on stderr.
TEST(ChildProcess, ADyingAdbMakesGenaiRunExit1) {
  testing::TempDir tmp;
  const std::string ckpt = tmp.file("tiny.gguf"), art = tmp.file("art"), bin = tmp.file("bin");
  ASSERT_EQ(testing::run_genai({"synth", "--shape", "tiny", "--seed", "3", "--out", ckpt}).exit_code, 0);
  const auto c = testing::run_genai({"compile", "--checkpoint", ckpt, "--soc_model", "SM8650", "--lowering", "genai", "--model_mode", "kv",
                                     "--max_seq_len", "32", "--quant_recipe", "16a8w", "-a", art});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  std::string elf(64, '\0');
  elf.replace(0, 4, "\x7f" "ELF");
  elf[4] = 2;
  elf[5] = 1;
  elf[18] = static_cast<char>(183);
  testing::write_file(tmp.file("genai-arm64"), elf);
  fs::create_directories(bin);
  testing::write_file(bin + "/adb",
             "#!/bin/sh\nwhile [ \"$1\" = -H ] || [ \"$1\" = -s ]; do shift 2; done\n"
             "case \"$1\" in devices) printf 'List of devices attached\\nR58M123\\tdevice\\n';; push) kill -9 $$;; esac\n",
             true);
  const auto r = testing::run_genai_with_env({"PATH=" + bin + ":/usr/bin:/bin"}, {"run", "-a", art, "--prompt",
                                       "hi", "--device", "R58M123", "--runner_binary", tmp.file("genai-arm64")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("adb push failed pushing " + art + "/text_decoder.pte"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("killed by signal 9"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace genai
