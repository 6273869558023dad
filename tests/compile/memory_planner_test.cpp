#include "compile/memory_planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "core/random.h"

namespace genai::compile {
namespace {

uint64_t aligned(uint64_t size, uint64_t alignment) { return (size + alignment - 1) / alignment * alignment; }

// Brute-force lower bound: the largest total size alive at one op index.
uint64_t brute_lower_bound(const std::vector<BufferRequest>& requests) {
  int64_t lo = 0, hi = 0;
  for (const auto& r : requests) {
    lo = std::min(lo, r.first);
    hi = std::max(hi, r.last);
  }
  uint64_t best = 0;
  for (int64_t op = lo; op <= hi; ++op) {
    uint64_t live = 0;
    for (const auto& r : requests) {
      if (r.first <= op && op <= r.last) live += r.size;
    }
    best = std::max(best, live);
  }
  return best;
}

void expect_valid(const std::vector<BufferRequest>& requests, const MemoryPlan& plan, uint64_t alignment) {
  ASSERT_EQ(plan.offsets.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % alignment, 0u) << "buffer " << i;
    EXPECT_LE(plan.offsets[i] + requests[i].size, plan.total_bytes) << "buffer " << i;
    for (size_t j = i + 1; j < requests.size(); ++j) {
      const auto& a = requests[i];
      const auto& b = requests[j];
      if (a.size == 0 || b.size == 0) continue;
      if (a.first > b.last || b.first > a.last) continue;  // never alive together
      const bool disjoint = plan.offsets[i] + a.size <= plan.offsets[j] || plan.offsets[j] + b.size <= plan.offsets[i];
      EXPECT_TRUE(disjoint) << "buffers " << i << " and " << j << " overlap while both alive";
    }
  }
  EXPECT_EQ(plan.lower_bound_bytes, brute_lower_bound(requests));
  EXPECT_GE(plan.total_bytes, plan.lower_bound_bytes);
}

TEST(MemoryPlanner, EmptyRequestPlansNothing) {
  const MemoryPlan plan = plan_memory({});
  EXPECT_EQ(plan.total_bytes, 0u);
  EXPECT_EQ(plan.lower_bound_bytes, 0u);
  EXPECT_TRUE(plan.offsets.empty());
}

TEST(MemoryPlanner, ChainReusesMemory) {
  // a -> b -> c -> d, each read only by the next op: at most two alive at once.
  std::vector<BufferRequest> req{{1024, 0, 1}, {1024, 1, 2}, {1024, 2, 3}, {1024, 3, 4}};
  const MemoryPlan plan = plan_memory(req);
  expect_valid(req, plan, 64);
  EXPECT_EQ(plan.lower_bound_bytes, 2048u);
  EXPECT_EQ(plan.total_bytes, 2048u);
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
}

TEST(MemoryPlanner, AllAliveNeedTheSum) {
  std::vector<BufferRequest> req{{100, -1, 5}, {200, 0, 5}, {300, 2, 3}};
  const MemoryPlan plan = plan_memory(req, 64);
  expect_valid(req, plan, 64);
  EXPECT_EQ(plan.lower_bound_bytes, 600u);
  EXPECT_EQ(plan.total_bytes, aligned(100, 64) + aligned(200, 64) + aligned(300, 64));
}

TEST(MemoryPlanner, FillsHolesLeftByShortLivedBuffers) {
  // A big buffer early, then two half-size buffers that both fit in its place later.
  std::vector<BufferRequest> req{{4096, 0, 1}, {2048, 2, 3}, {2048, 2, 3}, {1024, 0, 3}};
  const MemoryPlan plan = plan_memory(req);
  expect_valid(req, plan, 64);
  EXPECT_EQ(plan.total_bytes, 5120u);
  EXPECT_EQ(plan.total_bytes, plan.lower_bound_bytes);
}

TEST(MemoryPlanner, ZeroSizeBuffersOccupyNothing) {
  std::vector<BufferRequest> req{{0, 0, 9}, {128, 0, 9}};
  const MemoryPlan plan = plan_memory(req);
  expect_valid(req, plan, 64);
  EXPECT_EQ(plan.total_bytes, 128u);
}

TEST(MemoryPlanner, InvalidLifetimeIsRejected) {
  EXPECT_THROW(plan_memory({{8, 3, 2}}), Failure);
  EXPECT_THROW(plan_memory({{8, -2, 2}}), Failure);
  EXPECT_THROW(plan_memory({{8, 0, 2}}, 0), Failure);
}

// `trials` random lifetime sets: every plan valid, deterministic, and near the lower bound.
void plan_random_lifetimes(int trials, uint64_t seed, double worst_allowed) {
  Xoshiro256 rng(seed);
  double worst_ratio = 1.0, ratio_sum = 0.0;
  int planned = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const int n = 1 + static_cast<int>(rng.next() % 60);
    const int ops = 1 + static_cast<int>(rng.next() % 40);
    const uint64_t alignment = uint64_t{1} << (rng.next() % 8);
    std::vector<BufferRequest> req;
    for (int i = 0; i < n; ++i) {
      BufferRequest r;
      r.size = rng.next() % 5 == 0 ? 0 : 1 + rng.next() % 10000;
      r.first = static_cast<int64_t>(rng.next() % (ops + 1)) - 1;
      r.last = r.first + static_cast<int64_t>(rng.next() % 8);
      req.push_back(r);
    }
    const MemoryPlan plan = plan_memory(req, alignment);
    expect_valid(req, plan, alignment);
    if (plan.lower_bound_bytes > 0) {
      const double ratio = static_cast<double>(plan.total_bytes) / static_cast<double>(plan.lower_bound_bytes);
      worst_ratio = std::max(worst_ratio, ratio);
      ratio_sum += ratio;
      ++planned;
    }
    // Deterministic: the same request gives the same plan.
    const MemoryPlan again = plan_memory(req, alignment);
    EXPECT_EQ(again.offsets, plan.offsets);
    EXPECT_EQ(again.total_bytes, plan.total_bytes);
  }
  // Placing intervals of arbitrary sizes optimally is NP-hard; here the planner measures worst
  // 1.27 (small instances where alignment padding dominates) and mean 1.02. Naive stacking would
  // be several times the bound.
  EXPECT_LT(worst_ratio, worst_allowed);
  EXPECT_LT(ratio_sum / planned, 1.05);
  std::printf("%d random lifetime sets: worst ratio %.3f, mean %.4f\n", trials, worst_ratio, ratio_sum / planned);
}

TEST(MemoryPlanner, RandomLifetimesArePlannedSafelyAndTightly) { plan_random_lifetimes(200, 7, 1.35); }
// The long sweep (ctest -L long). Over 20,000 sets the rarest worst case is higher (1.42 measured:
// a few tiny sets where alignment padding dominates); the mean stays at 1.02.
TEST(MemoryPlanner, LongTwentyThousandRandomLifetimeSets) { plan_random_lifetimes(20000, 8, 1.5); }

TEST(MemoryPlanner, DecoderShapedLifetimesStayNearTheBound) {
  // A layer stack: residual stream alive throughout, per layer a few temporaries of mixed sizes.
  std::vector<BufferRequest> req;
  const int layers = 30;
  int64_t op = 0;
  req.push_back({576 * 4, -1, 0});
  for (int l = 0; l < layers; ++l) {
    const int64_t base = op;
    req.push_back({576 * 4, base, base + 2});       // normed
    req.push_back({576 * 4, base + 1, base + 4});   // q
    req.push_back({192 * 4, base + 1, base + 4});   // k
    req.push_back({192 * 4, base + 1, base + 4});   // v
    req.push_back({9 * 128 * 4, base + 3, base + 4});  // scores
    req.push_back({576 * 4, base + 4, base + 5});   // attn out
    req.push_back({576 * 4, base + 5, base + 8});   // residual
    req.push_back({1536 * 4, base + 6, base + 7});  // gate
    req.push_back({1536 * 4, base + 6, base + 7});  // up
    req.push_back({1536 * 4, base + 7, base + 8});  // act
    req.push_back({576 * 4, base + 8, base + 9});   // next residual
    op = base + 9;
  }
  const MemoryPlan plan = plan_memory(req);
  expect_valid(req, plan, 64);
  EXPECT_LE(static_cast<double>(plan.total_bytes), 1.10 * plan.lower_bound_bytes);
}

}  // namespace
}  // namespace genai::compile

namespace genai::compile {
namespace {

TEST(MemoryPlanner, FarApartAndHugeLifetimesArePlannedWithoutWalkingEveryOp) {
  std::vector<BufferRequest> req{{100, 0, 0}, {100, 4000000000LL, 4000000000LL}, {50, -1, 9000000000LL}};
  const MemoryPlan plan = plan_memory(req);
  EXPECT_EQ(plan.lower_bound_bytes, 150u);
  EXPECT_EQ(plan.total_bytes, 192u);  // 128 + 64: the two short ones share offsets
  EXPECT_EQ(plan.offsets[0], plan.offsets[1]);
}

}  // namespace
}  // namespace genai::compile
