// LoRA adapters compiled beside the base (--lora_adapter): each adapter's methods, lowered to our
// payload, give the codes of their QDQ reference, with scalar and with SIMD kernels, on two
// families; the base methods are those of a compile without adapters; and the adapters' methods
// read the base weights' encodings themselves, so the program stores them once.
#include <gtest/gtest.h>

#include <random>

#include "backend_test_util.h"
#include "kernels/kernel_mode.h"
#include "model/lora_adapter.h"
#include "pipeline/adapter_graphs.h"

namespace genai::backends_testing {
namespace {

// Random factors of `rank` for `modules` in every layer, scale alpha / rank with alpha = 2 rank.
std::shared_ptr<const LoraAdapter> random_adapter(const Model& m, std::string name, int64_t rank,
                                                  const std::vector<std::string>& modules, uint32_t seed) {
  auto a = std::make_shared<LoraAdapter>();
  a->name = std::move(name);
  a->config.rank = rank;
  a->config.alpha = 2.0 * static_cast<double>(rank);
  a->config.target_modules = modules;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.15f);
  auto random = [&](Shape shape) {
    Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
    for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = normal(rng);
    return t;
  };
  for (int64_t l = 0; l < m.config.n_layers; ++l)
    for (const std::string& module : modules) {
      const std::string block = module == "gate_proj" || module == "up_proj" || module == "down_proj" ? "mlp" : "self_attn";
      const std::string weight = weight_names::layer(l, (block + "." + module + ".weight").c_str());
      const Shape& w = m.weights.get(weight).shape();
      a->layers.emplace(weight, LoraFactors{random({rank, w[1]}), random({w[0], rank})});
    }
  return a;
}

class LoraParity : public ::testing::TestWithParam<bool> {};  // qwen2 (q/k/v biases) or llama

TEST_P(LoraParity, AdapterMethodsEqualTheirReferenceAndTheBaseStaysTheBase) {
  const auto model = block_friendly_model(11, false, GetParam());
  const auto alpha = random_adapter(*model, "alpha", 4, {"q_proj", "v_proj"}, 1);
  const auto beta = random_adapter(*model, "beta", 8, {"k_proj", "o_proj", "gate_proj", "down_proj"}, 2);
  const auto q = quantize(model, quant::recipe_from_spelling("16a8w"), graph::ModelMode::kHybrid, 32, 8, 0, {alpha, beta});
  const auto plain = quantize(model, "16a8w", graph::ModelMode::kHybrid);
  for (const std::string adapter : {"alpha", "beta"})
    for (const std::string base : {"kv_forward", "prefill_forward"}) {
      const std::string name = base + std::string(pipeline::kLoraInfix) + adapter;
      ASSERT_TRUE(q.graphs.count(name)) << name;
      // The adapter's path is there: its graph has more ops than the base's.
      EXPECT_GT(q.graphs.at(name)->ops().size(), q.graphs.at(base)->ops().size()) << name;
      int64_t compared = 0;
      for (auto mode : {kernels::KernelMode::kScalar, kernels::KernelMode::kSimd}) {
        kernels::ScopedKernelMode guard(mode);
        EXPECT_EQ(max_code_difference(q, name, true, 3, &compared), 0) << name;
        EXPECT_GT(compared, 600);
      }
      // Every base weight: the base's encoding object itself.
      for (const auto& [weight, encoding] : q.encodings.at(base)->weights)
        EXPECT_EQ(q.encodings.at(name)->weights.at(weight), encoding) << name << " " << weight;
      EXPECT_EQ(q.bundles.at(pipeline::parse_graph_name(name)).metadata().at("get_logits_scale"),
                q.bundles.at(pipeline::parse_graph_name(base)).metadata().at("get_logits_scale"));
    }
  // The base methods are a compile's without adapters, byte for byte.
  backends::register_builtin_backends();
  const compile::Backend* htp = compile::find_backend("htp");
  for (const auto graph : {pipeline::GraphName::kKvForward, pipeline::GraphName::kPrefillForward}) {
    const std::string name(pipeline::graph_name_str(graph));
    const auto with = htp->lower(name, q.bundles.at(graph), target_for("SM8650", true));
    const auto without = htp->lower(name, plain.bundles.at(graph), target_for("SM8650", true));
    EXPECT_EQ(with.payload.bytes().size(), without.payload.bytes().size()) << name;
    EXPECT_TRUE(std::equal(with.payload.bytes().begin(), with.payload.bytes().end(), without.payload.bytes().begin(),
                           without.payload.bytes().end()))
        << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Families, LoraParity, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "qwen2" : "llama"; });

}  // namespace
}  // namespace genai::backends_testing
