// The options that replace the old environment switches reach the kernels, the executor and the
// lowering through backends::apply_execution_options, and reset when not given.
#include <gtest/gtest.h>

#include "backends/exec/payload_executor.h"
#include "backends/execution_options.h"
#include "backends/lower/kv_fusion.h"
#include "kernels/kernel_mode.h"

namespace genai::backends_testing {
namespace {

TEST(ExecutionOptions, FlagsReachTheirSwitchesAndResetWhenAbsent) {
  const kernels::ScopedKernelMode keep_mode(kernels::kernel_mode());
  const backends::ScopedKvFusion keep_fusion(backends::kv_fusion());
  options::OptionValues on;
  on.set("scalar_kernels", true);
  on.set("backend_profile", true);
  on.set("backend_fuse_kv", true);
  backends::apply_execution_options(on);
  EXPECT_EQ(kernels::kernel_mode(), kernels::KernelMode::kScalar);
  EXPECT_TRUE(backends::profile_steps());
  EXPECT_EQ(backends::kv_fusion(), backends::KvFusion::kAll);
  backends::apply_execution_options(options::OptionValues());
  EXPECT_EQ(kernels::kernel_mode(), kernels::KernelMode::kSimd);
  EXPECT_FALSE(backends::profile_steps());
  EXPECT_EQ(backends::kv_fusion(), backends::KvFusion::kEightBit);
}

}  // namespace
}  // namespace genai::backends_testing
