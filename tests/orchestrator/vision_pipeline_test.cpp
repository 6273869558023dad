// Vision-language models through `genai pipeline` and `genai run`: the SmolVLM and InternVL3
// folders `genai synth --arch smolvlm|internvl3` writes, two PNG images. The artifact map holds
// exactly their three keys
// (text_decoder, tok_embedding, vision_encoder), the vision encoder is quantized on the images with
// its own recipe, the programs run from the artifact dir (`genai run -a`, `--pre_gen_pte`) with the
// pipeline's tokens, and bad image inputs exit 2 naming the file or option.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli_runner.h"
#include "support/file_helpers.h"
#include "support/image_files.h"
#include "support/wav_files.h"

namespace genai::testing {
namespace {

struct VlmFixture {
  TempDir dir;
  std::string model = dir.file("model"), first = dir.file("a.png"), second = dir.file("b.png");
  explicit VlmFixture(const std::string& arch = "smolvlm") {
    const auto s = run_genai({"synth", "--arch", arch, "--format", "hf", "--seed", "0", "--out", model});
    EXPECT_EQ(s.exit_code, 0) << s.err;
    write_test_png(first, 90, 70, 1);
    write_test_png(second, 40, 100, 2);
  }
  std::vector<std::string> generation() const {
    return {"--prompt", "What is in these pictures?", "--max_new_tokens", "6", "--temperature", "0", "--json"};
  }
};

class VisionPipelineFamilies : public ::testing::TestWithParam<std::string> {};

TEST_P(VisionPipelineFamilies, RunsEndToEndWithExactlyItsThreeArtifacts) {
  VlmFixture f(GetParam());
  const std::string art = f.dir.file("art");
  const auto r = run_genai(std::vector<std::string>{"pipeline", "--checkpoint", f.model, "--soc_model", "SM8650", "--lowering", "genai", "-a", art,
                                                    "--max_seq_len", "128", "--image_path", f.first, f.second} +
                           f.generation());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::set<std::string> keys;
  for (const auto& [key, path] : j["artifacts"].items()) keys.insert(key);
  EXPECT_EQ(keys, (std::set<std::string>{"text_decoder", "tok_embedding", "vision_encoder"}));
  const auto& vision = j["stages"]["quantization"]["vision_encoder"];
  EXPECT_EQ(vision["recipe"], "16a8w");
  EXPECT_EQ(vision["calibration_source"], "--image_path");
  // 16a8w on the random tiny tower (measured: 40-42 dB on these tiles).
  EXPECT_GT(vision["sqnr_db"].get<double>(), 30.0);
  EXPECT_EQ(j["stats"]["images"], 2);
  // SmolVLM: 90 x 70 -> 128 x 100 -> 2 x 2 tiles + the whole image; 40 x 100 -> 1 x 2 + 1.
  // InternVL (grids of up to 6 tiles): 90 x 70 -> 3 x 2 + the whole image; 40 x 100 -> 1 x 3 + 1.
  EXPECT_EQ(j["stats"]["image_tiles"], GetParam() == "smolvlm" ? 8 : 11);
  EXPECT_GT(j["stats"]["prompt_tokens"].get<int64_t>(), 8 * 4);
  const auto tokens = j["tokens"];
  ASSERT_EQ(tokens.size(), 6u);

  // The programs again, from the artifact dir: the same greedy tokens.
  const auto run = run_genai(std::vector<std::string>{"run", "-a", art, "--image_path", f.first, f.second} + f.generation());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["tokens"], tokens);
  const auto pre = run_genai(std::vector<std::string>{"pipeline", "--checkpoint", f.model, "--soc_model", "SM8650", "--lowering", "genai",
                                                      "--pre_gen_pte", art, "--image_path", f.first, f.second} +
                             f.generation());
  ASSERT_EQ(pre.exit_code, 0) << pre.err;
  EXPECT_EQ(nlohmann::json::parse(pre.out)["tokens"], tokens);
  // The images change the answer's logits: without them the prompt is another one.
  const auto text_only = run_genai(std::vector<std::string>{"run", "-a", art} + f.generation());
  ASSERT_EQ(text_only.exit_code, 0) << text_only.err;
  EXPECT_LT(nlohmann::json::parse(text_only.out)["prompt_tokens"].get<int64_t>(), j["stats"]["prompt_tokens"].get<int64_t>());
}

INSTANTIATE_TEST_SUITE_P(Families, VisionPipelineFamilies, ::testing::Values("smolvlm", "internvl3"),
                         [](const auto& info) { return info.param; });

TEST(VisionPipeline, BadImageInputsExitTwoNamingTheFileOrOption) {
  VlmFixture f;
  write_file(f.dir.file("notes.png"), "not pixels");
  for (const std::string& bad : {f.dir.file("absent.png"), f.dir.file("notes.png")}) {
    const auto r = run_genai(std::vector<std::string>{"run", "--checkpoint", f.model, "--image_path", bad} + f.generation());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
  }
  // A text-only model has no vision encoder to take an image.
  const std::string plain = f.dir.file("plain.gguf");
  ASSERT_EQ(run_genai({"synth", "--out", plain}).exit_code, 0);
  const auto r = run_genai(std::vector<std::string>{"run", "--checkpoint", plain, "--image_path", f.first} + f.generation());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--image_path"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("text-only"), std::string::npos) << r.err;
  // A vision model takes no audio, and says what it takes.
  const std::string clip = f.dir.file("clip.wav");
  write_test_wav(clip, 1.0, 1);
  expect_exit2(std::vector<std::string>{"run", "--checkpoint", f.model, "--audio_path", clip} + f.generation(),
               {"--audio_path", "no audio encoder", "it takes --image_path"});
  // synth writes vision-language folders only.
  const auto gguf = run_genai({"synth", "--arch", "smolvlm", "--out", f.dir.file("v.gguf")});
  EXPECT_EQ(gguf.exit_code, 2);
  EXPECT_NE(gguf.err.find("valid for --arch smolvlm: hf"), std::string::npos) << gguf.err;
}

// The float model (`genai run --checkpoint`) takes images too: its encoder and decoder graphs on
// the interpreter, as the parity test checks them against transformers.
TEST(VisionPipeline, FloatCheckpointTakesImages) {
  VlmFixture f;
  const auto r = run_genai(std::vector<std::string>{"run", "--checkpoint", f.model, "--image_path", f.first} + f.generation());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stats"]["images"], 1);
  EXPECT_EQ(j["stats"]["image_tiles"], 5);
  EXPECT_EQ(j["tokens"].size(), 6u) << r.out;
}

}  // namespace
}  // namespace genai::testing
