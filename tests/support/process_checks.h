// Checks on this test process's children, for the tests of code that starts programs.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cerrno>

namespace genai::testing {

// No child of this process is left, running or zombie.
inline void expect_no_children() {
  errno = 0;
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

}  // namespace genai::testing
