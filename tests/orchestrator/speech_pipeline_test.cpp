// Granite Speech through `genai pipeline` and `genai run`: the folder `genai synth --arch
// granite_speech` writes, two WAV clips. The artifact map holds exactly its three keys
// (text_decoder, tok_embedding, audio_encoder), the audio encoder is quantized on the clips with
// its own recipe, the programs run from the artifact dir (`genai run -a`, `--pre_gen_pte`) with
// the pipeline's tokens, `--lowering qnn` runs all four stages on the QNN simulator, the float
// checkpoint takes the clips too, and bad audio inputs exit 2 naming the file or option.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/qnn/qnn_bridge.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"
#include "support/image_files.h"
#include "support/test_requirements.h"
#include "support/wav_files.h"

namespace genai::testing {
namespace {

struct SpeechFixture {
  TempDir dir;
  std::string model = dir.file("model"), first = dir.file("a.wav"), second = dir.file("b.wav");
  SpeechFixture() {
    const auto s = run_genai({"synth", "--arch", "granite_speech", "--format", "hf", "--seed", "0", "--out", model});
    EXPECT_EQ(s.exit_code, 0) << s.err;
    write_test_wav(first, 1.5, 1);
    write_test_wav(second, 0.8, 2);
  }
  static std::vector<std::string> generation() {
    return {"--prompt", "What is said in these clips?", "--max_new_tokens", "6", "--temperature", "0", "--json"};
  }
};

TEST(SpeechPipeline, RunsEndToEndWithExactlyItsThreeArtifacts) {
  SpeechFixture f;
  const std::string art = f.dir.file("art");
  // The tiny decoder's 160-wide MLP takes no blocks of 64 (Granite's default recipe): 16a8w.
  const auto r = run_genai(std::vector<std::string>{"pipeline", "--checkpoint", f.model, "--soc_model", "SM8650", "--lowering", "genai", "-a", art,
                                                    "--max_seq_len", "128", "--quant_recipe", "16a8w", "--audio_path",
                                                    f.first, f.second} +
                           f.generation());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::set<std::string> keys;
  for (const auto& [key, path] : j["artifacts"].items()) keys.insert(key);
  EXPECT_EQ(keys, (std::set<std::string>{"text_decoder", "tok_embedding", "audio_encoder"}));
  const auto& audio = j["stages"]["quantization"]["audio_encoder"];
  EXPECT_EQ(audio["recipe"], "16a8w");
  EXPECT_EQ(audio["calibration_source"], "--audio_path");
  EXPECT_EQ(audio["calibration_clips"], 2);
  // 16a8w on the random tiny encoder (measured: 44 dB on these clips).
  EXPECT_GT(audio["sqnr_db"].get<double>(), 30.0);
  EXPECT_EQ(j["stats"]["audio_clips"], 2);
  const auto tokens = j["tokens"];
  ASSERT_EQ(tokens.size(), 6u);

  // The programs again, from the artifact dir: the same greedy tokens.
  const auto run = run_genai(std::vector<std::string>{"run", "-a", art, "--audio_path", f.first, f.second} + f.generation());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["tokens"], tokens);
  const auto pre = run_genai(std::vector<std::string>{"pipeline", "--checkpoint", f.model, "--soc_model", "SM8650", "--lowering", "genai",
                                                      "--pre_gen_pte", art, "--audio_path", f.first, f.second} +
                             f.generation());
  ASSERT_EQ(pre.exit_code, 0) << pre.err;
  EXPECT_EQ(nlohmann::json::parse(pre.out)["tokens"], tokens);
  // Each clip stands in the prompt as one <|audio|> per embedding: 1.5 s -> 151 mel frames -> 75
  // rows -> 5 windows of 15 -> 15 tokens; 0.8 s -> 81 -> 40 -> 3 windows -> 9.
  const auto text_only = run_genai(std::vector<std::string>{"run", "-a", art} + f.generation());
  ASSERT_EQ(text_only.exit_code, 0) << text_only.err;
  EXPECT_EQ(j["stats"]["prompt_tokens"].get<int64_t>() - nlohmann::json::parse(text_only.out)["prompt_tokens"].get<int64_t>(),
            15 + 9);
}

// `--lowering qnn` (issue 38): the audio encoder, like the decoder and the embedding, is a real QNN
// context binary compiled by the QNN HTP compiler, and all four stages run on the x86 simulator;
// `genai run -a` on the result gives the pipeline's tokens. The encoder's learned-query chain
// once made the compiler fail (backends/qnn/static_values.h). About 20 s.
TEST(SpeechPipeline, SlowQnnLoweringRunsAllFourStagesOnTheSimulator) {
  const auto probe = backends::qnn::QnnBridge().probe();
  GENAI_REQUIRE_AVAILABLE(probe.available, "onnxruntime-qnn (" << probe.missing << ")");
  SpeechFixture f;
  const std::string art = f.dir.file("art");
  const auto r = run_genai(std::vector<std::string>{"pipeline", "--checkpoint", f.model, "--lowering", "qnn",
                                                    "--enable_x86_64", "--soc_model", "SM8650", "-a", art,
                                                    "--max_seq_len", "128", "--quant_recipe", "16a8w", "--audio_path",
                                                    f.first, f.second} +
                           f.generation());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* stage : {"model_preparation", "quantization", "compilation", "inference"})
    EXPECT_TRUE(j["stages"][stage]["ran"].get<bool>()) << stage;
  EXPECT_EQ(j["stats"]["audio_clips"], 2);
  // Every program's methods are delegated to QnnBackend (the encoder's too).
  for (const char* key : {"audio_encoder", "text_decoder", "tok_embedding"}) {
    const auto inspect = run_genai({"inspect", "--json", j["artifacts"][key].get<std::string>()});
    ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
    const auto program = nlohmann::json::parse(inspect.out);
    int qnn_methods = 0;
    for (const auto& m : program["methods"])
      for (const auto& d : m["delegates"]) qnn_methods += d["id"] == "QnnBackend" ? 1 : 0;
    EXPECT_GE(qnn_methods, 1) << key;
  }
  const auto tokens = j["tokens"];
  ASSERT_EQ(tokens.size(), 6u);
  const auto run = run_genai(std::vector<std::string>{"run", "-a", art, "--audio_path", f.first, f.second} + f.generation());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto again = nlohmann::json::parse(run.out);
  EXPECT_EQ(again["tokens"], tokens);
  EXPECT_EQ(again["stats"]["audio_clips"], 2);
}

// The float model (`genai run --checkpoint`) takes clips too: its encoder and decoder graphs on
// the interpreter, as the parity test checks them against transformers.
TEST(SpeechPipeline, FloatCheckpointTakesAudio) {
  SpeechFixture f;
  const auto r = run_genai(std::vector<std::string>{"run", "--checkpoint", f.model, "--audio_path", f.first} + f.generation());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stats"]["audio_clips"], 1);
  EXPECT_EQ(j["tokens"].size(), 6u) << r.out;
}

TEST(SpeechPipeline, BadAudioInputsExitTwoNamingTheFileOrOption) {
  SpeechFixture f;
  const std::string absent = f.dir.file("absent.wav"), text = f.dir.file("notes.wav"), rate = f.dir.file("cd.wav"),
                    longer = f.dir.file("long.wav");
  write_file(text, "not samples");
  write_test_wav(rate, 0.5, 3, 44100);
  write_test_wav(longer, 12.5, 4);
  auto run = [&](const std::string& clip) {
    return std::vector<std::string>{"run", "--checkpoint", f.model, "--audio_path", clip} + f.generation();
  };
  expect_exit2(run(absent), {absent, "cannot be read"});
  expect_exit2(run(text), {text, "not a WAV file"});
  expect_exit2(run(rate), {rate, "44100 Hz", "16000 Hz"});
  expect_exit2(run(longer), {longer, "12.5 s", "at most 12.0 s"});
  // A speech model takes no images, and says what it takes.
  const std::string png = f.dir.file("a.png");
  write_test_png(png, 20, 20, 1);
  expect_exit2(std::vector<std::string>{"run", "--checkpoint", f.model, "--image_path", png} + f.generation(),
               {"--image_path", "no vision encoder", "it takes --audio_path"});
  // synth writes speech folders only as Hugging Face folders.
  expect_exit2({"synth", "--arch", "granite_speech", "--out", f.dir.file("s.gguf")}, {"valid for --arch granite_speech: hf"});
}

}  // namespace
}  // namespace genai::testing
