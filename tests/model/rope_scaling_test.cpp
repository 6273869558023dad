#include <gtest/gtest.h>

#include "model/rope_scaling.h"

namespace genai {
namespace {

TEST(RopeScaling, Llama3FactorsHaveThreeRegimes) {
  RopeScaling s{32.0f, 1.0f, 4.0f, 8192};
  auto f = llama3_rope_freq_factors(s, 500000.0f, 64);
  ASSERT_EQ(f.size(), 32u);
  EXPECT_EQ(f.front(), 1.0f);   // highest frequency untouched
  EXPECT_EQ(f.back(), 32.0f);   // lowest frequency divided by the factor
  bool blended = false;
  for (float v : f) blended = blended || (v > 1.0f && v < 32.0f);
  EXPECT_TRUE(blended);
}

TEST(RopeScaling, FitRecoversParameters) {
  for (RopeScaling s : {RopeScaling{32.0f, 1.0f, 4.0f, 8192}, RopeScaling{8.0f, 1.0f, 4.0f, 8192},
                        RopeScaling{8.0f, 2.0f, 8.0f, 8192}}) {
    auto f = llama3_rope_freq_factors(s, 500000.0f, 128);
    auto fit = fit_llama3_rope_scaling(f, 500000.0f, 128, 8192);
    ASSERT_TRUE(fit.has_value());
    EXPECT_FLOAT_EQ(fit->factor, s.factor);
    EXPECT_NEAR(fit->low_freq_factor, s.low_freq_factor, 1e-3);
    EXPECT_NEAR(fit->high_freq_factor, s.high_freq_factor, 1e-3);
  }
  std::vector<float> odd(64, 1.0f);
  odd[3] = 5.0f;
  EXPECT_FALSE(fit_llama3_rope_scaling(odd, 500000.0f, 128, 8192).has_value());
}

}  // namespace
}  // namespace genai
