#include "core/thread_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace genai {
namespace {

std::atomic<int> g_requested_threads{0};
// Set while a thread runs a chunk of some pool's job: nested parallel_for runs inline.
thread_local bool t_in_job = false;

// How long an idle worker keeps polling for the next job before it sleeps.
constexpr auto kSpinTime = std::chrono::microseconds(300);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// state_ fields.
inline uint32_t generation_of(uint64_t s) { return static_cast<uint32_t>(s >> 32); }
inline int64_t parts_of(uint64_t s) { return static_cast<int64_t>((s >> 16) & 0xffff); }
inline int64_t next_of(uint64_t s) { return static_cast<int64_t>(s & 0xffff); }

}  // namespace

ThreadPool::ThreadPool(int threads) {
  const int n = std::clamp(threads, 1, 0xffff);
  for (int i = 1; i < n; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(sleep_mutex_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

uint64_t ThreadPool::run_chunks(uint64_t s) {
  const uint32_t gen = generation_of(s);
  while (generation_of(s) == gen && next_of(s) < parts_of(s)) {
    if (!state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
    // Chunk next_of(s) is ours; the job cannot finish before we report it done.
    const int64_t begin = std::min(job_n_, job_chunk_ * next_of(s));
    const int64_t end = std::min(job_n_, begin + job_chunk_);
    const bool was_in_job = t_in_job;
    t_in_job = true;
    try {
      if (begin < end) (*job_)(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
    t_in_job = was_in_job;
    done_.fetch_add(1, std::memory_order_acq_rel);
    s = state_.load(std::memory_order_acquire);
  }
  return s;
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain) {
  if (n <= 0) return;
  const int64_t max_chunks = std::max<int64_t>(1, n / std::max<int64_t>(1, grain));
  // A few chunks per thread, claimed dynamically: a thread that starts late (busy machine) or
  // runs slower leaves its share to the others instead of holding everyone up.
  const int64_t parts = std::min<int64_t>({int64_t{4} * threads(), max_chunks, int64_t{0xffff}});
  if (parts <= 1 || threads() == 1 || t_in_job) {
    fn(0, n);
    return;
  }
  std::unique_lock<std::mutex> submit(submit_, std::try_to_lock);
  if (!submit.owns_lock()) {  // another thread's job is running: do this one here
    fn(0, n);
    return;
  }
  job_ = &fn;
  job_n_ = n;
  job_chunk_ = (n + parts - 1) / parts;
  error_ = nullptr;
  done_.store(0, std::memory_order_relaxed);
  const uint64_t gen = generation_of(state_.load(std::memory_order_relaxed)) + 1u;
  const uint64_t published = (gen << 32) | (static_cast<uint64_t>(parts) << 16);
  state_.store(published, std::memory_order_seq_cst);  // publishes the job (release)
  // A worker that registered as a sleeper before the store may be blocked: wake it. Taking the
  // mutex orders the notify after its re-check of state_ (no lost wake-up).
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard<std::mutex> lock(sleep_mutex_); }
    wake_.notify_all();
  }
  run_chunks(published);  // the caller works too, from chunk 0 on
  // Only chunks already claimed by running workers are left.
  for (int spins = 0; done_.load(std::memory_order_acquire) != parts; ++spins) {
    if (spins < 4096) cpu_relax();
    else std::this_thread::yield();
  }
  job_ = nullptr;
  if (error_) {
    std::exception_ptr e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

void ThreadPool::worker_loop() {
  uint32_t seen = 0;
  for (;;) {
    // Poll for the next job, then sleep until it comes.
    uint64_t s = state_.load(std::memory_order_acquire);
    if (generation_of(s) == seen) {
      const auto until = std::chrono::steady_clock::now() + kSpinTime;
      for (int spins = 0; generation_of(s = state_.load(std::memory_order_acquire)) == seen; ++spins) {
        if (stop_.load(std::memory_order_relaxed)) return;
        if ((spins & 63) == 63) {
          if (std::chrono::steady_clock::now() > until) break;
          std::this_thread::yield();
        } else {
          cpu_relax();
        }
      }
    }
    if (generation_of(s) == seen) {
      std::unique_lock<std::mutex> lock(sleep_mutex_);
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      wake_.wait(lock, [&] {
        return stop_.load(std::memory_order_relaxed) || generation_of(state_.load(std::memory_order_seq_cst)) != seen;
      });
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
      if (stop_.load(std::memory_order_relaxed)) return;
      s = state_.load(std::memory_order_acquire);
    }
    seen = generation_of(s);
    run_chunks(s);
  }
}

ThreadPool& ThreadPool::global() {
  static ThreadPool pool([] {
    int n = g_requested_threads.load();
    if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
    return n;
  }());
  return pool;
}

void ThreadPool::set_global_threads(int threads) { g_requested_threads.store(threads); }

}  // namespace genai
