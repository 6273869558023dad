// LoRA adapters kept beside the frozen weights, against PEFT running them unmerged:
// tests/python/lora_reference.py saves small random llama and qwen2 decoders, each with two random
// adapters (rank 4 on q/v; rank 8 with rsLoRA on k/o/gate/down), and the logits PEFT computes. A
// decoder graph over the weights with an adapter (weights_with_adapter) must give those logits to
// 1e-4 x max|logit| at every position; without one, the base model's.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "graph/decoder_graphs.h"
#include "graph/interpreter.h"
#include "model/lora_adapter.h"
#include "model/model.h"
#include "support/cli_runner.h"

namespace genai {
namespace {

std::vector<float> read_f32(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  std::vector<float> v(static_cast<size_t>(in.tellg()) / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  EXPECT_TRUE(in.good()) << path;
  return v;
}

// Logits of one full-autoregressive graph over `tokens` (ar = CL = the sequence).
std::vector<float> logits(const ModelConfig& config, std::shared_ptr<const Weights> weights,
                          const std::vector<int32_t>& tokens) {
  const auto n = static_cast<int64_t>(tokens.size());
  const auto g = graph::build_decoder_graph(config, std::move(weights), "lora_parity", n, n);
  Tensor t = Tensor::zeros(DType::kI32, {1, n}), pos = Tensor::zeros(DType::kI32, {1, n});
  Tensor mask = Tensor::zeros(DType::kF32, {1, 1, n, n});
  for (int64_t i = 0; i < n; ++i) {
    t.mutable_data<int32_t>()[i] = tokens[static_cast<size_t>(i)];
    pos.mutable_data<int32_t>()[i] = static_cast<int32_t>(i);
    for (int64_t j = i + 1; j < n; ++j) mask.mutable_data<float>()[i * n + j] = graph::kMaskedValue;
  }
  const graph::TensorMap out = graph::interpret(*g, {{"tokens", &t}, {"input_pos", &pos}, {"atten_mask", &mask}});
  const Tensor& l = out.at("logits");
  return {l.data<float>(), l.data<float>() + l.numel()};
}

// Largest difference relative to the largest expected magnitude.
double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  EXPECT_EQ(got.size(), want.size());
  double worst = 0, largest = 0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]));
    largest = std::max(largest, std::fabs(static_cast<double>(want[i])));
  }
  return worst / largest;
}

TEST(LoraParity, UnmergedAdaptersGivePeftsLogits) {
  testing::TempDir dir;
  const auto r = testing::run_process({"python3", testing::python_script("lora_reference.py"), dir.path()});
  ASSERT_EQ(r.exit_code, 0) << "lora_reference.py failed:\n" << r.err;
  std::ifstream in(dir.file("cases.json"));
  const nlohmann::json cases = nlohmann::json::parse(in);
  ASSERT_EQ(cases.size(), 2u);
  for (const auto& cs : cases) {
    SCOPED_TRACE(cs["family"].get<std::string>());
    LoadOptions load;
    load.load_tokenizer = false;
    const Model model = load_model(cs["model"].get<std::string>(), load);
    const auto tokens = cs["tokens"].get<std::vector<int32_t>>();
    const std::vector<float> base_want = read_f32(cs["base_logits"].get<std::string>());
    const auto base = std::make_shared<const Weights>(model.weights);
    EXPECT_LT(relative_error(logits(model.config, base, tokens), base_want), 1e-4);
    for (const auto& a : cs["adapters"]) {
      SCOPED_TRACE(a["name"].get<std::string>());
      const LoraAdapter adapter = read_lora_adapter(a["name"], a["dir"].get<std::string>(), model.config, model.weights);
      EXPECT_EQ(adapter.config.rank, a["rank"].get<int64_t>());
      EXPECT_EQ(adapter.layers.size(), 2 * a["targets"].size());  // two layers
      const std::vector<float> want = read_f32(a["logits"].get<std::string>());
      const double error = relative_error(logits(model.config, weights_with_adapter(model.weights, adapter), tokens), want);
      EXPECT_LT(error, 1e-4);
      EXPECT_GT(relative_error(base_want, want), 1e-2);  // the adapter changes the logits
      std::printf("%s + %s: %.3g of the largest logit from PEFT\n", cs["family"].get<std::string>().c_str(),
                  adapter.name.c_str(), error);
    }
  }
}

}  // namespace
}  // namespace genai
