// The vision encoder compiled for the HTP (our payload) against its QDQ reference, for each family:
// SmolVLM's tower (patches cut by reshape + transpose, learned positions gathered by constant ids,
// pre-LN layers with biased attention and tanh GELU, post LayerNorm, pixel shuffle, projection)
// and InternVL's (a CLS token concatenated ahead, exact GELU, layer scales folded, the CLS row
// sliced off, the LayerNorm-MLP projector), quantized 16a8w on random tiles, executed on integer
// pixels: every feature code equal to the reference's, with scalar and with SIMD kernels.
#include <gtest/gtest.h>

#include "backend_test_util.h"
#include "graph/vision_encoder_graph.h"
#include "kernels/kernel_mode.h"
#include "model/synth.h"
#include "quant/encoder_quantization.h"

namespace genai::backends_testing {
namespace {

class VisionEncoderParity : public ::testing::TestWithParam<VisionFamily> {};

TEST_P(VisionEncoderParity, ScalarAndSimdFeatureCodesEqualTheQdqReference) {
  const ModelConfig text = synth_config("tiny", "llama");
  const auto tower = std::make_shared<const VisionTower>(synth_vision_tower("tiny", text, 7, 5, GetParam()));
  const auto g = graph::build_vision_encoder_graph(tower);
  const int64_t M = tower->config.image_size;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> pixel(-1.0f, 1.0f);
  std::vector<graph::TensorMap> samples;
  for (int s = 0; s < 3; ++s) {
    Tensor t = Tensor::zeros(DType::kF32, {1, 3, M, M});
    for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = pixel(rng);
    samples.push_back({{std::string(graph::kPixelValues), std::move(t)}});
  }
  const auto q = quant::quantize_encoder(g, samples, quant::recipe_from_spelling("16a8w"), {});
  for (const char* key : {"get_pixel_values_scale", "get_pixel_values_zero_point", "get_image_features_scale",
                          "get_image_features_zero_point"})
    EXPECT_TRUE(q.bundle.metadata().count(key)) << key;

  backends::register_builtin_backends();
  const std::string name(graph::kVisionEncoder);
  quant::QdqExecutor qdq({{name, g}}, {{name, q.encodings}});
  for (auto mode : {kernels::KernelMode::kScalar, kernels::KernelMode::kSimd}) {
    kernels::ScopedKernelMode guard(mode);
    auto l = lower_and_init(*compile::find_backend("htp"), name, q.bundle, target_for("SM8650", true));
    int64_t worst = 0, compared = 0;
    for (uint32_t call = 0; call < 3; ++call) {
      Call c = make_call(*l->exec, q.encodings.get(), 1, 0, 40 + call);  // random pixel codes
      execute(*l, c);
      const auto ref = run_reference(qdq, name, c);
      const auto& out = l->exec->outputs().at(0);
      const Codes codes = output_codes(*g, *q.encodings, out, c.outputs[0], ref.at(out.name));
      for (size_t i = 0; i < codes.program.size(); ++i) {
        worst = std::max(worst, std::abs(codes.program[i] - codes.reference[i]));
        ++compared;
      }
    }
    EXPECT_EQ(worst, 0) << (mode == kernels::KernelMode::kScalar ? "scalar" : "simd");
    EXPECT_EQ(compared, 3 * tower->config.tokens_per_image() * text.dim);
  }
}

INSTANTIATE_TEST_SUITE_P(Families, VisionEncoderParity, ::testing::Values(VisionFamily::kSmolVlm, VisionFamily::kInternVl),
                         [](const auto& info) { return std::string(vision_family_name(info.param)); });

}  // namespace
}  // namespace genai::backends_testing
