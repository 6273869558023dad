// The one spawn helper under run_subprocess and WorkerProcess: the child sees our environment
// with the overrides, the descriptors mapped as asked (/dev/null for stdin), leads its own
// process group when asked, and starts with default signal dispositions and an empty mask
// whatever this process set; a program that cannot be run is a Failure naming it.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "core/error.h"
#include "runtime/spawn.h"
#include "support/process_checks.h"

namespace genai {
namespace {

using runtime::SpawnRequest;

// Runs `script` under sh with its stdout on a pipe; what it printed, and its exit status.
struct SpawnedOutput {
  std::string out;
  int status = -1;
  pid_t pid = -1;
};

SpawnedOutput spawn_output(const std::string& script, SpawnRequest request) {
  int p[2];
  EXPECT_EQ(pipe2(p, O_CLOEXEC), 0);
  request.argv = {"sh", "-c", script};
  request.fds = {{runtime::kSpawnDevNull, 0}, {p[1], 1}};
  SpawnedOutput r;
  r.pid = runtime::spawn_process(request);
  close(p[1]);
  char buf[4096];
  ssize_t n;
  while ((n = read(p[0], buf, sizeof buf)) > 0) r.out.append(buf, static_cast<size_t>(n));
  close(p[0]);
  EXPECT_EQ(waitpid(r.pid, &r.status, 0), r.pid);
  return r;
}

TEST(Spawn, TheChildSeesOurEnvironmentWithTheOverrides) {
  setenv("GENAI_SPAWN_KEPT", "ours", 1);
  setenv("GENAI_SPAWN_REPLACED", "ours", 1);
  SpawnRequest request;
  request.env_overrides = {{"GENAI_SPAWN_REPLACED", "theirs"}, {"GENAI_SPAWN_NEW", "new value"}};
  const auto r = spawn_output("echo \"$GENAI_SPAWN_KEPT|$GENAI_SPAWN_REPLACED|$GENAI_SPAWN_NEW\"", request);
  EXPECT_EQ(r.out, "ours|theirs|new value\n");
  EXPECT_EQ(spawn_output("echo \"$GENAI_SPAWN_REPLACED\"", SpawnRequest{}).out, "ours\n");
  unsetenv("GENAI_SPAWN_KEPT");
  unsetenv("GENAI_SPAWN_REPLACED");
  testing::expect_no_children();
}

TEST(Spawn, MappedDescriptorsNullStdinAndItsOwnProcessGroup) {
  // stdin is /dev/null (cat ends at once); the child leads its group only when asked.
  const std::string script = "cat; cut -d' ' -f5 /proc/$$/stat; echo $$";  // field 5: the group
  SpawnRequest own;
  const auto a = spawn_output(script, own);
  EXPECT_TRUE(WIFEXITED(a.status) && WEXITSTATUS(a.status) == 0) << a.status;
  EXPECT_EQ(a.out, std::to_string(a.pid) + "\n" + std::to_string(a.pid) + "\n");
  SpawnRequest shared;
  shared.new_process_group = false;
  const auto b = spawn_output(script, shared);
  EXPECT_EQ(b.out, std::to_string(getpgrp()) + "\n" + std::to_string(b.pid) + "\n");
  testing::expect_no_children();
}

TEST(Spawn, SignalsStartAtTheirDefaultsWhateverWeSet) {
  // Ignored and blocked here, SIGTERM still ends the child.
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGTERM, &ignore, &old);
  sigset_t term, old_mask;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, &old_mask);
  const auto r = spawn_output("kill -TERM $$; sleep 5", SpawnRequest{});
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  sigaction(SIGTERM, &old, nullptr);
  EXPECT_TRUE(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGTERM) << r.status;
}

TEST(Spawn, AProgramThatCannotRunIsAFailureNamingIt) {
  SpawnRequest request;
  request.argv = {"/nonexistent/genai-spawn-test"};
  try {
    runtime::spawn_process(request);
    ADD_FAILURE() << "it started";
  } catch (const Failure& e) {
    EXPECT_NE(std::string(e.what()).find("cannot run /nonexistent/genai-spawn-test"), std::string::npos) << e.what();
  }
  EXPECT_THROW(runtime::spawn_process(SpawnRequest{}), Failure);
  testing::expect_no_children();
}

}  // namespace
}  // namespace genai
