// Comparing a float output with a reference's, as the parity tests report it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace genai::testing {

// max |got - want| over max |want| (the plain difference when want is all zeros); a size mismatch
// is a test failure.
inline double relative_to_largest(const std::vector<float>& got, const std::vector<float>& want) {
  EXPECT_EQ(got.size(), want.size());
  double diff = 0.0, largest = 0.0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(got[i] - want[i])));
    largest = std::max(largest, static_cast<double>(std::fabs(want[i])));
  }
  return largest > 0.0 ? diff / largest : diff;
}

}  // namespace genai::testing
