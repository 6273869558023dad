// Memory of compiling a large model, measured on the child process (wait4's rusage): the goal of
// streaming compilation (issue 40) is a 1B model in at most 4 GB. Long: it writes a 2.5 GB
// checkpoint and compiles it for minutes.
#include <sys/resource.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include "support/cli_runner.h"

namespace genai {
namespace {

using testing::run_genai;
using testing::spawn_genai;

TEST(LargeModelMemory, LongLlama32OneBCompilesInAtMostFourGigabytes) {
  testing::TempDir dir;
  const std::string checkpoint = dir.file("llama3.2-1b-f16.gguf");
  const auto synth = run_genai({"synth", "--shape", "llama3.2-1b", "--format", "gguf", "--weight_type", "f16", "--out",
                                checkpoint});
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  const pid_t pid = spawn_genai({"compile", "--checkpoint", checkpoint, "--soc_model", "SM8650", "--backend", "htp",
                                 "--model_mode", "hybrid", "--max_seq_len", "512", "--prefill_ar_len", "128",
                                 "--quant_recipe", "16a8w", "--enable_x86_64", "--artifact", dir.file("out")});
  ASSERT_GT(pid, 0);
  int status = 0;
  struct rusage usage {};
  ASSERT_EQ(::wait4(pid, &status, 0, &usage), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  const double peak_bytes = static_cast<double>(usage.ru_maxrss) * 1024.0;  // ru_maxrss: KiB
  EXPECT_LE(peak_bytes, 4e9) << "peak RSS of the 1B compile: " << peak_bytes / 1e9 << " GB";
}

}  // namespace
}  // namespace genai
