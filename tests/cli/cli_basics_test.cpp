#include <gtest/gtest.h>

#include "support/cli_runner.h"

namespace genai {
namespace {

TEST(Cli, VersionAndHelp) {
  auto v = testing::run_genai({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("genai "), std::string::npos);
  auto h = testing::run_genai({"--help"});
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("Subcommands"), std::string::npos) << h.out;
}

TEST(Cli, UnknownSubcommandIsBadInput) {
  auto r = testing::run_genai({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace genai
