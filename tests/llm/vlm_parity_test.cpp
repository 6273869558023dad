// Vision-language models against transformers: tests/python/vlm_reference.py builds a tiny
// random-weight SmolVLM or InternVL (every tensor perturbed, so no norm is 1, no bias 0, no layer
// scale 0.1), saves it with its image processor's settings, and writes an image, the connector's
// features of its tiles and the logits of a token sequence whose image tokens take them. Our
// loader, image processor, vision encoder graph (float interpreter) and the decoder session with
// replaced embeddings must agree: features and logits within 1e-4 of their largest magnitude.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "graph/interpreter.h"
#include "graph/vision_encoder_graph.h"
#include "llm/graph_decoder.h"
#include "llm/media_embeddings.h"
#include "media/image_file.h"
#include "model/model.h"
#include "modality/image_processing.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"
#include "support/float_compare.h"
#include "support/test_requirements.h"

namespace genai {
namespace {

using testing::read_f32_file;
using testing::relative_to_largest;

class VlmParity : public ::testing::TestWithParam<std::string> {};

TEST_P(VlmParity, EncoderFeaturesAndMergedLogitsEqualTransformers) {
  testing::TempDir dir;
  const auto ref = testing::run_process({"python3", testing::python_script("vlm_reference.py"), GetParam(), dir.path()});
  GENAI_REQUIRE_AVAILABLE(ref.exit_code == 0, "transformers + torch (scripts/install_deps.sh --test): " + ref.err);
  const auto cs = nlohmann::json::parse(testing::read_text(dir.file("case.json")));

  LoadOptions load;
  load.load_tokenizer = false;
  const auto model = std::make_shared<const Model>(load_model(dir.file("model"), load));
  ASSERT_TRUE(model->vision);
  const VisionTowerConfig& vc = model->vision->config;
  EXPECT_EQ(vc.image_token_id, cs["image_token_id"].get<int32_t>());
  EXPECT_EQ(vc.tokens_per_image(), cs["tokens_per_tile"].get<int64_t>());
  EXPECT_EQ(vc.text_dim, cs["text_hidden"].get<int64_t>());

  EXPECT_EQ(vision_family_name(vc.family), GetParam());
  const modality::ImageProcessing processing(vc.family, model->vision->processor_config);
  const media::ProcessedImage image = processing.process(media::read_image(dir.file("image.png")));
  ASSERT_EQ(image.tiles(), cs["tiles"].get<int64_t>());

  const auto encoder = graph::build_vision_encoder_graph(model->vision);
  const int64_t tile_values = 3 * vc.image_size * vc.image_size;
  std::vector<float> features;
  for (int64_t t = 0; t < image.tiles(); ++t) {
    Tensor pixels = Tensor::zeros(DType::kF32, {1, 3, vc.image_size, vc.image_size});
    std::memcpy(pixels.mutable_data<float>(), image.pixels.data() + t * tile_values, tile_values * sizeof(float));
    const auto out = graph::interpret(*encoder, {{std::string(graph::kPixelValues), &pixels}});
    const Tensor& f = out.at(std::string(graph::kImageFeatures));
    features.insert(features.end(), f.data<float>(), f.data<float>() + f.numel());
  }
  const double feature_error = relative_to_largest(features, read_f32_file(dir.file("features.f32")));
  EXPECT_LT(feature_error, 1e-4);

  const auto tokens = cs["tokens"].get<std::vector<int32_t>>();
  GraphSessionOptions so;
  so.max_context_len = 64;
  so.prefill_ar_len = 8;  // the image tokens span several prefill chunks
  so.separate_embedding = true;
  auto session = make_graph_session(model, so);
  const auto rows = media_embedding_rows(tokens, vc.image_token_id, features, vc.text_dim);
  const double logit_error =
      relative_to_largest(session->forward_all(tokens, rows), read_f32_file(dir.file("logits.f32")));
  EXPECT_LT(logit_error, 1e-4);
  std::printf("%s parity: features %.3g, logits %.3g (relative to the largest magnitude)\n", GetParam().c_str(),
              feature_error, logit_error);

  // Without the features the logits differ: the replacement is what makes them agree.
  session->reset();
  EXPECT_GT(relative_to_largest(session->forward_all(tokens), read_f32_file(dir.file("logits.f32"))), 1e-3);
  // A prompt with one image token too many is an InputError naming the counts.
  auto extra = tokens;
  extra.push_back(vc.image_token_id);
  EXPECT_THROW(media_embedding_rows(extra, vc.image_token_id, features, vc.text_dim), InputError);
}

INSTANTIATE_TEST_SUITE_P(Families, VlmParity, ::testing::Values("smolvlm", "internvl"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace genai
