// Every decoder family past llama/qwen2 through `genai pipeline` (prepare, quantize 16a8w,
// compile, run) from checkpoints `genai synth --arch` writes: a Hugging Face folder and its GGUF
// copy give the same greedy tokens, the quantized logits stay near float, and the checkpoint
// names itself so --decoder_model may be left out or given. (Slow: release tree only; under the
// sanitizers the families' code runs in the graph, quantized-parity and HF parity tests.)
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace genai::testing {
namespace {

class FamilyPipeline : public ::testing::TestWithParam<std::string> {};

nlohmann::json run_pipeline(const std::string& checkpoint, const std::string& artifact) {
  const auto r = run_genai({"pipeline", "--checkpoint", checkpoint, "--soc_model", "SM8650", "--lowering", "genai", "--quant_recipe", "16a8w",
                            "--prompt", "Hello there", "--system_prompt", "Be brief.", "--max_seq_len", "96",
                            "--prefill_ar_len", "16", "--max_new_tokens", "6", "--temperature", "0", "--json", "-a",
                            artifact});
  EXPECT_EQ(r.exit_code, 0) << checkpoint << "\n" << r.err;
  if (r.exit_code != 0) return {};
  return nlohmann::json::parse(r.out);
}

TEST_P(FamilyPipeline, SlowHfFolderAndGgufCopyRunEndToEndWithTheSameTokens) {
  const std::string arch = GetParam();
  // llama.cpp has no codegen architecture: its GGUF copy is refused by name, the folder runs alone.
  const bool gguf_form = arch != "codegen";
  TempDir dir;
  for (const char* format : {"hf", "gguf"}) {
    const auto s = run_genai({"synth", "--arch", arch, "--shape", "tiny", "--format", format, "--seed", "3", "--out",
                              dir.file(std::string("model.") + format)});
    ASSERT_EQ(s.exit_code, gguf_form || std::string(format) == "hf" ? 0 : 2) << s.err;
    if (s.exit_code == 2) {
      EXPECT_NE(s.err.find("no GGUF form"), std::string::npos) << s.err;
    }
  }
  const auto hf = run_pipeline(dir.file("model.hf"), dir.file("art_hf"));
  ASSERT_FALSE(hf.is_null());
  for (const char* s : {"model_preparation", "quantization", "compilation", "inference"})
    EXPECT_TRUE(hf["stages"][s]["ran"].get<bool>()) << s;
  ASSERT_GE(hf["tokens"].size(), 1u);
  // 16a8w on the random tiny model (measured: 29-40 dB across the families at this shape).
  EXPECT_GT(hf["eval"]["sqnr_db"].get<double>(), 20.0) << arch;
  if (!gguf_form) return;
  const auto gguf = run_pipeline(dir.file("model.gguf"), dir.file("art_gguf"));
  ASSERT_FALSE(gguf.is_null());
  EXPECT_EQ(hf["tokens"], gguf["tokens"]);
  EXPECT_EQ(hf["eval"]["sqnr_db"], gguf["eval"]["sqnr_db"]);
}

INSTANTIATE_TEST_SUITE_P(Families, FamilyPipeline, ::testing::Values("qwen3", "granite", "smollm3", "phi3", "gemma", "gemma2", "gemma3", "glm",
                                                                "codegen", "gemma4"),
                         [](const auto& info) { return info.param; });

// A sliding window shorter than the context (Phi-3-mini's, on every layer): the compiled program
// stays near the float reference, which slides, over a run of several windows.
TEST(FamilyPipelineWindow, SlowPhi3SlidingWindowPastTheWindowStaysNearFloat) {
  TempDir dir;
  const std::string model = dir.file("phi3.hf");
  ASSERT_EQ(run_genai({"synth", "--arch", "phi3", "--shape", "tiny", "--format", "hf", "--seed", "3", "--out", model}).exit_code, 0);
  nlohmann::json config;
  std::ifstream(model + "/config.json") >> config;
  config["sliding_window"] = 16;  // the chunks of run_pipeline's --prefill_ar_len 16 fit
  std::ofstream(model + "/config.json") << config.dump(2);
  const auto j = run_pipeline(model, dir.file("art"));
  ASSERT_FALSE(j.is_null());
  // Measured: 36.1 dB over 95 positions (each past the 16th sees only its last 16).
  EXPECT_GT(j["eval"]["sqnr_db"].get<double>(), 20.0);
}

// The upstream names of these families are accepted with a checkpoint of their architecture and
// refused with another, naming the field that differs.
TEST(FamilyPipelineNames, DecoderModelChecksTheArchitecture) {
  TempDir dir;
  ASSERT_EQ(run_genai({"synth", "--arch", "qwen3", "--out", dir.file("q3.gguf")}).exit_code, 0);
  const auto r = run_genai({"pipeline", "--decoder_model", "phi_4_mini", "--checkpoint", dir.file("q3.gguf"),
                            "--soc_model", "SM8650", "--lowering", "genai", "--prompt", "hi", "-a", dir.file("art")});
  EXPECT_EQ(r.exit_code, 2);
  for (const char* want : {"phi_4_mini", "architecture phi3 vs qwen3"})
    EXPECT_NE(r.err.find(want), std::string::npos) << want << "\n" << r.err;
}

}  // namespace
}  // namespace genai::testing
