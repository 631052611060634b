// @file thread_pool.h: a fixed set of worker threads running parallel-for loops over index ranges.
#pragma once
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tracer {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  int Size() const { return static_cast<int>(workers_.size()) + 1; }
  // The thread count for a user's choice: `requested` when positive, else every core (at least one).
  static int ThreadsFor(int requested);

  // Calls fn(begin, end) over chunks of [0, n) on all threads (the caller included) and waits.
  void ParallelFor(size_t n, size_t chunk, const std::function<void(size_t, size_t)>& fn);

 private:
  void Work();
  void RunChunks();
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(size_t, size_t)>* fn_ = nullptr;
  size_t n_ = 0, chunk_ = 1;
  std::atomic<size_t> next_{0};
  int busy_ = 0;
  unsigned generation_ = 0;
  bool stop_ = false;
};

}  // namespace tracer
