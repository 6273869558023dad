// kernels::add_q / htp_add_code: the HTP's integer Add (HTP rule 8) on worked numbers, the choice
// of the fixed-point shift, and the broadcast steps of add_q.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/quantized_add.h"

namespace genai::kernels {
namespace {

TEST(HtpAdd, RoundsHalfUpInFixedPoint) {
  const QParams e{0.001f, 32768, 0, 65535}, ey{0.002f, 32768, 0, 65535};
  const HtpAdd p = htp_add_params(e, e, ey);
  EXPECT_EQ(p.shift, 15);  // ratio 0.5: 0.5 * 2^16 would reach 2^15
  EXPECT_EQ(p.ma, 16384);
  EXPECT_EQ(htp_add_code(32769, 32768, p), 32769);  // +0.5 step rounds up (round half to even: 32768)
  EXPECT_EQ(htp_add_code(32767, 32768, p), 32768);  // -0.5 step rounds up to 0
  EXPECT_EQ(htp_add_code(32767, 32767, p), 32767);
  EXPECT_EQ(htp_add_code(65535, 65535, p), 65535);  // clamped
  EXPECT_EQ(htp_add_code(0, 0, p), 0);
}

TEST(HtpAdd, ShiftKeepsBothMultipliersBelow2To15AndStopsAt16) {
  const QParams ey{0.001f, 30000, 0, 65535};
  const auto params = [&](float ra, float rb) {
    return htp_add_params({0.001f * ra, 100, 0, 65535}, {0.001f * rb, 60000, 0, 65535}, ey);
  };
  EXPECT_EQ(params(1.7f, 0.3f).shift, 14);
  EXPECT_EQ(params(0.6667f, 0.01f).shift, 15);
  EXPECT_EQ(params(0.1f, 0.05f).shift, 16);  // 18 would fit; the HTP stops at 16
  EXPECT_EQ(params(0.0142f, 0.004f).shift, 16);
  const HtpAdd p = params(0.1f, 0.05f);
  EXPECT_EQ(p.ma, std::llrint(static_cast<double>(0.0001f / 0.001f) * 65536.0));
  EXPECT_EQ(p.zpa, 100);
  EXPECT_EQ(p.zpb, 60000);
  EXPECT_EQ(p.zpy, 30000);
}

// Scales a hostile payload may carry (finite, but with an infinite ratio): the multipliers are
// capped, the products stay in range, results clamp.
TEST(HtpAdd, HugeScaleRatiosSaturateInsteadOfOverflowing) {
  const HtpAdd p = htp_add_params({3e38f, 0, 0, 65535}, {1e-3f, 0, 0, 65535}, {1e-38f, 32768, 0, 65535});
  EXPECT_GE(p.shift, 1);
  EXPECT_LE(p.ma, int64_t{1} << 22);
  EXPECT_EQ(htp_add_code(65535, 0, p), 65535);
  EXPECT_EQ(htp_add_code(0, 65535, p), 65535);
  EXPECT_EQ(htp_add_code(0, 0, p), 32768);
}

TEST(HtpAdd, AddQReadsScalarAndRepeatedOperands) {
  const QParams ea{0.01f, 100, 0, 65535}, eb{0.02f, 200, 0, 65535}, ey{0.03f, 1000, 0, 65535};
  const HtpAdd p = htp_add_params(ea, eb, ey);
  const std::vector<uint16_t> a{100, 400, 700, 1000}, b{500};
  std::vector<uint16_t> y(4);
  add_q(a.data(), ActType::kU16, 1, b.data(), ActType::kU16, 0, 4, p, ActType::kU16, y.data());
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(y[i], htp_add_code(a[i], b[0], p)) << i;
    // Within one step of the float sum.
    const double want = ((a[i] - 100) * 0.01 + (500 - 200) * 0.02) / 0.03 + 1000;
    EXPECT_LE(std::abs(y[i] - want), 1.0) << i;
  }
}

}  // namespace
}  // namespace genai::kernels
