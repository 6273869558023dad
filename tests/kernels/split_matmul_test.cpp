// kernels::split_matmul_q (b = concat of two parts read in place) against kernels::matmul_q on
// the materialised concat: the scalar build and the vectorised build on every compiled Highway
// target (forced one at a time, as targets_test.cpp does), u8/u16 operands, the parts along N
// (keys) and along K (values), broadcast batch entries (GQA). Exact sums, so equal codes.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include <hwy/targets.h>

#include "kernel_test_util.h"
#include "kernels/split_matmul.h"

namespace genai::kernels {
namespace {

using testing::CodeBuffer;
using testing::ForcedTarget;
using testing::ScopedMode;

struct SplitCase {
  bool along_n;
  ActType at, bt, yt;
  int64_t K, N, split;  // split: columns (along N) or rows (along K) in part 0
};

void check(const SplitCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t K = c.K, N = c.N, b_entries = 2, a_entries = 6;  // 3 a rows share each b (GQA)
  auto fill = [&](CodeBuffer& buf) {
    const int32_t hi = buf.type == ActType::kU8 ? 255 : 65535;
    for (size_t i = 0; i < buf.size(); ++i) buf.set(i, std::uniform_int_distribution<int32_t>(0, hi)(rng));
  };
  const int64_t n0 = c.split, n1 = (c.along_n ? N : K) - c.split;
  // The two parts, each [b_entries, rows, cols] row-major.
  CodeBuffer a(c.at, static_cast<size_t>(a_entries * K));
  CodeBuffer p0(c.bt, static_cast<size_t>(b_entries * (c.along_n ? K * n0 : n0 * N)));
  CodeBuffer p1(c.bt, static_cast<size_t>(b_entries * (c.along_n ? K * n1 : n1 * N)));
  fill(a);
  fill(p0);
  fill(p1);
  // The concat they stand for, [b_entries, K, N].
  CodeBuffer full(c.bt, static_cast<size_t>(b_entries * K * N));
  for (int64_t e = 0; e < b_entries; ++e)
    for (int64_t p = 0; p < K; ++p)
      for (int64_t j = 0; j < N; ++j) {
        int32_t v;
        if (c.along_n) v = j < n0 ? p0.at(static_cast<size_t>(e * K * n0 + p * n0 + j)) : p1.at(static_cast<size_t>(e * K * n1 + p * n1 + j - n0));
        else v = p < n0 ? p0.at(static_cast<size_t>(e * n0 * N + p * N + j)) : p1.at(static_cast<size_t>(e * n1 * N + (p - n0) * N + j));
        full.set(static_cast<size_t>(e * K * N + p * N + j), v);
      }
  std::vector<MatmulBatch> batches;
  for (int64_t i = 0; i < a_entries; ++i) batches.push_back({i * K, (i / 3) * K * N, i * N});
  std::vector<MatmulSegment> segs;
  if (c.along_n) {
    segs.push_back({p0.data(), K * n0, n0, 0, K, 0, n0});
    segs.push_back({p1.data(), K * n1, n1, 0, K, n0, n1});
  } else {
    segs.push_back({p0.data(), n0 * N, N, 0, n0, 0, N});
    segs.push_back({p1.data(), n1 * N, N, n0, n1, 0, N});
  }
  const QParams ea{0.02f, c.at == ActType::kU8 ? 120 : 30000, 0, c.at == ActType::kU8 ? 255 : 65535};
  const QParams eb{0.01f, c.bt == ActType::kU8 ? 100 : 33000, 0, c.bt == ActType::kU8 ? 255 : 65535};
  const int32_t ymax = c.yt == ActType::kU8 ? 255 : 65535;
  const QParams ey{static_cast<float>(K) * 0.3f, ymax / 2, 0, ymax};

  CodeBuffer want(c.yt, static_cast<size_t>(a_entries * N));
  {
    ScopedMode scalar(KernelMode::kScalar);
    matmul_q(a.data(), c.at, ea, full.data(), c.bt, eb, 1, K, N, batches, ey, c.yt, want.data());
  }
  for (KernelMode mode : {KernelMode::kScalar, KernelMode::kSimd}) {
    ScopedMode m(mode);
    CodeBuffer got(c.yt, static_cast<size_t>(a_entries * N));
    std::vector<double> work(batches.size() * static_cast<size_t>(split_matmul_work(K, N)));
    split_matmul_q(a.data(), c.at, ea, segs, c.bt, eb, K, N, batches, ey, c.yt, got.data(), work.data());
    EXPECT_EQ(got.all(), want.all()) << (c.along_n ? "along N" : "along K") << " K " << K << " N " << N << " split "
                                     << c.split << (mode == KernelMode::kScalar ? " scalar" : " simd");
  }
}

void check_all(uint32_t seed) {
  for (ActType t : {ActType::kU8, ActType::kU16}) {
    check({true, ActType::kU16, t, ActType::kU16, 64, 37, 36}, seed++);   // keys: cache 36 + 1 new column
    check({true, ActType::kU16, t, ActType::kU16, 64, 70, 5}, seed++);    // blocks of 32 and a tail
    check({false, ActType::kU16, t, ActType::kU16, 37, 64, 36}, seed++);  // values: cache 36 rows + 1
    check({false, ActType::kU8, t, ActType::kU8, 80, 33, 1}, seed++);
  }
  // 8- and 16-bit caches (the integer forms): a decode-sized cache, K past one exact int32 run, N
  // past one work span.
  for (ActType t : {ActType::kU8, ActType::kU16}) {
    check({false, ActType::kU16, t, ActType::kU16, 600, 64, 599}, seed++);
    check({true, ActType::kU16, t, ActType::kU16, 64, 300, 299}, seed++);
  }
}

TEST(SplitMatmul, EqualsMatmulOnTheConcatOnEveryTarget) {
  const auto targets = testing::runnable_targets();
  int tested = 0;
  for (int64_t t : targets) {
    ForcedTarget forced(t | HWY_EMU128);
    SCOPED_TRACE(hwy::TargetName(t));
    check_all(static_cast<uint32_t>(t % 1000) + 1);
    ++tested;
  }
  EXPECT_GE(tested, 1);
  testing::expect_named_targets_tested(targets);
}

}  // namespace
}  // namespace genai::kernels
