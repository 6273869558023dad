// The options that replace the old environment switches reach the kernels and the executor
// through backends::apply_execution_options, and reset when not given.
#include <gtest/gtest.h>

#include "backends/exec/payload_executor.h"
#include "backends/execution_options.h"
#include "kernels/kernel_mode.h"

namespace genai::backends_testing {
namespace {

TEST(ExecutionOptions, FlagsReachTheirSwitchesAndResetWhenAbsent) {
  const kernels::ScopedKernelMode keep_mode(kernels::kernel_mode());
  options::OptionValues on;
  on.set("scalar_kernels", true);
  on.set("backend_profile", true);
  backends::apply_execution_options(on);
  EXPECT_EQ(kernels::kernel_mode(), kernels::KernelMode::kScalar);
  EXPECT_TRUE(backends::profile_steps());
  backends::apply_execution_options(options::OptionValues());
  EXPECT_EQ(kernels::kernel_mode(), kernels::KernelMode::kSimd);
  EXPECT_FALSE(backends::profile_steps());
}

}  // namespace
}  // namespace genai::backends_testing
