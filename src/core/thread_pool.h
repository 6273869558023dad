// A small fork-join pool for kernels: parallel_for splits [0, n) into contiguous chunks (a few
// per thread, claimed dynamically by the caller and the workers) and blocks until all are done. Ours rather than pthreadpool because Debian 12 has no
// packaged pthreadpool with a stable API, and kernels only need this one primitive.
//
// Dispatch cost matters: a decode step makes hundreds of kernel calls of a few microseconds
// each. After a job, workers spin on an atomic job word for a short while (pause / yield
// backoff) before sleeping on a condition variable, so back-to-back jobs start in well under a
// microsecond of the caller publishing them; an idle pool sleeps and costs nothing.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace genai {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  // fn(begin, end) over disjoint chunks of [0, n), at least `grain` items per chunk. Called from
  // inside a job of this pool, or while another thread uses it, runs fn(0, n) on the caller.
  // The first exception thrown by any chunk propagates once every chunk has finished.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain = 1);

  // Process-wide pool; its size is set once (by --threads) before first use, default all cores.
  static ThreadPool& global();
  static void set_global_threads(int threads);

 private:
  void worker_loop();
  // Claims and runs chunks of the job published as `state` until none is left; returns the
  // state it last saw (a newer job, or the finished one).
  uint64_t run_chunks(uint64_t state);

  std::vector<std::thread> workers_;
  std::mutex submit_;  // one job at a time
  // Job description: written by the submitting thread before it publishes the job in state_
  // (release); read only by a thread that has claimed one of its chunks (so the job cannot end
  // and be replaced meanwhile).
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_n_ = 0, job_chunk_ = 0;
  // generation (32 bits) | chunk count (16) | next unclaimed chunk (16). The caller and the
  // workers claim chunks by compare-and-swap, so a chunk whose worker is not running yet (busy
  // machine) is taken by whoever is: nobody waits for a thread that has not started.
  std::atomic<uint64_t> state_{0};
  std::atomic<int64_t> done_{0};  // chunks finished in the current job
  std::mutex error_mutex_;
  std::exception_ptr error_;      // first exception thrown by a chunk of the current job
  std::atomic<int> sleepers_{0};  // workers blocked (or about to block) on wake_
  std::atomic<bool> stop_{false};
  std::mutex sleep_mutex_;
  std::condition_variable wake_;
};

}  // namespace genai
