// Granite Speech against transformers: tests/python/speech_reference.py builds a tiny random-weight
// Granite Speech (every tensor perturbed, BatchNorm's statistics off 0 and 1), saves it with its
// feature extractor's settings, and writes a WAV clip (its last attention block partly filled),
// the projector's output for it and the logits of a token sequence whose <|audio|> tokens take
// them. Our loader, features, audio encoder graph (float interpreter, in a graph longer than the
// clip) and the decoder session with replaced embeddings (granite's embedding multiplier applies
// to them too) must agree: features and logits within 1e-4 of their largest magnitude; and with a
// random LoRA adapter in the folder (merged at load), the logits PEFT gives running it unmerged.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "graph/interpreter.h"
#include "graph/speech_encoder_graph.h"
#include "modality/speech_encoder_inputs.h"
#include "llm/graph_decoder.h"
#include "llm/media_embeddings.h"
#include "media/speech_features.h"
#include "media/wav_file.h"
#include "model/model.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"
#include "support/float_compare.h"
#include "support/test_requirements.h"

namespace genai {
namespace {

using testing::read_f32_file;
using testing::relative_to_largest;

TEST(SpeechParity, EncoderProjectorAndMergedLogitsEqualTransformers) {
  testing::TempDir dir;
  const auto ref = testing::run_process({"python3", testing::python_script("speech_reference.py"), dir.path()});
  GENAI_REQUIRE_AVAILABLE(ref.exit_code == 0, "transformers + torch (scripts/install_deps.sh --test): " + ref.err);
  const auto cs = nlohmann::json::parse(testing::read_text(dir.file("case.json")));
  LoadOptions load;
  load.load_tokenizer = false;
  const auto model = std::make_shared<const Model>(load_model(dir.file("model"), load));
  ASSERT_TRUE(model->speech);
  const SpeechTowerConfig& sc = model->speech->config;
  EXPECT_EQ(sc.audio_token_id, cs["audio_token_id"].get<int32_t>());

  const media::SpeechFeatureConfig fc = media::read_speech_feature_config(model->speech->processor_config);
  const media::SpeechFeatures clip = media::speech_features(media::read_wav(dir.file("clip.wav")), fc, "clip.wav");
  ASSERT_EQ(clip.rows, cs["rows"].get<int64_t>());
  ASSERT_EQ(clip.audio_tokens, cs["audio_tokens"].get<int64_t>());
  const int64_t rows = 120;  // two blocks more than the clip's 66 rows need: what follows them must not leak in
  const auto encoder = graph::build_speech_encoder_graph(model->speech, rows);
  const graph::TensorMap inputs = modality::speech_encoder_inputs(clip, sc, rows);
  graph::InputMap bound;
  for (const auto& [name, t] : inputs) bound[name] = &t;
  const Tensor out = graph::interpret(*encoder, bound).at(std::string(graph::kAudioFeatures));
  std::vector<float> features(out.data<float>(), out.data<float>() + clip.audio_tokens * sc.text_dim);
  const double feature_error = relative_to_largest(features, read_f32_file(dir.file("features.f32")));
  EXPECT_LT(feature_error, 1e-4);

  const auto tokens = cs["tokens"].get<std::vector<int32_t>>();
  GraphSessionOptions so;
  so.max_context_len = 64;
  so.prefill_ar_len = 8;
  so.separate_embedding = true;
  auto session = make_graph_session(model, so);
  const auto text_tokens = cs["text_tokens"].get<std::vector<int32_t>>();
  EXPECT_LT(relative_to_largest(session->forward_all(text_tokens), read_f32_file(dir.file("text_logits.f32"))), 1e-4);
  session->reset();
  const auto replaced = media_embedding_rows(tokens, sc.audio_token_id, features, sc.text_dim);
  const double logit_error =
      relative_to_largest(session->forward_all(tokens, replaced), read_f32_file(dir.file("logits.f32")));
  EXPECT_LT(logit_error, 1e-4);

  // The folder with its LoRA adapter (has_lora_adapter): merged at load, the logits PEFT gives
  // with the adapter running beside the weights; the adapter moves them well past the tolerance.
  const auto adapted = std::make_shared<const Model>(load_model(dir.file("model_lora"), load));
  auto adapted_session = make_graph_session(adapted, so);
  const std::vector<float> lora_want = read_f32_file(dir.file("lora_logits.f32"));
  const double lora_error = relative_to_largest(adapted_session->forward_all(tokens, replaced), lora_want);
  EXPECT_LT(lora_error, 1e-4);
  EXPECT_GT(relative_to_largest(read_f32_file(dir.file("logits.f32")), lora_want), 1e-2);
  std::printf("granite speech parity: features %.3g, logits %.3g, with LoRA %.3g (relative to the largest magnitude)\n",
              feature_error, logit_error, lora_error);
}

}  // namespace
}  // namespace genai
