// What a test needs from the machine (the default model, the upstream fixtures in ../shared, a
// tool on PATH). On a developer's machine a missing piece skips the test with the reason; in CI
// (CI=true, as .ci/run is started) it fails it, because the project's scripts install all of
// them there and a skip would hide a missing install step.
#pragma once

#include <cstdlib>
#include <string_view>

#include <gtest/gtest.h>

namespace genai::testing {

inline bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) != "" && std::string_view(ci) != "0" && std::string_view(ci) != "false";
}

}  // namespace genai::testing

// Ends the test (skip, or failure in CI) when `available` is false; `what` names the missing piece.
#define GENAI_REQUIRE_AVAILABLE(available, what)                                                     \
  do {                                                                                             \
    if (!(available)) {                                                                            \
      if (::genai::testing::running_in_ci()) GTEST_FAIL() << "missing in CI: " << what;            \
      GTEST_SKIP() << "missing: " << what;                                                         \
    }                                                                                              \
  } while (0)
