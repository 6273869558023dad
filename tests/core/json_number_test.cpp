// finite_json_number: reports stay parseable JSON when an SQNR is infinite.
#include <gtest/gtest.h>

#include <limits>

#include "core/json_number.h"

namespace genai {
namespace {

TEST(FiniteJsonNumber, KeepsFiniteValuesAndBoundsInfinities) {
  EXPECT_EQ(finite_json_number(27.5), nlohmann::json(27.5));
  EXPECT_EQ(finite_json_number(std::numeric_limits<double>::infinity()), nlohmann::json(999.0));
  EXPECT_EQ(finite_json_number(-std::numeric_limits<double>::infinity()), nlohmann::json(-999.0));
  EXPECT_EQ(finite_json_number(std::numeric_limits<double>::quiet_NaN()), nlohmann::json(-999.0));
  EXPECT_EQ(finite_json_number(std::numeric_limits<double>::infinity()).dump(), "999.0");
}

}  // namespace
}  // namespace genai
