// Every vectorised target built in that this CPU runs (testing::runnable_targets: AVX-512 VNNI
// down to SSSE3 on x86, SVE2/SVE at their vector lengths and NEON on Arm, and EMU128, the portable
// fallback) against the scalar build, by forcing Highway's dispatch to one target at a time.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include "core/half.h"

#include "kernels/float_ops.h"
#include "kernels/packed_linear.h"
#include "kernels/quantized_add.h"
#include "kernels/quantized_rope.h"
#include "kernels/quantized_silu.h"
#include "kernels/quantized_softmax.h"
#include "kernels/quantized_matmul.h"
#include "kernel_test_util.h"

namespace genai::kernels {
namespace {

using testing::CodeBuffer;
using testing::ForcedTarget;
using testing::ScopedMode;

template <typename Fn>
auto both_builds(Fn fn) {
  decltype(fn()) scalar_out, simd_out;
  {
    ScopedMode m(KernelMode::kScalar);
    scalar_out = fn();
  }
  ScopedMode m(KernelMode::kSimd);
  simd_out = fn();
  return std::make_pair(scalar_out, simd_out);
}

std::vector<int32_t> run_linear(std::mt19937& rng, int bits, int64_t block, int64_t rows, int64_t out, int64_t in,
                                ActType xt) {
  const int lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
  std::vector<int16_t> q(static_cast<size_t>(out * in));
  for (auto& v : q) v = static_cast<int16_t>(std::uniform_int_distribution<int>(lo, hi)(rng));
  std::vector<uint8_t> packed(packed_linear_bytes(out, in, bits));
  pack_linear_weights(q.data(), out, in, bits, packed.data());
  const auto sums = linear_block_sums(q.data(), out, in, block);
  const auto scales = testing::random_floats(rng, sums.size(), 0.001f, 0.01f);
  const auto bias = testing::random_floats(rng, static_cast<size_t>(out), -1, 1);
  const PackedLinear w{out, in, bits, block, packed.data(), scales.data(), sums.data()};
  const int32_t xmax = xt == ActType::kU8 ? 255 : 65535;
  CodeBuffer x(xt, static_cast<size_t>(rows * in));
  for (size_t i = 0; i < x.size(); ++i) x.set(i, std::uniform_int_distribution<int32_t>(0, xmax)(rng));
  const QParams ex{0.01f, xmax / 3, 0, xmax}, ey{static_cast<float>(in) * 0.05f, 32768, 0, 65535};
  auto [a, b] = both_builds([&] {
    CodeBuffer y(ActType::kU16, static_cast<size_t>(rows * out));
    linear_q(x.data(), xt, rows, ex, w, bias.data(), ey, ActType::kU16, y.data());
    return y.all();
  });
  EXPECT_EQ(a, b) << bits << " bits block " << block << " rows " << rows << " [" << out << "x" << in << "]";
  return b;
}

void run_everything(uint32_t seed) {
  std::mt19937 rng(seed);
  for (int bits : {8, 4})
    for (int64_t block : {0, 32, 128})
      for (int64_t rows : {1, 2, 7}) run_linear(rng, bits, block, rows, 40, 256, ActType::kU16);
  run_linear(rng, 8, 0, 3, 17, 66, ActType::kU8);
  run_linear(rng, 4, 0, 5, 33, 1030, ActType::kU16);
  run_linear(rng, 16, 0, 5, 20, 130, ActType::kU16);

  // matmul_q
  const int64_t M = 5, K = 64, N = 70;
  CodeBuffer a(ActType::kU16, static_cast<size_t>(2 * M * K)), b(ActType::kU8, static_cast<size_t>(K * N));
  for (size_t i = 0; i < a.size(); ++i) a.set(i, static_cast<int32_t>(rng() & 0xffff));
  for (size_t i = 0; i < b.size(); ++i) b.set(i, static_cast<int32_t>(rng() & 0xff));
  const std::vector<MatmulBatch> batches{{0, 0, 0}, {M * K, 0, M * N}};
  const QParams ea{0.01f, 30000, 0, 65535}, eb{0.02f, 100, 0, 255}, ey{50.0f, 32768, 0, 65535};
  auto [ya, yb] = both_builds([&] {
    CodeBuffer y(ActType::kU16, static_cast<size_t>(2 * M * N));
    matmul_q(a.data(), ActType::kU16, ea, b.data(), ActType::kU8, eb, M, K, N, batches, ey, ActType::kU16, y.data());
    return y.all();
  });
  EXPECT_EQ(ya, yb) << "matmul_q";

  // quantize / dequantize, rope, add, mul, and the ops with exp and double sums: exact on every
  // target.
  const auto xf = testing::random_floats(rng, 517, -3, 3);
  const QParams p{0.001f, 30000, 0, 65535};
  auto [qa, qb] = both_builds([&] {
    CodeBuffer q(ActType::kU16, xf.size());
    quantize(xf.data(), static_cast<int64_t>(xf.size()), p, ActType::kU16, q.data());
    std::vector<float> back(xf.size());
    dequantize(q.data(), ActType::kU16, static_cast<int64_t>(xf.size()), p, back.data());
    return back;
  });
  EXPECT_EQ(qa, qb) << "quantize/dequantize";
  // quantize_floor (with a NaN and values past both ends) and add_q (element-wise and with a
  // repeated scalar a, on a multiplier pair that rounds and clamps).
  auto xq = xf;
  xq[3] = std::nanf("");
  xq[4] = 1e9f;
  xq[5] = -1e9f;
  auto [fqa, fqb] = both_builds([&] {
    CodeBuffer q(ActType::kU16, xq.size());
    quantize_floor(xq.data(), static_cast<int64_t>(xq.size()), p, ActType::kU16, q.data());
    return q.all();
  });
  EXPECT_EQ(fqa, fqb) << "quantize_floor";
  CodeBuffer qa16(ActType::kU16, 301), qb16(ActType::kU16, 301);
  for (size_t i = 0; i < qa16.size(); ++i) {
    qa16.set(i, static_cast<int32_t>(rng() & 0xffff));
    qb16.set(i, static_cast<int32_t>(rng() & 0xffff));
  }
  const HtpAdd h = htp_add_params({0.003f, 31000, 0, 65535}, {0.0021f, 33000, 0, 65535}, {0.004f, 32768, 0, 65535});
  auto [aa, ab] = both_builds([&] {
    CodeBuffer y(ActType::kU16, 2 * qa16.size());
    add_q(qa16.data(), ActType::kU16, 1, qb16.data(), ActType::kU16, 1, 301, h, ActType::kU16, y.data());
    add_q(qa16.data(), ActType::kU16, 0, qb16.data(), ActType::kU16, 1, 301, h, ActType::kU16,
          static_cast<uint16_t*>(y.data()) + 301);
    return y.all();
  });
  EXPECT_EQ(aa, ab) << "add_q";
  // rope_q: head sizes with and without a tail past whole vectors, codes at the extremes (clamps)
  // and random ones.
  for (int64_t hd : {64, 48, 6})
    for (bool extreme : {false, true}) {
      const int64_t seq = 3;
      CodeBuffer xq(ActType::kU16, static_cast<size_t>(seq * hd)), cq(ActType::kU16, xq.size()), sq(ActType::kU16, xq.size());
      for (size_t i = 0; i < xq.size(); ++i) {
        xq.set(i, extreme ? ((i % 3) ? 65535 : 0) : static_cast<int32_t>(rng() & 0xffff));
        cq.set(i, static_cast<int32_t>(rng() & 0xffff));
        sq.set(i, extreme ? 65535 : static_cast<int32_t>(rng() & 0xffff));
      }
      const QParams ex{0.0004f, 31000, 0, 65535}, ec{1.0f / 32767.0f, 32768, 0, 65535}, ey{0.0003f, 32000, 0, 65535};
      const HtpRope hp = htp_rope_params(ex, ec, ec, ey);
      auto [ya, yb] = both_builds([&] {
        CodeBuffer yq(ActType::kU16, xq.size());
        rope_q(static_cast<const uint16_t*>(xq.data()), static_cast<const uint16_t*>(cq.data()),
               static_cast<const uint16_t*>(sq.data()), seq, hd, hp, static_cast<uint16_t*>(yq.data()));
        return yq.all();
      });
      EXPECT_EQ(ya, yb) << "rope_q head " << hd << (extreme ? " extreme" : "");
    }
  // silu_q: every code, on an encoding that clamps at both ends and one that does not.
  for (const auto& [exs, eys] : {std::pair<QParams, QParams>{{0.0003f, 30000, 0, 65535}, {0.0001f, 2000, 0, 65535}},
                                 std::pair<QParams, QParams>{{0.002f, 32768, 0, 65535}, {0.0009f, 3000, 0, 65535}}}) {
    std::vector<uint16_t> all(65536 + 7);
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i * 40503u);
    auto [la, lb] = both_builds([&] {
      std::vector<uint16_t> out(all.size());
      silu_q(all.data(), static_cast<int64_t>(all.size()), exs, eys, out.data());
      return out;
    });
    EXPECT_EQ(la, lb) << "silu_q scale " << exs.scale;
  }
  // softmax_q: rows with tails, one equal maximum per row or several, a narrow and a wide scale.
  for (float scale : {0.002f, 0.0001f})
    for (int64_t n : {1, 16, 37, 530}) {
      CodeBuffer codes(ActType::kU16, static_cast<size_t>(3 * n));
      for (size_t i = 0; i < codes.size(); ++i) codes.set(i, static_cast<int32_t>(30000 + rng() % 8000));
      if (n > 2) codes.set(1, codes.at(0));
      auto [sa, sb] = both_builds([&] {
        CodeBuffer y(ActType::kU16, codes.size());
        softmax_q(static_cast<const uint16_t*>(codes.data()), 3, n, scale, static_cast<uint16_t*>(y.data()));
        return y.all();
      });
      EXPECT_EQ(sa, sb) << "softmax_q n " << n << " scale " << scale;
    }
  const auto c = testing::random_floats(rng, 3 * 64, -1, 1), s = testing::random_floats(rng, 3 * 64, -1, 1);
  auto [ra, rb] = both_builds([&] {
    std::vector<float> y(xf.begin(), xf.begin() + 2 * 3 * 64);
    rope(y.data(), 2, 3, 64, c.data(), s.data(), y.data());
    add(y.data(), xf.data(), 300, y.data());
    mul(y.data(), xf.data() + 1, 301, y.data());
    auto r = xf;
    round_to_f16(r.data(), static_cast<int64_t>(r.size()));
    y.insert(y.end(), r.begin(), r.end());
    return y;
  });
  EXPECT_EQ(ra, rb) << "rope/add/mul/round_to_f16";
  auto [fa, fb] = both_builds([&] {
    auto y = xf;
    std::vector<float> w(64, 1.25f);
    rms_norm(y.data(), 8, 64, w.data(), 1e-5f, y.data());
    softmax(y.data(), 4, 100);
    silu(y.data(), static_cast<int64_t>(y.size()));
    return y;
  });
  EXPECT_EQ(fa, fb) << "rms_norm/softmax/silu";
  // widen_f16 (16-bit checkpoints' weights): every half value, its exact float (NaNs stay NaN;
  // the hardware conversion quiets a signalling one), an odd count for the tail.
  {
    std::vector<uint16_t> all(65537);
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
    auto [wa, wb] = both_builds([&] {
      std::vector<float> y(all.size());
      widen_f16(all.data(), static_cast<int64_t>(all.size()), y.data());
      return y;
    });
    for (size_t i = 0; i < all.size(); ++i) {
      const float want = f16_to_f32(all[i]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(wa[i]) && std::isnan(wb[i])) << "widen_f16 " << i;
      } else {
        ASSERT_EQ(std::memcmp(&wa[i], &want, sizeof(float)), 0) << "scalar widen_f16 " << i;
        ASSERT_EQ(std::memcmp(&wb[i], &want, sizeof(float)), 0) << "widen_f16 " << i;
      }
    }
  }
  // shrink_errors (the 4-bit scale search): one candidate per lane must give the scalar build's
  // sums bit for bit, for 11 candidates (lanes to spare or a second pass), clamped values, ties at
  // .5 and a NaN (its term is NaN in both builds).
  {
    std::vector<float> w(37);
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.37f * static_cast<float>(static_cast<int>(i % 11) - 5) + 0.001f * i;
    w[3] = 2.5f, w[4] = -3.5f, w[5] = 40.0f;
    std::vector<float> scales(11);
    for (int k = 0; k < 11; ++k) scales[static_cast<size_t>(k)] = 0.25f * (1.0f - 0.03f * static_cast<float>(k));
    for (bool with_nan : {false, true}) {
      if (with_nan) w[7] = std::numeric_limits<float>::quiet_NaN();
      auto [ea, eb] = both_builds([&] {
        std::vector<float> e(scales.size());
        shrink_errors(w.data(), static_cast<int64_t>(w.size()), scales.data(), 11, -8.0f, 7.0f, e.data());
        return e;
      });
      for (size_t k = 0; k < ea.size(); ++k) {
        if (with_nan) {
          EXPECT_TRUE(std::isnan(ea[k]) && std::isnan(eb[k])) << "shrink_errors nan " << k;
        } else {
          EXPECT_EQ(std::memcmp(&ea[k], &eb[k], sizeof(float)), 0) << "shrink_errors " << k << ": " << ea[k] << " vs " << eb[k];
        }
      }
    }
  }
  // linear_f32 (the float reference's linear): row and channel counts off the 4 x 2 tile, input
  // widths with and without a tail past the groups of 8, with and without bias.
  for (int64_t rows : {1, 3, 6})
    for (int64_t out : {1, 5, 18})
      for (int64_t in : {7, 8, 29, 64}) {
        const auto x = testing::random_floats(rng, static_cast<size_t>(rows * in), -2, 2);
        const auto w = testing::random_floats(rng, static_cast<size_t>(out * in), -1, 1);
        const auto bias = testing::random_floats(rng, static_cast<size_t>(out), -1, 1);
        auto [la, lb] = both_builds([&] {
          std::vector<float> y(static_cast<size_t>(2 * rows * out));
          linear_f32(x.data(), rows, w.data(), out, in, bias.data(), y.data());
          linear_f32(x.data(), rows, w.data(), out, in, nullptr, y.data() + rows * out);
          return y;
        });
        EXPECT_EQ(la, lb) << "linear_f32 rows " << rows << " out " << out << " in " << in;
      }
}

TEST(SimdTargets, EveryCompiledTargetMatchesTheScalarBuild) {
  const auto targets = testing::runnable_targets();
  int tested = 0;
  for (int64_t t : targets) {
    ForcedTarget forced(t | HWY_EMU128);
    std::printf("kernels on %s\n", std::string(simd_target_name()).c_str());
    SCOPED_TRACE(std::string(simd_target_name()));
    run_everything(static_cast<uint32_t>(t % 1000) + 1);
    ++tested;
  }
  EXPECT_GE(tested, 1);
  testing::expect_named_targets_tested(targets);
}

}  // namespace
}  // namespace genai::kernels
