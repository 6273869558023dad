// A small fork-join pool for kernels: parallel_for splits [0, n) into contiguous chunks, one per
// worker, and blocks until all are done. Ours rather than pthreadpool because Debian 12 has no
// packaged pthreadpool with a stable API, and kernels only need this one primitive.
#pragma once

#include <condition_variable>
#include <cstdint>
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
  // fn(begin, end) over disjoint chunks of [0, n), at least `grain` items per chunk.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain = 1);

  // Process-wide pool; its size is set once (by --threads) before first use, default all cores.
  static ThreadPool& global();
  static void set_global_threads(int threads);

 private:
  void worker_loop(int index);
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_n_ = 0, job_chunk_ = 0;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

}  // namespace genai
