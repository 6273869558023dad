// kernels::linear_q against the QDQ reference (quant::qdq_linear), bit for bit, in the scalar
// and the vectorised build; packing round trips; linear_f16 against the QDQ fp16 formula.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "core/half.h"
#include "kernels/packed_layout.h"
#include "kernels/packed_linear.h"
#include "kernel_test_util.h"
#include "quant/qdq_executor.h"

namespace genai::kernels {
namespace {

using quant::Encoding;
using quant::QDType;
using quant::WeightEncoding;
using testing::CodeBuffer;
using testing::ScopedMode;

struct Packed {
  std::vector<uint8_t> data;
  std::vector<int32_t> sums;
  std::vector<uint8_t> meta;  // block_meta, for block-wise weights
  PackedLinear view;
};

Packed pack(const WeightEncoding& w) {
  Packed p;
  const int bits = quant::qdtype_bits(w.dtype);
  p.data.resize(packed_linear_bytes(w.rows, w.cols, bits));
  pack_linear_weights(w.stored_codes.data(), w.rows, w.cols, bits, p.data.data());
  p.sums = linear_block_sums(w.stored_codes.data(), w.rows, w.cols, w.block_size);
  p.view.rows = w.rows;
  p.view.cols = w.cols;
  p.view.bits = bits;
  p.view.block_size = w.block_size;
  p.view.data = p.data.data();
  p.view.scales = w.scales.data();
  p.view.block_sums = p.sums.data();
  if (w.block_size > 0) {
    p.meta.resize(block_meta_bytes(w.rows, w.cols, w.block_size));
    pack_block_meta(w.scales.data(), p.sums.data(), w.rows, w.cols, w.block_size, p.meta.data());
  }
  return p;
}

// Output encoding covering `frac` of the float outputs' range (frac < 1 forces some clamping).
Encoding output_encoding(QDType t, const std::vector<int32_t>& xq, const Encoding& ex, const WeightEncoding& w,
                         const float* bias, int64_t rows, float frac) {
  double lo = 0, hi = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < w.rows; ++c) {
      double s = bias ? bias[c] : 0.0;
      for (int64_t k = 0; k < w.cols; ++k)
        s += (xq[static_cast<size_t>(r * w.cols + k)] - ex.zero_point) * static_cast<double>(ex.scale) *
             w.stored_codes[static_cast<size_t>(c * w.cols + k)] * w.scale(c, k);
      lo = std::min(lo, s);
      hi = std::max(hi, s);
    }
  return quant::asymmetric_encoding(t, static_cast<float>(lo * frac), static_cast<float>(hi * frac));
}

// Runs the QDQ reference and linear_q in both modes on the codes xq; expects equal codes.
void expect_linear_matches(const std::vector<int32_t>& xq, const Encoding& ex, const WeightEncoding& w,
                           const std::vector<float>& bias, int64_t rows, const Encoding& ey, const std::string& what) {
  const float* b = bias.empty() ? nullptr : bias.data();
  std::vector<float> xf(xq.size());
  for (size_t i = 0; i < xq.size(); ++i) xf[i] = quant::dequantize_value(xq[i], ex);
  std::vector<float> yf(static_cast<size_t>(rows * w.rows));
  quant::qdq_linear(xf.data(), rows, ex, w, w.stored_codes.data(), b, ey, yf.data());
  std::vector<int32_t> expected(yf.size());
  for (size_t i = 0; i < yf.size(); ++i) expected[i] = static_cast<int32_t>(quant::quantize_value(yf[i], ey));

  const ActType xt = testing::act_type(ex), yt = testing::act_type(ey);
  CodeBuffer xbuf(xt, xq.size());
  for (size_t i = 0; i < xq.size(); ++i) xbuf.set(i, xq[i]);
  Packed p = pack(w);
  // Scalar; vectorised reading scales / block sums; vectorised reading block_meta; then block_meta
  // alone (what our lowering writes for block-wise weights), vectorised and scalar.
  const char* const names[] = {" scalar", " simd", " simd+meta", " simd, meta only", " scalar, meta only"};
  for (int variant = 0; variant < 5; ++variant) {
    const KernelMode mode = variant == 0 || variant == 4 ? KernelMode::kScalar : KernelMode::kSimd;
    if (variant >= 2 && p.meta.empty()) break;
    ScopedMode scoped(mode);
    PackedLinear view = p.view;
    if (variant >= 2) view.block_meta = p.meta.data();
    if (variant >= 3) view.scales = nullptr, view.block_sums = nullptr;
    CodeBuffer y(yt, expected.size());
    std::fill(y.bytes.begin(), y.bytes.end(), 0xAB);
    linear_q(xbuf.data(), xt, rows, testing::qparams(ex), view, b, testing::qparams(ey), yt, y.data());
    const auto got = y.all();
    int64_t bad = 0, first = -1;
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != expected[i] && bad++ == 0) first = static_cast<int64_t>(i);
    EXPECT_EQ(bad, 0) << what << names[variant] << ": first mismatch at " << first
                      << " got " << (first >= 0 ? got[static_cast<size_t>(first)] : 0) << " expected "
                      << (first >= 0 ? expected[static_cast<size_t>(first)] : 0);
  }
}

struct LinearCase {
  QDType act, wt;
  int64_t block, rows, out, in;
  bool bias;
};

std::string name(const LinearCase& c) {
  return fmt::format("{}x{} block {} rows {} [{}x{}]{}", quant::qdtype_name(c.act), quant::qdtype_name(c.wt), c.block,
                     c.rows, c.out, c.in, c.bias ? " +bias" : "");
}

void run_random_case(const LinearCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const auto xs = testing::random_floats(rng, static_cast<size_t>(c.rows * c.in), -2.0f, 3.0f);
  const Encoding ex = quant::asymmetric_encoding(c.act, -2.0f, 3.0f);
  std::vector<int32_t> xq(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) xq[i] = static_cast<int32_t>(quant::quantize_value(xs[i], ex));
  const auto wf = testing::random_floats(rng, static_cast<size_t>(c.out * c.in), -0.5f, 0.5f);
  WeightEncoding w = quant::quantize_weight("w", wf.data(), c.out, c.in, c.wt, c.block);
  w.stored_codes.resize(static_cast<size_t>(c.out * c.in));  // the rounded codes, read below as stored
  quant::weight_codes(w, wf.data(), 0, c.out, w.stored_codes.data());
  std::vector<float> bias;
  if (c.bias) bias = testing::random_floats(rng, static_cast<size_t>(c.out), -1.0f, 1.0f);
  const Encoding ey = output_encoding(c.act, xq, ex, w, c.bias ? bias.data() : nullptr, c.rows, 0.9f);
  expect_linear_matches(xq, ex, w, bias, c.rows, ey, name(c));
}

TEST(LinearQ, MatchesQdqReference16BitActivations) {
  uint32_t seed = 1;
  for (QDType wt : {QDType::kI8, QDType::kI4})
    for (int64_t block : {0, 32, 64, 128})
      for (int64_t rows : {1, 3, 4, 9})
        run_random_case({QDType::kU16, wt, block, rows, 37, 256, (rows % 2) == 1}, seed++);
}

TEST(LinearQ, MatchesQdqReference8BitActivations) {
  uint32_t seed = 100;
  for (QDType wt : {QDType::kI8, QDType::kI4})
    for (int64_t block : {0, 32, 64})
      for (int64_t rows : {1, 2, 8}) run_random_case({QDType::kU8, wt, block, rows, 20, 192, rows != 2}, seed++);
}

TEST(LinearQ, OddShapesAndTails) {
  uint32_t seed = 200;
  // Columns not a multiple of 4 (per channel) or of the vector width, channels not a multiple of 16.
  for (int64_t in : {1, 2, 3, 5, 30, 66, 131, 578})
    for (QDType wt : {QDType::kI8, QDType::kI4}) run_random_case({QDType::kU16, wt, 0, 5, 19, in, true}, seed++);
  for (int64_t out : {1, 15, 16, 17, 33, 65}) run_random_case({QDType::kU16, QDType::kI4, 32, 3, out, 96, true}, seed++);
  // Odd block sizes go through the scalar build even in simd mode; still exact.
  run_random_case({QDType::kU16, QDType::kI4, 6, 2, 18, 36, false}, seed++);
  run_random_case({QDType::kU16, QDType::kI8, 16, 13, 40, 64, true}, seed++);
  // 16-bit weights (16a16w): per channel vectorised, blocks scalar.
  run_random_case({QDType::kU16, QDType::kI16, 0, 3, 21, 70, true}, seed++);
  run_random_case({QDType::kU16, QDType::kI16, 0, 6, 40, 600, false}, seed++);
  run_random_case({QDType::kU8, QDType::kI16, 0, 1, 33, 64, true}, seed++);
  run_random_case({QDType::kU16, QDType::kI16, 32, 2, 17, 64, true}, seed++);
}

TEST(LinearQ, PrefillRowCounts) {
  uint32_t seed = 300;
  for (int64_t rows : {16, 32, 35})
    for (int64_t block : {0, 32}) run_random_case({QDType::kU16, QDType::kI8, block, rows, 48, 128, true}, seed++);
  run_random_case({QDType::kU16, QDType::kI4, 64, 33, 40, 192, false}, seed++);
}

// Extreme codes and weights: every activation code 0 or 65535 with zero points at the edges and
// the most negative weights, so the int32 lanes of the vectorised build would overflow if they
// were not flushed to int64 in time.
TEST(LinearQ, ExtremeCodesStayExact) {
  std::mt19937 rng(7);
  for (int32_t zp : {0, 1, 32768, 65534, 65535})
    for (QDType wt : {QDType::kI8, QDType::kI4, QDType::kI16})
      for (int64_t block : {0, 128})
        for (int64_t rows : {2, 9}) {  // the decode tile (split accumulators) and the prefill one
        if (wt == QDType::kI16 && block) continue;
        const int64_t out = 18, in = block ? 1024 : 8192 + 4;
        Encoding ex;
        ex.dtype = QDType::kU16;
        ex.scale = 0.001f;
        ex.zero_point = zp;
        WeightEncoding w;
        w.dtype = wt;
        w.rows = out;
        w.cols = in;
        w.block_size = block;
        w.scales.resize(static_cast<size_t>(out * w.blocks()));
        for (auto& s : w.scales) s = std::uniform_real_distribution<float>(0.001f, 0.01f)(rng);
        const int16_t wmin = wt == QDType::kI16 ? -32768 : wt == QDType::kI8 ? -128 : -8;
        const int16_t wmax = wt == QDType::kI16 ? 32767 : wt == QDType::kI8 ? 127 : 7;
        w.stored_codes.resize(static_cast<size_t>(out * in));
        for (int64_t c = 0; c < out; ++c)
          for (int64_t k = 0; k < in; ++k)
            w.stored_codes[static_cast<size_t>(c * in + k)] =
                c % 3 == 0 ? wmin : (c % 3 == 1 ? ((k % 2) ? wmin : wmax) : static_cast<int16_t>(rng() % 16 - 8));
        std::vector<int32_t> xq(static_cast<size_t>(rows * in));
        for (int64_t k = 0; k < rows * in; ++k) xq[static_cast<size_t>(k)] = k < in ? 0 : ((k % 5) ? 65535 : 0);
        const Encoding ey = output_encoding(QDType::kU16, xq, ex, w, nullptr, rows, 1.0f);
        expect_linear_matches(xq, ex, w, {}, rows, ey,
                              fmt::format("extreme zp {} {} block {} rows {}", zp, quant::qdtype_name(wt), block, rows));
      }
}

// HTP rule 4 on worked numbers, in both builds: with 16-bit codes and per-channel 8-bit weights
// the accumulator is floored to a multiple of 256 (acc 310 -> 256); with 8-bit codes, or with
// block-wise weights, it stays exact.
TEST(LinearQ, SixteenBitCodesTakeTheHtpAccumulator) {
  const int64_t cols = 64;
  std::vector<int16_t> q(static_cast<size_t>(2 * cols), 0);
  for (int64_t k = 0; k < 4; ++k) q[static_cast<size_t>(k)] = q[static_cast<size_t>(cols + k)] = 1;
  std::vector<uint8_t> packed(packed_linear_bytes(2, cols, 8));
  pack_linear_weights(q.data(), 2, cols, 8, packed.data());
  const std::vector<float> scales(2, 1.0f);
  for (int64_t block : {int64_t{0}, int64_t{32}}) {
    const auto sums = linear_block_sums(q.data(), 2, cols, block);
    const std::vector<float> block_scales(sums.size(), 1.0f);
    const PackedLinear w{2, cols, 8, block, packed.data(), block ? block_scales.data() : scales.data(), sums.data()};
    for (KernelMode mode : {KernelMode::kScalar, KernelMode::kSimd}) {
      ScopedMode m(mode);
      std::vector<uint16_t> x16(static_cast<size_t>(cols), 32768), y16(2);
      x16[0] = x16[1] = x16[2] = 32768 + 100;
      x16[3] = 32768 + 10;  // sum (q - 32768) w = 310
      const QParams ex16{1.0f, 32768, 0, 65535}, ey{1.0f, 32768, 0, 65535};
      linear_q(x16.data(), ActType::kU16, 1, ex16, w, nullptr, ey, ActType::kU16, y16.data());
      const int want = block ? 32768 + 310 : 32768 + 256;
      EXPECT_EQ(y16[0], want) << "block " << block;
      EXPECT_EQ(y16[1], want) << "block " << block;
      std::vector<uint8_t> x8(static_cast<size_t>(cols), 100);
      x8[0] = x8[1] = x8[2] = 200;  // sum (q - 100) w = 300, exact
      const QParams ex8{1.0f, 100, 0, 255};
      linear_q(x8.data(), ActType::kU8, 1, ex8, w, nullptr, ey, ActType::kU16, y16.data());
      EXPECT_EQ(y16[0], 32768 + 300) << "block " << block;
    }
  }
}

TEST(PackLinear, RoundTripsEveryWidth) {
  std::mt19937 rng(3);
  for (int bits : {4, 8, 16})
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 1}, {16, 4}, {17, 5}, {33, 130}}) {
      const int lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
      std::vector<int16_t> q(static_cast<size_t>(rows * cols));
      for (auto& v : q) v = static_cast<int16_t>(std::uniform_int_distribution<int>(lo, hi)(rng));
      q[0] = static_cast<int16_t>(lo);
      q.back() = static_cast<int16_t>(hi);
      std::vector<uint8_t> packed(packed_linear_bytes(rows, cols, bits));
      pack_linear_weights(q.data(), rows, cols, bits, packed.data());
      std::vector<int16_t> back(q.size());
      unpack_linear_weights(packed.data(), rows, cols, bits, back.data());
      EXPECT_EQ(back, q) << bits << " bits " << rows << "x" << cols;
      // Padding channels and columns read as 0 (the kernels sum over them): the padded shape has
      // the same layout.
      const int64_t pr = layout::padded_rows(rows), pc = layout::padded_cols(cols);
      std::vector<int16_t> padded(static_cast<size_t>(pr * pc));
      unpack_linear_weights(packed.data(), pr, pc, bits, padded.data());
      for (int64_t r = 0; r < pr; ++r)
        for (int64_t c = 0; c < pc; ++c)
          ASSERT_EQ(padded[static_cast<size_t>(r * pc + c)], r < rows && c < cols ? q[static_cast<size_t>(r * cols + c)] : 0)
              << bits << " bits " << rows << "x" << cols << " at " << r << "," << c;
      std::vector<uint8_t> again(packed.size());
      pack_linear_weights(q.data(), rows, cols, bits, again.data());
      EXPECT_EQ(again, packed);
    }
}

TEST(PackLinear, RejectsValuesOutsideTheWidth) {
  const std::vector<int16_t> q{8, 0, 0, 0};
  std::vector<uint8_t> packed(packed_linear_bytes(1, 4, 4));
  EXPECT_THROW(pack_linear_weights(q.data(), 1, 4, 4, packed.data()), Failure);
  EXPECT_THROW(packed_linear_bytes(1, 4, 3), Failure);
}

TEST(PackLinear, BlockMetaGroupsScalesAndSums) {
  // 18 channels, 2 blocks: group 0 holds channels 0..15, group 1 channels 16, 17 and zeros.
  std::vector<float> scales(36);
  std::vector<int32_t> sums(36);
  for (int i = 0; i < 36; ++i) {
    scales[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i + 1);
    sums[static_cast<size_t>(i)] = -i;
  }
  std::vector<uint8_t> meta(block_meta_bytes(18, 64, 32));
  ASSERT_EQ(meta.size(), 2u * 2u * 128u);
  pack_block_meta(scales.data(), sums.data(), 18, 64, 32, meta.data());
  auto scale_at = [&](int64_t g, int64_t b, int64_t i) {
    float v;
    std::memcpy(&v, meta.data() + (g * 2 + b) * 128 + i * 4, 4);
    return v;
  };
  auto sum_at = [&](int64_t g, int64_t b, int64_t i) {
    int32_t v;
    std::memcpy(&v, meta.data() + (g * 2 + b) * 128 + 64 + i * 4, 4);
    return v;
  };
  EXPECT_EQ(scale_at(0, 1, 3), scales[3 * 2 + 1]);
  EXPECT_EQ(sum_at(0, 1, 3), sums[3 * 2 + 1]);
  EXPECT_EQ(scale_at(1, 0, 1), scales[17 * 2]);
  EXPECT_EQ(scale_at(1, 0, 2), 0.0f);
  EXPECT_THROW(block_meta_bytes(18, 64, 0), Failure);
}

TEST(PackLinear, BlockSums) {
  const std::vector<int16_t> q{1, 2, 3, 4, -1, -2, -3, 7};
  EXPECT_EQ(linear_block_sums(q.data(), 2, 4, 2), (std::vector<int32_t>{3, 7, -3, 4}));
  EXPECT_EQ(linear_block_sums(q.data(), 2, 4, 0), (std::vector<int32_t>{10, 1}));
}

// linear_f16: the scalar build is the QDQ fp16 linear (float products in column order, plus the
// float16-rounded bias); the vectorised build sums in another order, so it agrees to rounding.
TEST(LinearF16, ScalarIsTheQdqFormulaAndSimdAgrees) {
  std::mt19937 rng(11);
  for (auto [rows, out, in] : {std::tuple<int64_t, int64_t, int64_t>{1, 7, 5}, {3, 33, 64}, {5, 20, 131}}) {
    const auto x = testing::random_floats(rng, static_cast<size_t>(rows * in), -1.0f, 1.0f);
    const auto wf = testing::random_floats(rng, static_cast<size_t>(out * in), -1.0f, 1.0f);
    const auto bias = testing::random_floats(rng, static_cast<size_t>(out), -1.0f, 1.0f);
    std::vector<uint16_t> w(wf.size());
    for (size_t i = 0; i < w.size(); ++i) w[i] = f32_to_f16(wf[i]);
    std::vector<float> expected(static_cast<size_t>(rows * out));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < out; ++c) {
        float s = 0.0f;
        for (int64_t k = 0; k < in; ++k) s += x[static_cast<size_t>(r * in + k)] * f16_to_f32(w[static_cast<size_t>(c * in + k)]);
        expected[static_cast<size_t>(r * out + c)] = s + quant::round_to_f16(bias[static_cast<size_t>(c)]);
      }
    std::vector<float> y(expected.size());
    {
      ScopedMode scoped(KernelMode::kScalar);
      linear_f16(x.data(), rows, w.data(), out, in, bias.data(), y.data());
      EXPECT_EQ(y, expected);
    }
    ScopedMode scoped(KernelMode::kSimd);
    linear_f16(x.data(), rows, w.data(), out, in, bias.data(), y.data());
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-5f * static_cast<float>(in)) << i;
  }
}

}  // namespace
}  // namespace genai::kernels
