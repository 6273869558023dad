// Multimodal prompts as the generation loop builds them, against transformers: a vision-language
// prompt with images (SmolVLM, InternVL; tests/python/vlm_prompt_reference.py: the model's chat
// template with image items, the image processor's tiles, the processor's expansion, the
// tokenizer) and a Granite Speech prompt with clips (speech_prompt_reference.py: the model card's
// chat message, GraniteSpeechProcessor). The same token ids, and the encoder's rows replace
// exactly the image or audio tokens, in order.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "llm/generation.h"
#include "modality/modality_registry.h"
#include "model/model.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"
#include "support/image_files.h"
#include "support/test_requirements.h"
#include "support/wav_files.h"

namespace genai {
namespace {

// Records what the generation loop prefills; its logits pick the stop token.
class RecordingSession : public DecoderSession {
 public:
  RecordingSession(int32_t vocab, int32_t stop) : logits_(static_cast<size_t>(vocab), 0.0f) { logits_[stop] = 1.0f; }
  std::span<const float> forward(std::span<const int32_t> tokens) override {
    tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
    return logits_;
  }
  std::span<const float> forward_replacing(std::span<const int32_t> tokens, const EmbeddingRows& replaced) override {
    replaced_ = replaced;
    return forward(tokens);
  }
  int64_t position() const override { return static_cast<int64_t>(tokens_.size()); }
  int64_t max_context() const override { return 4096; }
  int32_t vocab_size() const override { return static_cast<int32_t>(logits_.size()); }
  void reset() override { tokens_.clear(); }

  std::vector<int32_t> tokens_;
  EmbeddingRows replaced_;

 private:
  std::vector<float> logits_;
};

class VlmPrompt : public ::testing::TestWithParam<std::string> {};

TEST_P(VlmPrompt, TokensEqualTransformersProcessorAndFeaturesLandOnImageTokens) {
  testing::TempDir dir;
  const std::string model_dir = dir.file("model");
  ASSERT_EQ(testing::run_genai({"synth", "--arch", GetParam(), "--format", "hf", "--out", model_dir}).exit_code, 0);
  testing::write_test_png(dir.file("wide.png"), 150, 60, 1);
  testing::write_test_png(dir.file("tall.png"), 30, 90, 2);
  const auto ref = testing::run_process({"python3", testing::python_script("vlm_prompt_reference.py"), model_dir,
                                         dir.file("ref.json"), dir.file("wide.png"), dir.file("tall.png")});
  GENAI_REQUIRE_AVAILABLE(ref.exit_code == 0, "transformers + num2words (scripts/install_deps.sh --test): " + ref.err);
  const auto want = nlohmann::json::parse(testing::read_text(dir.file("ref.json")));

  const auto model = std::make_shared<const Model>(load_model(model_dir));
  ASSERT_TRUE(model->vision && model->tokenizer);
  EXPECT_EQ(model->chat_format, GetParam() == "smolvlm" ? ChatFormat::kSmolVlm : ChatFormat::kChatML);
  auto encoder = modality::find_modality("vision")->open_float(model);
  GenerationOptions o;
  o.max_new_tokens = 0;
  o.media = encoder->prompt({dir.file("wide.png"), dir.file("tall.png")});
  EXPECT_EQ(o.media->tiles, want["tiles"].get<int64_t>());
  RecordingSession session(static_cast<int32_t>(model->config.vocab_size), model->tokenizer->stop_ids().front());
  Conversation conversation(session, *model->tokenizer, model->chat_format, o);
  conversation.turn("What is in these pictures?");
  EXPECT_EQ(session.tokens_, want["ids"].get<std::vector<int32_t>>());

  std::vector<int64_t> image_positions;
  for (size_t i = 0; i < session.tokens_.size(); ++i)
    if (session.tokens_[i] == model->vision->config.image_token_id) image_positions.push_back(static_cast<int64_t>(i));
  EXPECT_EQ(session.replaced_.at, image_positions);
  EXPECT_EQ(static_cast<int64_t>(image_positions.size()), o.media->tiles * model->vision->config.tokens_per_image());
  EXPECT_EQ(session.replaced_.rows, o.media->features);
}

INSTANTIATE_TEST_SUITE_P(Families, VlmPrompt, ::testing::Values("smolvlm", "internvl3"),
                         [](const auto& info) { return info.param; });

TEST(SpeechPrompt, TokensEqualTransformersProcessorAndEmbeddingsLandOnAudioTokens) {
  testing::TempDir dir;
  const std::string model_dir = dir.file("model"), first = dir.file("a.wav"), second = dir.file("b.wav");
  ASSERT_EQ(testing::run_genai({"synth", "--arch", "granite_speech", "--format", "hf", "--out", model_dir}).exit_code, 0);
  testing::write_test_wav(first, 1.5, 1);
  testing::write_test_wav(second, 0.8, 2);
  const auto ref = testing::run_process({"python3", testing::python_script("speech_prompt_reference.py"), model_dir,
                                         dir.file("ref.json"), first, second});
  GENAI_REQUIRE_AVAILABLE(ref.exit_code == 0, "transformers (scripts/install_deps.sh --test): " + ref.err);
  const auto want = nlohmann::json::parse(testing::read_text(dir.file("ref.json")));

  const auto model = std::make_shared<const Model>(load_model(model_dir));
  ASSERT_TRUE(model->speech && model->tokenizer);
  EXPECT_EQ(model->chat_format, ChatFormat::kGranite);
  const int32_t audio_token = model->speech->config.audio_token_id;
  auto encoder = modality::find_modality("audio")->open_float(model);
  GenerationOptions o;
  o.max_new_tokens = 0;
  o.media = encoder->prompt({first, second});
  EXPECT_EQ(o.media->token_id, audio_token);
  RecordingSession session(static_cast<int32_t>(model->config.vocab_size), model->tokenizer->stop_ids().front());
  Conversation conversation(session, *model->tokenizer, model->chat_format, o);
  conversation.turn("What is said in these clips?");
  EXPECT_EQ(session.tokens_, want["ids"].get<std::vector<int32_t>>());

  std::vector<int64_t> audio_positions;
  for (size_t i = 0; i < session.tokens_.size(); ++i)
    if (session.tokens_[i] == audio_token) audio_positions.push_back(static_cast<int64_t>(i));
  EXPECT_EQ(session.replaced_.at, audio_positions);
  const auto counts = want["audio_tokens"].get<std::vector<int64_t>>();
  EXPECT_EQ(static_cast<int64_t>(audio_positions.size()), counts.at(0) + counts.at(1));
  EXPECT_EQ(static_cast<int64_t>(session.replaced_.rows.size()), static_cast<int64_t>(audio_positions.size()) * o.media->dim);
  EXPECT_EQ(session.replaced_.rows, o.media->features);
}

}  // namespace
}  // namespace genai
