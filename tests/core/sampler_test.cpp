#include "core/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "core/error.h"

namespace genai {
namespace {

TEST(Sampler, GreedyTakesArgmaxLowestIdOnTies) {
  const std::vector<float> logits{0.5f, 3.0f, -1.0f, 3.0f, 2.9f};
  EXPECT_EQ(argmax(logits), 1);
  Sampler greedy(SamplerConfig{.temperature = 0.0f, .top_p = 0.5f, .seed = 99});
  for (int i = 0; i < 10; ++i) EXPECT_EQ(greedy.sample(logits), 1);
}

TEST(Sampler, XoshiroIsTheReferenceSequence) {
  // The reference algorithm from state {1, 2, 3, 4}: out = rotl(s1 * 5, 7) * 9 = rotl(10, 7) * 9
  // = 11520; the update then zeroes s1, so the second output is 0.
  Xoshiro256 ref = Xoshiro256::from_state(1, 2, 3, 4);
  EXPECT_EQ(ref.next(), 11520u);
  EXPECT_EQ(ref.next(), 0u);
  // Seeding from one value: same seed, same stream; another seed, another stream.
  Xoshiro256 a(7), b(7), c(8);
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    EXPECT_NE(x, c.next());
  }
  Xoshiro256 u(1);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double v = u.uniform();
    ASSERT_GE(v, 0.0);
    ASSERT_LT(v, 1.0);
    sum += v;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.01);
}

TEST(Sampler, NucleusKeepsSmallestPrefixReachingTopP) {
  // Probabilities exactly 0.5, 0.25, 0.125, 0.125 at temperature 1.
  const std::vector<float> logits{std::log(0.125f), std::log(0.5f), std::log(0.125f), std::log(0.25f)};
  auto n = nucleus(logits, 1.0f, 0.7f);
  ASSERT_EQ(n.size(), 2u);  // 0.5 < 0.7 <= 0.75
  EXPECT_EQ(n[0].first, 1);
  EXPECT_EQ(n[1].first, 3);
  EXPECT_NEAR(n[0].second, 2.0 / 3.0, 1e-6);
  EXPECT_NEAR(n[1].second, 1.0 / 3.0, 1e-6);

  n = nucleus(logits, 1.0f, 0.8f);  // needs one of the 0.125 pair: the lower id
  ASSERT_EQ(n.size(), 3u);
  EXPECT_EQ(n[2].first, 0);

  n = nucleus(logits, 1.0f, 1.0f);
  ASSERT_EQ(n.size(), 4u);
  float total = 0;
  for (auto [id, p] : n) total += p;
  EXPECT_NEAR(total, 1.0f, 1e-6);

  // Temperature sharpens: at T = 0.5 probabilities go as p^2: 0.25/0.34375 of mass on id 1.
  n = nucleus(logits, 0.5f, 1.0f);
  EXPECT_NEAR(n[0].second, 0.25 / 0.34375, 1e-5);
}

TEST(Sampler, SampledFrequenciesFollowTheNucleus) {
  const std::vector<float> logits{std::log(0.125f), std::log(0.5f), std::log(0.125f), std::log(0.25f)};
  Sampler s(SamplerConfig{.temperature = 1.0f, .top_p = 0.7f, .seed = 3});
  std::map<int32_t, int> counts;
  const int draws = 30000;
  for (int i = 0; i < draws; ++i) ++counts[s.sample(logits)];
  EXPECT_EQ(counts.size(), 2u);  // ids 0 and 2 are outside the nucleus: never drawn
  EXPECT_NEAR(counts[1] / double(draws), 2.0 / 3.0, 0.015);
  EXPECT_NEAR(counts[3] / double(draws), 1.0 / 3.0, 0.015);
}

TEST(Sampler, SeedReproducesAndDifferentSeedsDiffer) {
  std::vector<float> logits(50);
  for (int i = 0; i < 50; ++i) logits[i] = std::sin(i * 1.3f);
  auto run = [&](uint64_t seed) {
    Sampler s(SamplerConfig{.temperature = 1.0f, .top_p = 0.95f, .seed = seed});
    std::vector<int32_t> out;
    for (int i = 0; i < 64; ++i) out.push_back(s.sample(logits));
    return out;
  };
  EXPECT_EQ(run(11), run(11));
  EXPECT_NE(run(11), run(12));
}

TEST(Sampler, RejectsBadSettings) {
  EXPECT_THROW(Sampler(SamplerConfig{.temperature = -0.1f}), InputError);
  EXPECT_THROW(Sampler(SamplerConfig{.temperature = NAN}), InputError);
  EXPECT_THROW(Sampler(SamplerConfig{.top_p = 0.0f}), InputError);
  EXPECT_THROW(Sampler(SamplerConfig{.top_p = 1.5f}), InputError);
}

}  // namespace
}  // namespace genai
