// The offline residual rotation: its matrices are orthogonal for every order genai builds, an
// unknown order and an unsupported family are InputErrors, and a rotated model computes the same
// function as the original (norms folded, the tied head untied) while its weights change.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "model/reference_decoder.h"
#include "model/residual_rotation.h"
#include "support/input_errors.h"
#include "support/random_model.h"

namespace genai {
namespace {

// max |Q Q^T - I| for Q = rotate_rows(I).
double orthogonality_error(int64_t n) {
  const ResidualRotation q(n);
  std::vector<float> m(static_cast<size_t>(n * n), 0.0f);
  for (int64_t i = 0; i < n; ++i) m[static_cast<size_t>(i * n + i)] = 1.0f;
  q.rotate_rows(m.data(), n);
  // Raw rows, not vector indexing: this tree's test code may be unoptimized (the sanitizer
  // tree's -O0), where each operator[] of the n^3 products was a call (23 s for n = 960).
  double worst = 0.0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const float* a = m.data() + i * n;
      const float* b = m.data() + j * n;
      double dot = 0.0;
      for (int64_t k = 0; k < n; ++k) dot += static_cast<double>(a[k]) * b[k];
      worst = std::max(worst, std::fabs(dot - (i == j ? 1.0 : 0.0)));
    }
  return worst;
}

TEST(ResidualRotation, EveryBuiltOrderIsOrthogonal) {
  // Sylvester alone, one Paley factor (12, 20, 60 = 59 + 1), two (144 = 12 x 12 for 576 and 288).
  for (int64_t n : {2, 64, 12, 48, 20, 288, 576, 960}) {
    SCOPED_TRACE(n);
    EXPECT_FALSE(hadamard_factors(n).empty());
    EXPECT_LT(orthogonality_error(n), 1e-5);
  }
}

TEST(ResidualRotation, AnOrderWithoutAKnownMatrixIsAnInputError) {
  EXPECT_TRUE(hadamard_factors(100).empty());  // 4 x 25: no Paley order carries 25 within 100
  EXPECT_TRUE(hadamard_factors(6).empty());    // no Hadamard matrix of order 6 exists
  const std::string e = testing::input_error_of([] { ResidualRotation q(100); });
  EXPECT_NE(e.find("--rotation"), std::string::npos) << e;
  EXPECT_NE(e.find("100"), std::string::npos) << e;
}

std::vector<float> logits(const Model& m, const std::vector<int32_t>& tokens) {
  ReferenceDecoder ref(m);
  return ref.forward_last(tokens);
}

TEST(ResidualRotation, TheRotatedModelComputesTheSameFunction) {
  for (bool tied : {true, false}) {
    SCOPED_TRACE(tied);
    Model original;
    original.config = testing::small_config(Architecture::kLlama, tied);  // dim 48 = 12 x 4
    original.weights = testing::random_weights(original.config, 5);
    Model rotated = original;
    rotate_residual_stream(rotated);
    EXPECT_FALSE(rotated.config.tied_embeddings);
    EXPECT_TRUE(rotated.weights.contains(weight_names::lm_head()));
    // The norms are folded away: all ones.
    const Tensor& n0 = rotated.weights.get(weight_names::layer(0, "input_layernorm.weight"));
    for (int64_t i = 0; i < n0.numel(); ++i) ASSERT_EQ(n0.data<float>()[i], 1.0f);
    // The embedding really changed.
    const Tensor& e0 = original.weights.get(weight_names::embed_tokens());
    const Tensor& e1 = rotated.weights.get(weight_names::embed_tokens());
    double moved = 0.0;
    for (int64_t i = 0; i < e0.numel(); ++i) moved = std::max(moved, std::fabs(double(e0.data<float>()[i]) - e1.data<float>()[i]));
    EXPECT_GT(moved, 0.1);

    const std::vector<int32_t> tokens{1, 17, 42, 5, 96, 3, 3, 60};
    const auto a = logits(original, tokens), b = logits(rotated, tokens);
    ASSERT_EQ(a.size(), b.size());
    double scale = 0.0, diff = 0.0;
    for (size_t i = 0; i < a.size(); ++i) {
      scale = std::max(scale, std::fabs(double(a[i])));
      diff = std::max(diff, std::fabs(double(a[i]) - b[i]));
    }
    EXPECT_LT(diff, 1e-4 * scale) << "max |difference| " << diff << " of max |logit| " << scale;
  }
}

TEST(ResidualRotation, FamiliesItDoesNotCommuteWithAreInputErrors) {
  for (Architecture arch : {Architecture::kCodeGen, Architecture::kGemma2}) {
    Model m;
    m.config = testing::small_config(arch);
    m.weights = testing::random_weights(m.config, 2);
    EXPECT_THROW(rotate_residual_stream(m), InputError) << architecture_name(arch);
  }
}

}  // namespace
}  // namespace genai
