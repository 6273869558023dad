// kernels::silu_q and htp_sigmoid_code: silu of 16-bit codes as the HTP runs it (HTP rule 13,
// docs/quantization.md "HTP rules"), on codes the QNN HTP simulator gave (V75; printed by
// `python3 tests/python/htp_rules_probe.py sigmoid`).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/quantized_silu.h"

namespace genai::kernels {
namespace {

TEST(HtpSilu, SigmoidGivesWhatTheSimulatorGaveWhereRoundingDoesNot) {
  // Input scale 20/65535, zero point 40000: code -> simulator's sigmoid code, and the rounded one.
  const float sx = 20.0f / 65535.0f;
  struct Case {
    int code, simulator, rounded;
  };
  for (const Case& c : {Case{2594, 0, 1}, Case{22862, 348, 349}, Case{24657, 600, 601}, Case{41265, 39014, 39015},
                        Case{59322, 65356, 65355}, Case{40000, 32768, 32768}}) {
    const float x = static_cast<float>(c.code - 40000) * sx;
    EXPECT_EQ(htp_sigmoid_code(x), c.simulator) << c.code;
    EXPECT_EQ(std::nearbyint(65535.0 / (1.0 + std::exp(-double{x}))), c.rounded) << c.code;
  }
  for (float x = -12.0f; x < 12.0f; x += 0.01f) EXPECT_EQ(htp_sigmoid_code(x) % 2, 0) << x;
  EXPECT_EQ(htp_sigmoid_code(40.0f), 65535);
  EXPECT_EQ(htp_sigmoid_code(std::nanf("")), 0);
}

TEST(HtpSilu, IsXTimesTheSigmoidCodeRoundedOntoTheResult) {
  // x = 1 exactly (2^-10 steps) and a result on the sigmoid's own grid: y is the sigmoid's code.
  const QParams ex{1.0f / 1024.0f, 32768, 0, 65535}, grid = htp_sigmoid_grid();
  const std::vector<uint16_t> x{32768 + 1024};
  std::vector<uint16_t> y(1);
  silu_q(x.data(), 1, ex, grid, y.data());
  EXPECT_EQ(y[0], htp_sigmoid_code(1.0f));
  EXPECT_EQ(y[0], 2 * 23955);  // 2^15 sigmoid(1) = 23955.1
  // Against the float silu: within a step and a half of the result's grid.
  const QParams ey{10.0f / 65535.0f, 6000, 0, 65535};
  std::vector<uint16_t> xs(4096), ys(4096);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<uint16_t>(i * 16);
  silu_q(xs.data(), 4096, QParams{8.0f / 65535.0f, 30000, 0, 65535}, ey, ys.data());
  for (size_t i = 0; i < xs.size(); ++i) {
    const double v = (xs[i] - 30000) * double{8.0f / 65535.0f};
    const double want = std::clamp(v / (1.0 + std::exp(-v)) / double{ey.scale} + ey.zero_point, 0.0, 65535.0);
    EXPECT_NEAR(ys[i], want, 1.5) << i;
  }
}

}  // namespace
}  // namespace genai::kernels
