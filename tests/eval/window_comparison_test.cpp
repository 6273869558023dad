// llm::compare_windows, the one perplexity loop: perplexity, SQNR and top-1 agreement of logit
// sources against the first, on hand-made logits whose figures are known.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "eval/window_comparison.h"

namespace genai {
namespace {

constexpr int64_t kVocab = 4;

// Every row puts `hit` on the token that follows and 0 elsewhere.
WindowLogits peaked(float hit) {
  return [hit](std::span<const int32_t> tokens) {
    std::vector<float> l(tokens.size() * kVocab, 0.0f);
    for (size_t i = 0; i + 1 < tokens.size(); ++i) l[i * kVocab + static_cast<size_t>(tokens[i + 1])] = hit;
    return l;
  };
}

TEST(WindowComparison, PerplexitySqnrAndAgreement) {
  const std::vector<int32_t> a = {0, 1, 2, 3}, b = {3, 2, 1};
  const std::vector<std::span<const int32_t>> windows = {a, b};
  const LogitsSource sources[] = {{"uniform", peaked(0.0f)}, {"same", peaked(0.0f)}, {"sharp", peaked(std::log(3.0f))}};
  const WindowComparison c = compare_windows(windows, kVocab, sources);
  EXPECT_EQ(c.windows, 2);
  EXPECT_EQ(c.logits_rows, 7);
  EXPECT_EQ(c.predicted_tokens, 5);
  ASSERT_EQ(c.sources.size(), 3u);
  // Uniform logits: perplexity = vocabulary.
  EXPECT_NEAR(c.sources[0].perplexity, 4.0, 1e-9);
  EXPECT_EQ(c.sources[1].sqnr_db, std::numeric_limits<double>::infinity());
  EXPECT_EQ(c.sources[1].top1_agreed, 5);
  // e^log3 on the right token out of 3 + 3 ones: p = 1/2, perplexity 2.
  EXPECT_NEAR(c.sources[2].perplexity, 2.0, 1e-6);
  // Against all-zero logits the signal is 0: SQNR -inf; argmax of a uniform row is token 0.
  EXPECT_EQ(c.sources[2].sqnr_db, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(c.sources[2].top1_agreed, 0);  // a uniform row's argmax is token 0, never the next token here
}

TEST(WindowComparison, SqnrOfANoisySource) {
  const std::vector<int32_t> a = {1, 2, 3};
  const std::vector<std::span<const int32_t>> windows = {a};
  // Reference 2 everywhere, the other 2 + 0.02: noise/signal = 1e-4, 40 dB.
  auto constant = [](float v) {
    return [v](std::span<const int32_t> t) { return std::vector<float>(t.size() * kVocab, v); };
  };
  const LogitsSource sources[] = {{"ref", constant(2.0f)}, {"noisy", constant(2.02f)}};
  const WindowComparison c = compare_windows(windows, kVocab, sources);
  EXPECT_NEAR(c.sources[1].sqnr_db, 40.0, 1e-3);
  EXPECT_NEAR(c.sources[1].perplexity, c.sources[0].perplexity, 1e-9);  // a shift keeps the softmax
}

TEST(WindowComparison, ASourceOfTheWrongSizeFails) {
  const std::vector<int32_t> a = {1, 2};
  const std::vector<std::span<const int32_t>> windows = {a};
  const LogitsSource sources[] = {{"ok", peaked(0.0f)},
                                  {"short", [](std::span<const int32_t>) { return std::vector<float>(3, 0.0f); }}};
  EXPECT_ANY_THROW(compare_windows(windows, kVocab, sources));
}

}  // namespace
}  // namespace genai
