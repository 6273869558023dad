// kernels::softmax_q: the HTP's fixed-point softmax (docs/quantization.md "HTP rules") on outputs
// the QNN HTP simulator gave (V75, input scale 280/65535: our masked scores' range), its
// agreement with the exact softmax, and when it applies.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/quantized_softmax.h"

namespace genai::kernels {
namespace {

constexpr float kScoreScale = 280.0f / 65535.0f;

// Row [61000, 61000 - d, 0 x 6]: two live columns d codes apart, six at e^-260.
std::vector<uint16_t> pair_row(int d) {
  std::vector<uint16_t> x(8, 0);
  x[0] = 61000;
  x[1] = static_cast<uint16_t>(61000 - d);
  return x;
}

std::vector<uint16_t> softmax_of(const std::vector<uint16_t>& x, float scale) {
  std::vector<uint16_t> y(x.size());
  softmax_q(x.data(), 1, static_cast<int64_t>(x.size()), scale, y.data());
  return y;
}

TEST(HtpSoftmax, GivesWhatTheSimulatorGaveOnPairs) {
  // Equal codes: 32767 each (the reciprocal held below 2^15), not 32768 or 32767.5 rounded.
  EXPECT_EQ(softmax_of(pair_row(0), kScoreScale), (std::vector<uint16_t>{32767, 32767, 0, 0, 0, 0, 0, 0}));
  // A lone maximum: 65534, not 65535.
  EXPECT_EQ(softmax_of(pair_row(3000), kScoreScale)[0], 65534);
  // The tail: 2k - 1 for k = floor(2^15 e^-d s) = 3, beside 2 x 32765.
  const auto tail = softmax_of(pair_row(2110), kScoreScale);
  EXPECT_EQ(tail[0], 65530);
  EXPECT_EQ(tail[1], 5);
  EXPECT_EQ(softmax_of(pair_row(1), kScoreScale)[0], 32838);  // the exact result is 32837.5
  EXPECT_EQ(softmax_of(pair_row(2443), kScoreScale)[1], 0);   // 1.92 steps exactly
}

TEST(HtpSoftmax, StaysWithinAStepOrTwoOfTheExactResultAndFloorsIt) {
  std::mt19937 rng(5);
  const int64_t rows = 64, n = 96;
  std::vector<uint16_t> x(static_cast<size_t>(rows * n)), y(x.size());
  for (auto& v : x) v = static_cast<uint16_t>(59100 + rng() % 1901);
  softmax_q(x.data(), rows, n, kScoreScale, y.data());
  double worst = 0, mean = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double top = 0, sum = 0;
    for (int64_t i = 0; i < n; ++i) top = std::max(top, static_cast<double>(x[static_cast<size_t>(r * n + i)]));
    for (int64_t i = 0; i < n; ++i) sum += std::exp((x[static_cast<size_t>(r * n + i)] - top) * double{kScoreScale});
    for (int64_t i = 0; i < n; ++i) {
      const double exact = std::exp((x[static_cast<size_t>(r * n + i)] - top) * double{kScoreScale}) / sum * 65535.0;
      const double diff = y[static_cast<size_t>(r * n + i)] - exact;
      worst = std::max(worst, std::abs(diff));
      mean += diff;
    }
  }
  mean /= static_cast<double>(rows * n);
  EXPECT_LT(worst, 2.0);
  EXPECT_LT(mean, -0.2) << "floored: biased low by about half a step";
  EXPECT_GT(mean, -1.0);
}

TEST(HtpSoftmax, RowsAreIndependent) {
  const auto a = pair_row(40), b = pair_row(700);
  std::vector<uint16_t> both(a);
  both.insert(both.end(), b.begin(), b.end());
  std::vector<uint16_t> y(both.size());
  softmax_q(both.data(), 2, 8, kScoreScale, y.data());
  EXPECT_EQ(std::vector<uint16_t>(y.begin(), y.begin() + 8), softmax_of(a, kScoreScale));
  EXPECT_EQ(std::vector<uint16_t>(y.begin() + 8, y.end()), softmax_of(b, kScoreScale));
}

// e(d) comes from a table per input scale, kept per thread: one call over all rows, a call per
// row, and calls on other scales in between give the same codes.
TEST(HtpSoftmax, CallsPerRowAndOnOtherScalesInBetweenGiveTheSameCodes) {
  std::mt19937 rng(9);
  const int64_t rows = 64, n = 96;
  std::vector<uint16_t> x(static_cast<size_t>(rows * n)), all(x.size()), other(x.size()), one(static_cast<size_t>(n));
  for (auto& v : x) v = static_cast<uint16_t>(58000 + rng() % 3001);
  softmax_q(x.data(), rows, n, kScoreScale, all.data());
  for (int64_t r = 0; r < rows; ++r) {
    softmax_q(x.data(), rows, n, kScoreScale * (2.0f + static_cast<float>(r)), other.data());
    softmax_q(x.data() + r * n, 1, n, kScoreScale, one.data());
    ASSERT_EQ(one, std::vector<uint16_t>(all.begin() + r * n, all.begin() + (r + 1) * n)) << "row " << r;
  }
  EXPECT_NE(other, all);
}

TEST(HtpSoftmax, AppliesToSixteenBitCodesOntoZeroToOneOnly) {
  const QParams scores{kScoreScale, 61000, 0, 65535}, probs{1.0f / 65535.0f, 0, 0, 65535};
  EXPECT_TRUE(htp_softmax_applies(scores, probs));
  EXPECT_FALSE(htp_softmax_applies(scores, {0.6f / 65535.0f, 0, 0, 65535}));  // another output range
  EXPECT_FALSE(htp_softmax_applies(scores, {1.0f / 65535.0f, 1, 0, 65535}));
  EXPECT_FALSE(htp_softmax_applies(scores, {1.0f / 255.0f, 0, 0, 255}));      // 8-bit probabilities
  EXPECT_FALSE(htp_softmax_applies({kScoreScale, 128, 0, 255}, probs));      // 8-bit scores
  EXPECT_FALSE(htp_softmax_applies({NAN, 61000, 0, 65535}, probs));          // a hostile scale
  EXPECT_FALSE(htp_softmax_applies({-kScoreScale, 61000, 0, 65535}, probs));
}

}  // namespace
}  // namespace genai::kernels
