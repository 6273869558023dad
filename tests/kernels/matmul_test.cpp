// kernels::matmul_q against the QDQ matmul formula (exact int64 sums, or the HTP's accumulator for
// 16-bit x 8-bit codes; m = sa*sb/sy, round half even, clamp), in both builds, with GQA-style broadcast offsets; matmul_f32 against the
// interpreter's loop order.
#include <algorithm>
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "kernels/quantized_matmul.h"
#include "kernels/requantize.h"
#include "kernel_test_util.h"

namespace genai::kernels {
namespace {

using testing::CodeBuffer;
using testing::ScopedMode;

std::vector<int32_t> reference_matmul(const CodeBuffer& a, const QParams& ea, const CodeBuffer& b, const QParams& eb,
                                      int64_t M, int64_t K, int64_t N, const std::vector<MatmulBatch>& batches,
                                      const QParams& ey, size_t ysize) {
  std::vector<int32_t> y(ysize, -1);
  const float m = (ea.scale * eb.scale) / ey.scale;
  const float lo = static_cast<float>(ey.qmin - ey.zero_point), hi = static_cast<float>(ey.qmax - ey.zero_point);
  const bool htp = ea.qmax == 65535 && eb.qmax - eb.qmin <= 255;  // 16-bit x 8-bit: HTP rule 4
  for (const auto& e : batches)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        int64_t acc = 0, bsum = 0;
        for (int64_t p = 0; p < K; ++p) {
          const int64_t bv = b.at(static_cast<size_t>(e.b_offset + p * N + j)) - eb.zero_point;
          acc += static_cast<int64_t>(a.at(static_cast<size_t>(e.a_offset + i * K + p)) - ea.zero_point) * bv;
          bsum += bv;
        }
        if (htp) {  // the centred sum floored to a multiple of 256, the correction rounded to one
          const int64_t corr = (32768 - int64_t{ea.zero_point}) * bsum;
          const auto floor256 = [](int64_t v) { return static_cast<int64_t>(std::floor(static_cast<double>(v) / 256.0)) * 256; };
          acc = floor256(acc - corr) + static_cast<int64_t>(std::ceil((static_cast<double>(corr) - 128.0) / 256.0)) * 256;
        }
        const float r = std::nearbyint(static_cast<float>(acc) * m);
        const float c = std::isnan(r) ? 0.0f : std::min(std::max(r, lo), hi);
        y[static_cast<size_t>(e.y_offset + i * N + j)] = static_cast<int32_t>(c) + ey.zero_point;
      }
  return y;
}

// HTP rule 4 on worked numbers: zero points on a multiple of 256 floor the whole sum; others
// floor the centred sum and round the correction (32768 - zp) * bsum to a multiple of 256, ties down.
TEST(HtpAccumulator, FloorsTheCentredSumAndRoundsTheCorrection) {
  EXPECT_EQ(htp_accumulator(1000, 7, 32768), 768);
  EXPECT_EQ(htp_accumulator(-1000, 7, 32768), -1024);
  EXPECT_EQ(htp_accumulator(1000, 7, 0), 768 + 0);  // correction 32768 * 7: a multiple of 256
  EXPECT_EQ(htp_accumulator(1000, 3, 32868), 1024);   // centred 1300 -> 1280, correction -300 -> -256
  EXPECT_EQ(htp_accumulator(133, 1, 32640), 0);       // correction +128 (a tie) -> 0
  EXPECT_EQ(htp_accumulator(-123, 1, 32896), -256);   // correction -128 (a tie) -> -256
  EXPECT_TRUE(htp_floors_accumulator(65535, 8));
  EXPECT_TRUE(htp_floors_accumulator(65535, 4));
  EXPECT_FALSE(htp_floors_accumulator(65535, 16));
  EXPECT_FALSE(htp_floors_accumulator(255, 8));
}

struct MatmulCase {
  ActType at, bt, yt;
  int64_t heads, kv_heads, M, K, N;
  bool extreme;
};

void run_case(const MatmulCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const int32_t amax = c.at == ActType::kU8 ? 255 : 65535, bmax = c.bt == ActType::kU8 ? 255 : 65535;
  CodeBuffer a(c.at, static_cast<size_t>(c.heads * c.M * c.K)), b(c.bt, static_cast<size_t>(c.kv_heads * c.K * c.N));
  for (size_t i = 0; i < a.size(); ++i)
    a.set(i, c.extreme ? ((i % 3) ? amax : 0) : std::uniform_int_distribution<int32_t>(0, amax)(rng));
  for (size_t i = 0; i < b.size(); ++i)
    b.set(i, c.extreme ? ((i % 2) ? 0 : bmax) : std::uniform_int_distribution<int32_t>(0, bmax)(rng));
  QParams ea{0.01f, c.extreme ? amax : amax / 2 + 3, 0, amax}, eb{0.02f, c.extreme ? 0 : bmax / 3, 0, bmax};
  const int32_t ymax = c.yt == ActType::kU8 ? 255 : 65535;
  // Output scale: a spread of products of typical size lands inside the range, a few clamp.
  const double typical = std::sqrt(static_cast<double>(c.K)) * (amax / 3.5) * (bmax / 3.5) * ea.scale * eb.scale;
  QParams ey{static_cast<float>(typical * 6.0 / ymax), ymax / 2, 0, ymax};
  if (c.extreme) ey.scale = static_cast<float>(static_cast<double>(c.K) * amax * bmax * ea.scale * eb.scale / ymax);
  std::vector<MatmulBatch> batches;
  const int64_t group = c.heads / c.kv_heads;
  for (int64_t h = 0; h < c.heads; ++h)
    batches.push_back({h * c.M * c.K, (h / group) * c.K * c.N, h * c.M * c.N});
  const size_t ysize = static_cast<size_t>(c.heads * c.M * c.N);
  const auto expected = reference_matmul(a, ea, b, eb, c.M, c.K, c.N, batches, ey, ysize);
  int64_t inside = 0;
  for (int32_t v : expected) inside += (v > 0 && v < ymax);
  EXPECT_GT(inside, static_cast<int64_t>(ysize) / 4) << "test encodings clamp too much";
  for (KernelMode mode : {KernelMode::kScalar, KernelMode::kSimd}) {
    ScopedMode scoped(mode);
    CodeBuffer y(c.yt, ysize);
    matmul_q(a.data(), c.at, ea, b.data(), c.bt, eb, c.M, c.K, c.N, batches, ey, c.yt, y.data());
    EXPECT_EQ(y.all(), expected) << (mode == KernelMode::kScalar ? "scalar" : "simd") << " M " << c.M << " K " << c.K
                                 << " N " << c.N;
  }
}

TEST(MatmulQ, AttentionShapesMatchTheQdqFormula) {
  uint32_t seed = 1;
  // q.k^T: [heads, M, 64] x [kv_heads, 64, N]; p.v: [heads, M, N] x [kv_heads, N, 64].
  for (int64_t M : {1, 3, 8})
    for (int64_t N : {1, 7, 64, 130}) {
      run_case({ActType::kU16, ActType::kU16, ActType::kU16, 6, 2, M, 64, N, false}, seed++);
      run_case({ActType::kU16, ActType::kU16, ActType::kU16, 3, 1, M, N, 64, false}, seed++);
    }
  run_case({ActType::kU8, ActType::kU8, ActType::kU8, 2, 2, 5, 64, 33, false}, seed++);
  run_case({ActType::kU16, ActType::kU8, ActType::kU16, 4, 2, 2, 17, 40, false}, seed++);
  run_case({ActType::kU16, ActType::kU16, ActType::kU16, 2, 1, 16, 64, 300, false}, seed++);
}

// 8-bit b (the 8-bit KV cache) takes the integer path: pair sums in int32 lanes, packed b per
// work item; rows past one item (64), K past one exact run (256) and odd K, N past one span.
TEST(MatmulQ, EightBitCacheShapesMatchTheQdqFormula) {
  uint32_t seed = 100;
  for (int64_t M : {1, 5, 70})
    for (int64_t N : {1, 19, 64, 300}) {
      run_case({ActType::kU16, ActType::kU8, ActType::kU16, 6, 2, M, 64, N, false}, seed++);  // q.k^T
      run_case({ActType::kU16, ActType::kU8, ActType::kU16, 3, 1, M, N, 64, false}, seed++);  // p.v
    }
  run_case({ActType::kU16, ActType::kU8, ActType::kU16, 2, 1, 3, 515, 33, false}, seed++);
  run_case({ActType::kU8, ActType::kU8, ActType::kU16, 2, 2, 9, 33, 40, false}, seed++);
  // A group of at most 4 rows reads b directly (decode): odd K, a tail tile past b.
  run_case({ActType::kU16, ActType::kU8, ActType::kU16, 2, 1, 1, 17, 200, false}, seed++);
  run_case({ActType::kU16, ActType::kU8, ActType::kU16, 4, 1, 1, 301, 64, false}, seed++);
  run_case({ActType::kU16, ActType::kU8, ActType::kU16, 3, 3, 1, 200, 48, false}, seed++);
  run_case({ActType::kU16, ActType::kU8, ActType::kU16, 3, 3, 1, 200, 41, false}, seed++);
}

TEST(MatmulQ, ExtremeCodesStayExact) {
  run_case({ActType::kU16, ActType::kU8, ActType::kU16, 2, 1, 5, 2048, 37, true}, 7);
  run_case({ActType::kU16, ActType::kU8, ActType::kU16, 1, 1, 1, 2048, 200, true}, 8);
  run_case({ActType::kU16, ActType::kU16, ActType::kU16, 2, 1, 2, 2048, 20, true}, 5);
  run_case({ActType::kU16, ActType::kU16, ActType::kU16, 6, 2, 1, 2047, 70, true}, 9);  // decode rows, odd K
  run_case({ActType::kU16, ActType::kU16, ActType::kU8, 1, 1, 3, 64, 70, true}, 6);
}

TEST(MatmulF32, FollowsTheInterpreterOrder) {
  std::mt19937 rng(9);
  for (auto [M, K, N] : {std::tuple<int64_t, int64_t, int64_t>{1, 64, 77}, {5, 33, 64}, {9, 7, 3}}) {
    const int64_t heads = 4, kv = 2;
    const auto a = testing::random_floats(rng, static_cast<size_t>(heads * M * K), -1, 1);
    const auto b = testing::random_floats(rng, static_cast<size_t>(kv * K * N), -1, 1);
    std::vector<MatmulBatch> batches;
    for (int64_t h = 0; h < heads; ++h) batches.push_back({h * M * K, (h / 2) * K * N, h * M * N});
    std::vector<float> expected(static_cast<size_t>(heads * M * N), 0.0f);
    for (const auto& e : batches)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t p = 0; p < K; ++p)
          for (int64_t j = 0; j < N; ++j)
            expected[static_cast<size_t>(e.y_offset + i * N + j)] +=
                a[static_cast<size_t>(e.a_offset + i * K + p)] * b[static_cast<size_t>(e.b_offset + p * N + j)];
    for (KernelMode mode : {KernelMode::kScalar, KernelMode::kSimd}) {
      ScopedMode scoped(mode);
      std::vector<float> y(expected.size(), 123.0f);
      matmul_f32(a.data(), b.data(), M, K, N, batches, y.data());
      EXPECT_EQ(y, expected) << (mode == KernelMode::kScalar ? "scalar" : "simd");
    }
  }
}

}  // namespace
}  // namespace genai::kernels
