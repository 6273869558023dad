#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace genai {
namespace {

TEST(ThreadPool, EveryIndexVisitedExactlyOnce) {
  ThreadPool pool(3);
  for (int64_t n : {1, 2, 3, 7, 100, 1001}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
    });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
}

TEST(ThreadPool, RepeatedJobsDoNotDeadlock) {
  ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  for (int it = 0; it < 2000; ++it)
    pool.parallel_for(10, [&](int64_t b, int64_t e) { sum += e - b; });
  EXPECT_EQ(sum.load(), 20000);
}

}  // namespace
}  // namespace genai

namespace genai {
namespace {

TEST(ThreadPool, NestedCallsRunInline) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  pool.parallel_for(4, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      pool.parallel_for(10, [&](int64_t b2, int64_t e2) { total += e2 - b2; });
  });
  EXPECT_EQ(total.load(), 40);
}

TEST(ThreadPool, CallerExceptionPropagatesAfterWorkersFinish) {
  ThreadPool pool(2);
  std::atomic<int> done{0};
  EXPECT_THROW(pool.parallel_for(2,
                                 [&](int64_t b, int64_t) {
                                   if (b == 0) throw std::runtime_error("chunk 0");
                                   done++;
                                 }),
               std::runtime_error);
  EXPECT_EQ(done.load(), 1);
  // Still usable afterwards.
  std::atomic<int64_t> sum{0};
  pool.parallel_for(100, [&](int64_t b, int64_t e) { sum += e - b; });
  EXPECT_EQ(sum.load(), 100);
}

TEST(ThreadPool, ConcurrentCallersEachGetEveryIndexOnce) {
  ThreadPool pool(3);
  auto run = [&](std::atomic<int64_t>& sum) {
    for (int it = 0; it < 300; ++it)
      pool.parallel_for(64, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) sum += i;
      });
  };
  std::atomic<int64_t> s1{0}, s2{0};
  std::thread t([&] { run(s1); });
  run(s2);
  t.join();
  EXPECT_EQ(s1.load(), 300 * (63 * 64 / 2));
  EXPECT_EQ(s2.load(), 300 * (63 * 64 / 2));
}

TEST(ThreadPool, WakesSleepingWorkers) {
  ThreadPool pool(2);
  for (int it = 0; it < 3; ++it) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // longer than the spin: workers sleep
    std::atomic<int> chunks{0};
    std::atomic<bool> other_thread{false};
    const auto caller = std::this_thread::get_id();
    pool.parallel_for(2, [&](int64_t b, int64_t) {
      chunks++;
      if (std::this_thread::get_id() != caller) other_thread = true;
      // The caller claims chunk 0 first and waits here until a worker has run chunk 1.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (b == 0 && chunks.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    });
    EXPECT_EQ(chunks.load(), 2);
    EXPECT_TRUE(other_thread.load());
  }
}

TEST(ThreadPool, WorkerExceptionPropagatesToTheCaller) {
  ThreadPool pool(2);
  for (int it = 0; it < 5; ++it) {
    std::atomic<int> ran{0};
    const auto caller = std::this_thread::get_id();
    std::atomic<bool> thrown_on_worker{false};
    EXPECT_THROW(pool.parallel_for(2,
                                   [&](int64_t, int64_t) {
                                     ran++;
                                     if (std::this_thread::get_id() != caller) {
                                       thrown_on_worker = true;
                                       throw std::runtime_error("worker chunk");
                                     }
                                     // The caller's chunk waits until a worker has run the other.
                                     const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
                                     while (ran.load() < 2 && std::chrono::steady_clock::now() < deadline)
                                       std::this_thread::yield();
                                   }),
                 std::runtime_error);
    EXPECT_EQ(ran.load(), 2);
    EXPECT_TRUE(thrown_on_worker.load());
  }
}

TEST(ThreadPool, ChunksCoverTheRangeWithTheGrain) {
  ThreadPool pool(2);
  std::mutex m;
  std::vector<std::pair<int64_t, int64_t>> seen;
  pool.parallel_for(1000, [&](int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(m);
    seen.emplace_back(b, e);
  }, 100);
  std::sort(seen.begin(), seen.end());
  int64_t at = 0;
  for (auto [b, e] : seen) {
    EXPECT_EQ(b, at);
    EXPECT_GE(e - b, 100);
    at = e;
  }
  EXPECT_EQ(at, 1000);
}

}  // namespace
}  // namespace genai
