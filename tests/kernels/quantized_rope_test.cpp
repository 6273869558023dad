// kernels::rope_q: rope of 16-bit codes in the four quantized steps the HTP runs (HTP rule 12,
// docs/quantization.md "HTP rules"), on outputs the QNN HTP simulator gave (V75; printed by
// `python3 tests/python/htp_rules_probe.py rope`), and its intermediate encoding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/quantized_rope.h"

namespace genai::kernels {
namespace {

// The probe's encodings: x, cos and sin (one encoding), the result.
const QParams kX{6.0f / 65535.0f, 31000, 0, 65535}, kTable{2.0001f / 65535.0f, 32767, 0, 65535},
    kY{7.0f / 65535.0f, 33000, 0, 65535};

// Element `i` of a one-row head of two: x[i] with x_other the element it rotates with.
int rope_code(int i, uint16_t x, uint16_t x_other, uint16_t cos, uint16_t sin) {
  const HtpRope p = htp_rope_params(kX, kTable, kTable, kY);
  std::vector<uint16_t> xs(2), cs(2, 32767), sn(2, 32767), y(2);
  xs[static_cast<size_t>(i)] = x;
  xs[static_cast<size_t>(1 - i)] = x_other;
  cs[static_cast<size_t>(i)] = cos;
  sn[static_cast<size_t>(i)] = sin;
  rope_q(xs.data(), cs.data(), sn.data(), 1, 2, p, y.data());
  return y[static_cast<size_t>(i)];
}

// The float result of the same codes rounded once onto kY.
int rounded_once(int i, uint16_t x, uint16_t x_other, uint16_t cos, uint16_t sin) {
  const double dx = (x - kX.zero_point) * double{kX.scale}, dother = (x_other - kX.zero_point) * double{kX.scale};
  const double c = (cos - kTable.zero_point) * double{kTable.scale}, s = (sin - kTable.zero_point) * double{kTable.scale};
  const double rot = i == 0 ? -dother : dother;
  return static_cast<int>(std::nearbyint((dx * c + rot * s) / double{kY.scale})) + kY.zero_point;
}

TEST(HtpRope, GivesWhatTheSimulatorGaveWhereRoundingOnceDoesNot) {
  struct Case {
    int i;
    uint16_t x, other, cos, sin;
    int simulator;
  };
  for (const Case& c : {Case{0, 41743, 53298, 17343, 3858, 45529}, Case{0, 2685, 39756, 58594, 52930, 9252},
                        Case{0, 1083, 47808, 62160, 18288, 16362}, Case{1, 59818, 17680, 63389, 21111, 60147}}) {
    SCOPED_TRACE(c.x);
    EXPECT_EQ(rope_code(c.i, c.x, c.other, c.cos, c.sin), c.simulator);
    EXPECT_NE(rounded_once(c.i, c.x, c.other, c.cos, c.sin), c.simulator);
  }
}

TEST(HtpRope, IntermediateIsSymmetricOverXsRange) {
  const QParams s = htp_rope_intermediate(kX);
  // x spans [-31000, 34535] steps of 6/65535: m = 34535 * 6/65535, the grid [-m, m] on 65535 steps.
  EXPECT_EQ(s.zero_point, 32768);
  EXPECT_NEAR(s.scale, 2.0 * 34535 * 6.0 / 65535 / 65535, 1e-10);  // float32
  EXPECT_TRUE(htp_rope_applies(kX, kTable, kTable, kY));
  EXPECT_FALSE(htp_rope_applies(kX, kTable, QParams{1.0f / 255, 128, 0, 255}, kY));
}

TEST(HtpRope, HeadsAndRowsAreIndependentAndCosOneSinZeroKeepsX) {
  // cos = 1 and sin = 0 exactly: y is x through sym onto kY, within a step of x's own value.
  const QParams table{1.0f / 32767.0f, 32767, 0, 65535};
  const HtpRope p = htp_rope_params(kX, table, table, kY);
  std::vector<uint16_t> x{100, 30000, 31000, 65535, 7, 40000, 50000, 12345}, c(8, 65534), s(8, 32767), y(8);
  rope_q(x.data(), c.data(), s.data(), 2, 4, p, y.data());
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = (x[i] - kX.zero_point) * double{kX.scale} / double{kY.scale} + kY.zero_point;
    EXPECT_NEAR(y[i], std::clamp(want, 0.0, 65535.0), 1.0) << i;
  }
  std::vector<uint16_t> row(4);
  rope_q(x.data() + 4, c.data() + 4, s.data() + 4, 1, 4, p, row.data());
  EXPECT_EQ(std::vector<uint16_t>(y.begin() + 4, y.end()), row);
}

}  // namespace
}  // namespace genai::kernels
