// Granite Speech's audio encoder compiled for the HTP (our payload) against its QDQ reference: the
// Conformer (block attention masked, relative positions as matmuls, the depthwise convolution as
// rotations, BatchNorm folded, the CTC mid-layer) and the Q-Former projector over windows of the
// encoder's rows, quantized 16a8w on random feature rows, executed on clips of different lengths
// (the rows past each clip masked out): every embedding code equal to the reference's, with
// scalar and with SIMD kernels.
#include <gtest/gtest.h>

#include <set>

#include "backend_test_util.h"
#include "graph/speech_encoder_graph.h"
#include "modality/speech_encoder_inputs.h"
#include "kernels/kernel_mode.h"
#include "model/synth.h"
#include "quant/encoder_quantization.h"

namespace genai::backends_testing {
namespace {

// Random log-mel-like rows (the extractor's values lie in about [-1, 2]).
media::SpeechFeatures random_features(int64_t rows, int64_t width, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> v(0.5f, 0.6f);
  media::SpeechFeatures f;
  f.rows = rows;
  f.width = width;
  f.values.resize(static_cast<size_t>(rows * width));
  for (float& x : f.values) x = v(rng);
  return f;
}

TEST(AudioEncoderParity, ScalarAndSimdEmbeddingCodesEqualTheQdqReference) {
  const ModelConfig text = synth_config("tiny", "granite");
  const auto tower = std::make_shared<const SpeechTower>(synth_speech_tower("tiny", text, 515, 5));
  const SpeechTowerConfig& sc = tower->config;
  const int64_t rows = graph::speech_encoder_rows(sc, 2.0);  // 2 s of rows: several attention blocks
  const int64_t capacity = graph::speech_encoder_capacity(sc, rows);
  ASSERT_GT(rows / sc.context, 1);
  const auto g = graph::build_speech_encoder_graph(tower, rows);
  std::vector<graph::TensorMap> samples;
  for (uint32_t s = 0; s < 3; ++s)
    samples.push_back(modality::speech_encoder_inputs(random_features(capacity - 7 * s, sc.input_dim, s), sc, rows));
  const auto q = quant::quantize_encoder(g, samples, quant::recipe_from_spelling("16a8w"), {});
  for (const char* key : {"get_input_features_scale", "get_input_features_zero_point", "get_audio_features_scale",
                          "get_audio_features_zero_point"})
    EXPECT_TRUE(q.bundle.metadata().count(key)) << key;

  backends::register_builtin_backends();
  const std::string name(graph::kAudioEncoder);
  quant::QdqExecutor qdq({{name, g}}, {{name, q.encodings}});
  // A full clip, one ending inside an attention block, one shorter than a projector window.
  const std::vector<int64_t> lengths = {capacity, sc.context + 3, sc.window - 4};
  for (auto mode : {kernels::KernelMode::kScalar, kernels::KernelMode::kSimd}) {
    kernels::ScopedKernelMode guard(mode);
    auto l = lower_and_init(*compile::find_backend("htp"), name, q.bundle, target_for("SM8650", true));
    int64_t worst = 0, compared = 0;
    std::set<int64_t> distinct;  // the embeddings are not a constant the two could agree on trivially
    for (size_t k = 0; k < lengths.size(); ++k) {
      graph::TensorMap in = modality::speech_encoder_inputs(random_features(lengths[k], sc.input_dim, 40 + k), sc, rows);
      Call c = call_from_values(*l->exec, q.encodings.get(), std::move(in));
      execute(*l, c);
      const auto ref = run_reference(qdq, name, c);
      const auto& out = l->exec->outputs().at(0);
      const Codes codes = output_codes(*g, *q.encodings, out, c.outputs[0], ref.at(out.name));
      for (size_t i = 0; i < codes.program.size(); ++i) {
        worst = std::max(worst, std::abs(codes.program[i] - codes.reference[i]));
        ++compared;
        distinct.insert(codes.program[i]);
      }
    }
    EXPECT_GT(distinct.size(), 1000u);
    EXPECT_EQ(worst, 0) << (mode == kernels::KernelMode::kScalar ? "scalar" : "simd");
    EXPECT_EQ(compared, static_cast<int64_t>(lengths.size()) * rows / sc.window * sc.queries() * text.dim);
  }
}

}  // namespace
}  // namespace genai::backends_testing
