// LoRA adapters with --lowering qnn: each adapter's methods are QNN graphs of their own (contexts
// of their own on an x86 build, base weights copied into each), run on the HTP simulator, and
// give the tokens of our lowering for the base and each adapter (greedy; the first four must
// agree, as QnnLowering's tiny-model runs, where near-flat logits may flip later tokens).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "backends/qnn/qnn_bridge.h"
#include "support/cli_json.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"
#include "support/test_requirements.h"

namespace genai::testing {
namespace {

TEST(QnnLora, AdaptersRunOnTheSimulatorWithOurLoweringsTokens) {
  backends::qnn::QnnBridge bridge;
  const auto probe = bridge.probe();
  GENAI_REQUIRE_AVAILABLE(probe.available, "onnxruntime-qnn (" << probe.missing << ")");
  TempDir dir;
  const std::string model = dir.file("model");
  ASSERT_EQ(run_genai({"synth", "--arch", "llama", "--format", "hf", "--seed", "3", "--out", model}).exit_code, 0);
  const auto py = run_process({"python3", python_script("lora_reference.py"), "--adapters", model, dir.path()});
  ASSERT_EQ(py.exit_code, 0) << py.err;
  const std::vector<std::string> compile = {"compile", "--checkpoint", model, "--soc_model", "SM8650", "--enable_x86_64",
                                            "--quant_recipe", "16a8w", "--max_seq_len", "96", "--prefill_ar_len", "16",
                                            "--lora_adapter", "alpha=" + dir.file("alpha"), "--lora_adapter",
                                            "beta=" + dir.file("beta")};
  const auto ours = run_genai(compile + std::vector<std::string>{"-a", dir.file("genai")});
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  const auto qnn = run_genai(compile + std::vector<std::string>{"-a", dir.file("qnn"), "--lowering", "qnn"});
  ASSERT_EQ(qnn.exit_code, 0) << qnn.err;
  for (const std::string adapter : {"", "alpha", "beta"}) {
    SCOPED_TRACE(adapter.empty() ? "base" : adapter);
    std::vector<std::string> run = {"--prompt", "Once upon a time", "--temperature", "0", "--max_new_tokens", "8", "--json"};
    if (!adapter.empty()) run.insert(run.end(), {"--lora", adapter});
    const auto emu = run_genai_json(std::vector<std::string>{"run", "-a", dir.file("genai")} + run)["tokens"];
    const auto sim = run_genai_json(std::vector<std::string>{"run", "-a", dir.file("qnn")} + run)["tokens"];
    ASSERT_EQ(emu.size(), 8u);
    ASSERT_EQ(sim.size(), 8u);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(sim[i], emu[i]) << "token " << i;
  }
}

}  // namespace
}  // namespace genai::testing
