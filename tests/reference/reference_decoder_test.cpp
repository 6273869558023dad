#include "model/reference_decoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <numeric>

#include "core/error.h"
#include "support/random_model.h"

namespace genai {
namespace {

using testing::random_weights;
using testing::small_config;

std::vector<int32_t> some_tokens(int n, int vocab) {
  std::vector<int32_t> t(n);
  for (int i = 0; i < n; ++i) t[i] = (i * 37 + 11) % vocab;
  return t;
}

float max_abs(const std::vector<float>& v) {
  float m = 0.0f;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

// Feeding a sequence in chunks through the KV cache gives the logits of one batched forward.
TEST(ReferenceDecoder, ChunkedForwardMatchesOneBatch) {
  for (Architecture arch : {Architecture::kLlama, Architecture::kQwen2}) {
    const ModelConfig c = small_config(arch, arch == Architecture::kQwen2);
    const Weights w = random_weights(c, 5);
    const auto tokens = some_tokens(40, static_cast<int>(c.vocab_size));
    ReferenceDecoder whole(c, w);
    const std::vector<float> full = whole.forward(tokens);
    ASSERT_EQ(full.size(), tokens.size() * c.vocab_size);
    EXPECT_EQ(whole.position(), 40);

    ReferenceDecoder chunked(c, w);
    std::vector<float> pieces;
    const std::vector<size_t> cuts{0, 1, 8, 9, 25, 40};
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      auto part = chunked.forward(std::span(tokens).subspan(cuts[i], cuts[i + 1] - cuts[i]));
      pieces.insert(pieces.end(), part.begin(), part.end());
    }
    ASSERT_EQ(pieces.size(), full.size());
    const float tol = 1e-5f * max_abs(full);
    for (size_t i = 0; i < full.size(); ++i) ASSERT_NEAR(pieces[i], full[i], tol) << "index " << i;
  }
}

TEST(ReferenceDecoder, ForwardLastIsLastRowAndResetRestarts) {
  const ModelConfig c = small_config();
  const Weights w = random_weights(c, 9);
  const auto tokens = some_tokens(12, static_cast<int>(c.vocab_size));
  ReferenceDecoder d(c, w);
  const auto all = d.forward(tokens);
  d.reset();
  EXPECT_EQ(d.position(), 0);
  const auto last = d.forward_last(tokens);
  ASSERT_EQ(last.size(), static_cast<size_t>(c.vocab_size));
  for (int64_t v = 0; v < c.vocab_size; ++v) EXPECT_FLOAT_EQ(last[v], all[11 * c.vocab_size + v]);
  // Different history -> different logits (the cache is really used).
  d.reset();
  d.forward(some_tokens(3, static_cast<int>(c.vocab_size)));
  const auto shifted = d.forward_last(std::span(tokens).subspan(11, 1));
  EXPECT_GT(std::fabs(shifted[0] - last[0]) + std::fabs(shifted[1] - last[1]), 1e-4f);
}

// One token at position 0: attention returns v exactly (softmax over one key) and RoPE is the
// identity, so the whole forward can be written out by hand and compared.
TEST(ReferenceDecoder, SingleTokenMatchesHandComputation) {
  ModelConfig c = small_config(Architecture::kQwen2, /*tied=*/true);
  c.n_layers = 1;
  const Weights w = random_weights(c, 21);
  const int32_t token = 42;
  ReferenceDecoder d(c, w);
  const auto logits = d.forward(std::vector<int32_t>{token});

  auto vec = [&](const std::string& n) { return w.get(n).data<float>(); };
  auto matvec = [&](const std::string& n, const std::vector<float>& x, const char* bias) {
    const Tensor& t = w.get(n);
    std::vector<float> y(t.dim(0));
    for (int64_t r = 0; r < t.dim(0); ++r) {
      double s = bias ? vec(bias)[r] : 0.0;
      for (int64_t k = 0; k < t.dim(1); ++k) s += double(t.data<float>()[r * t.dim(1) + k]) * x[k];
      y[r] = float(s);
    }
    return y;
  };
  auto norm = [&](const std::vector<float>& x, const std::string& n) {
    double ss = 0;
    for (float v : x) ss += double(v) * v;
    const double inv = 1.0 / std::sqrt(ss / x.size() + c.norm_eps);
    std::vector<float> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = float(vec(n)[i] * x[i] * inv);
    return y;
  };
  namespace wn = weight_names;
  std::vector<float> x(vec(wn::embed_tokens()) + token * c.dim, vec(wn::embed_tokens()) + (token + 1) * c.dim);
  const auto h = norm(x, wn::layer(0, "input_layernorm.weight"));
  const auto v = matvec(wn::layer(0, "self_attn.v_proj.weight"), h, "model.layers.0.self_attn.v_proj.bias");
  std::vector<float> attn(c.n_heads * c.head_dim);
  const int64_t group = c.n_heads / c.n_kv_heads;
  for (int64_t hd = 0; hd < c.n_heads; ++hd)
    for (int64_t e = 0; e < c.head_dim; ++e) attn[hd * c.head_dim + e] = v[(hd / group) * c.head_dim + e];
  const auto o = matvec(wn::layer(0, "self_attn.o_proj.weight"), attn, nullptr);
  for (int64_t i = 0; i < c.dim; ++i) x[i] += o[i];
  const auto h2 = norm(x, wn::layer(0, "post_attention_layernorm.weight"));
  auto g = matvec(wn::layer(0, "mlp.gate_proj.weight"), h2, nullptr);
  const auto u = matvec(wn::layer(0, "mlp.up_proj.weight"), h2, nullptr);
  for (size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
  const auto down = matvec(wn::layer(0, "mlp.down_proj.weight"), g, nullptr);
  for (int64_t i = 0; i < c.dim; ++i) x[i] += down[i];
  const auto expected = matvec(wn::embed_tokens(), norm(x, wn::final_norm()), nullptr);  // tied head

  ASSERT_EQ(logits.size(), expected.size());
  const float tol = 1e-5f * max_abs(expected);
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(logits[i], expected[i], tol) << "vocab id " << i;
}

TEST(ReferenceDecoder, RopeFrequenciesDefaultAndLlama3) {
  ModelConfig c = small_config();
  c.head_dim = 8;
  c.rope_theta = 10000.0f;
  const auto plain = rope_inv_freq(c);
  ASSERT_EQ(plain.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(plain[i], std::pow(10000.0f, -2.0f * i / 8.0f));

  // Llama 3 scaling with an original context of 64: wavelengths 2*pi/f are 6.3, 62.8, 628, 6283.
  // high_freq_wavelen = 64/4 = 16, low_freq_wavelen = 64/1 = 64.
  c.rope_scaling = RopeScaling{.factor = 8.0f, .low_freq_factor = 1.0f, .high_freq_factor = 4.0f,
                               .original_max_positions = 64};
  const auto scaled = rope_inv_freq(c);
  EXPECT_FLOAT_EQ(scaled[0], plain[0]);         // short wavelength: unchanged
  EXPECT_FLOAT_EQ(scaled[2], plain[2] / 8.0f);  // long wavelength: divided by the factor
  EXPECT_FLOAT_EQ(scaled[3], plain[3] / 8.0f);
  const double wavelen = 2 * std::numbers::pi / plain[1];  // 62.8: in the smooth band
  const double smooth = (64.0 / wavelen - 1.0) / (4.0 - 1.0);
  EXPECT_NEAR(scaled[1], (1 - smooth) * plain[1] / 8.0 + smooth * plain[1], 1e-7);
  EXPECT_LT(scaled[1], plain[1]);
  EXPECT_GT(scaled[1], plain[1] / 8.0f);
}

TEST(ReferenceDecoder, RejectsBadTokensContextAndShapes) {
  const ModelConfig c = small_config();
  const Weights w = random_weights(c, 3);
  ReferenceDecoder d(c, w);
  EXPECT_THROW(d.forward(std::vector<int32_t>{static_cast<int32_t>(c.vocab_size)}), InputError);
  EXPECT_THROW(d.forward(std::vector<int32_t>{-1}), InputError);
  EXPECT_THROW(d.forward(std::vector<int32_t>{}), InputError);
  EXPECT_EQ(d.position(), 0);  // a rejected call changes nothing
  std::vector<int32_t> too_long(c.max_positions + 1, 5);
  EXPECT_THROW(d.forward(too_long), InputError);
  d.forward(std::vector<int32_t>(c.max_positions, 5));
  EXPECT_THROW(d.forward(std::vector<int32_t>{5}), InputError);

  Weights bad = random_weights(c, 3);
  bad.add(weight_names::layer(1, "mlp.up_proj.weight"), Tensor::zeros(DType::kF32, {c.ffn_dim + 1, c.dim}));
  try {
    ReferenceDecoder broken(c, bad);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model.layers.1.mlp.up_proj.weight"), std::string::npos) << e.what();
  }
  const Weights complete = random_weights(c, 3);
  Weights missing;
  for (const auto& [name, t] : complete.all())
    if (name != weight_names::lm_head()) missing.add(name, t);
  EXPECT_THROW(ReferenceDecoder(c, missing), InputError);  // untied config needs lm_head
}

}  // namespace
}  // namespace genai
