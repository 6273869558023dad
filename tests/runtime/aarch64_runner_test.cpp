// One compiled program run by this x86 build's genai and by the aarch64 build's static genai
// (scripts/build_aarch64.sh) under qemu-user, once per Arm vector unit the kernels dispatch to:
// NEON (a Cortex-A72), SVE2 at 128 bits and SVE at 256 bits (qemu's `max` CPU at those vector
// lengths). The tokens must be the same: greedy on every vector unit (the kernels are what differs
// between them), and sampled with a seed, which draws from the exact probabilities, on one (the
// sampler is the same scalar code everywhere). Each run's JSON names the kernels that ran, so a
// CPU model that stops offering SVE fails here instead of testing NEON twice.
// A long sweep (`ctest -L long`): building the aarch64 genai and the qemu runs took CI's short run
// about four minutes (the aarch64 build's wall time fell by 190 s without them, and this test
// took 100 s), for whole programs whose per-CPU part, the kernels, CI's aarch64 stage tests on
// the same three CPUs against the scalar build.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli_json.h"
#include "support/cli_runner.h"
#include "support/test_requirements.h"

namespace genai {
namespace {

namespace fs = std::filesystem;

// GENAI_AARCH64_GENAI as it is, else build-aarch64/genai in the source tree, built or brought up
// to date here (under the lock scripts/test_aarch64.sh takes for that tree, so that the long
// sweep's two users of it never run ninja there at once). Empty if the build failed.
std::string aarch64_genai() {
  const char* env = std::getenv("GENAI_AARCH64_GENAI");
  if (env && *env) return env;
  const std::string dir = std::string(GENAI_SOURCE_DIR) + "/build-aarch64";
  fs::create_directories(dir);
  const auto built = testing::run_process(
      {"flock", dir + "/.build.lock", "bash", std::string(GENAI_SOURCE_DIR) + "/scripts/build_aarch64.sh", dir, "--", "genai"});
  EXPECT_EQ(built.exit_code, 0) << built.err;
  return built.exit_code == 0 ? dir + "/genai" : "";
}

struct ArmCpu {
  std::string qemu_cpu, kernels;
};

nlohmann::json run_on_arm(const std::string& genai_arm, const ArmCpu& cpu, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"env", "QEMU_CPU=" + cpu.qemu_cpu, "qemu-aarch64-static", genai_arm};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = testing::run_process(argv);
  EXPECT_EQ(r.exit_code, 0) << cpu.qemu_cpu << ": " << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

TEST(Aarch64Runner, LongSameTokensAsX86OnNeonSve128AndSve256) {
#ifdef GENAI_EXE_EMULATOR
  GTEST_SKIP() << "the x86 side of this comparison: it runs in the host tree, not under the emulator";
#endif
  const std::string genai_arm = aarch64_genai();
  ASSERT_TRUE(fs::is_regular_file(genai_arm)) << "no aarch64 genai (bash scripts/build_aarch64.sh -- genai)";
  GENAI_REQUIRE_AVAILABLE(testing::run_process({"qemu-aarch64-static", "--version"}).exit_code == 0,
                          "qemu-aarch64-static (scripts/install_deps.sh --aarch64)");
  testing::TempDir tmp;
  const std::string gguf = tmp.file("s15m.gguf"), art = tmp.file("art");
  ASSERT_EQ(testing::run_genai({"synth", "--shape", "stories15m", "--format", "gguf", "--seed", "3", "--out", gguf})
                .exit_code,
            0);
  const auto compiled = testing::run_genai({"compile", "--checkpoint", gguf, "--soc_model", "SM8750", "--lowering", "genai", "--backend", "htp",
                                            "--model_mode", "hybrid", "--max_seq_len", "128", "--prefill_ar_len", "16",
                                            "--enable_x86_64", "-a", art});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;

  const std::vector<std::string> greedy = {"run", "-a", art, "--prompt", "Once upon a time", "--max_new_tokens",
                                           "32", "--temperature", "0", "--json"};
  const std::vector<std::string> sampled = {"run", "-a", art, "--prompt", "The little dog", "--max_new_tokens",
                                            "32", "--temperature", "0.9", "--seed", "11", "--json"};
  const ArmCpu neon{"cortex-a72", "NEON"}, sve2_128{"max,sve-default-vector-length=16", "SVE2_128"},
      sve_256{"max,sve-default-vector-length=32", "SVE_256"};
  const std::vector<std::pair<std::vector<std::string>, std::vector<ArmCpu>>> runs = {
      {greedy, {neon, sve2_128, sve_256}}, {sampled, {sve_256}}};
  for (const auto& [args, cpus] : runs) {
    const auto x86 = testing::run_genai_json(args);
    ASSERT_TRUE(x86.contains("tokens"));
    ASSERT_EQ(x86["tokens"].size(), 32u);
    for (const auto& cpu : cpus) {
      const auto arm = run_on_arm(genai_arm, cpu, args);
      EXPECT_EQ(arm.value("kernels", ""), cpu.kernels) << cpu.qemu_cpu;
      EXPECT_EQ(arm.value("tokens", nlohmann::json()), x86["tokens"]) << cpu.kernels << ", " << args[7] << " " << args[8];
      EXPECT_EQ(arm.value("prompt_tokens", -1), x86["prompt_tokens"].get<int>()) << cpu.kernels;
    }
  }
}

}  // namespace
}  // namespace genai
