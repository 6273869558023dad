// `genai ... --json` in tests: the parsed stdout of a run expected to succeed (a failed EXPECT
// showing stderr, and an empty object, otherwise).
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace genai::testing {

inline nlohmann::json run_genai_json(const std::vector<std::string>& args) {
  const CliResult r = run_genai(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

}  // namespace genai::testing
