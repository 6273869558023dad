// Checks on this test process's children, for the tests of code that starts programs.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>

namespace genai::testing {

// No child of this process is left, running or zombie.
inline void expect_no_children() {
  errno = 0;
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

// The pid of a child that has exited and been waited for: no process has it (until the kernel
// hands it out again, far later).
inline pid_t pid_of_a_gone_process() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  EXPECT_GT(child, 0);
  EXPECT_EQ(::waitpid(child, nullptr, 0), child);
  return child;
}

// TMPDIR set to `dir` for this object's life, then restored (children started meanwhile inherit it).
class ScopedTmpdir {
 public:
  explicit ScopedTmpdir(const std::string& dir) {
    if (const char* v = std::getenv("TMPDIR")) saved_ = v;
    ::setenv("TMPDIR", dir.c_str(), 1);
  }
  ~ScopedTmpdir() {
    if (saved_) ::setenv("TMPDIR", saved_->c_str(), 1);
    else ::unsetenv("TMPDIR");
  }
  ScopedTmpdir(const ScopedTmpdir&) = delete;
  ScopedTmpdir& operator=(const ScopedTmpdir&) = delete;

 private:
  std::optional<std::string> saved_;
};

}  // namespace genai::testing
