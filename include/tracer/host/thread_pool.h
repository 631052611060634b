// @file thread_pool.h: a fixed set of worker threads running parallel-for loops over index ranges.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
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
  // The cores this process may run on (its affinity mask: one where an MPI launcher bound it to a core).
  static int CoresAvailable();

  // Calls fn(begin, end) over chunks of [0, n) on all threads (the caller included) and waits.
  void ParallelFor(size_t n, size_t chunk, const std::function<void(size_t, size_t)>& fn);

  // Calls fn(i) for each i in [0, n), one index per task, and waits. An exception thrown by fn is held until every
  // index has run; then the one of the lowest i is rethrown, the one a serial loop would have met first.
  void ParallelForEach(size_t n, const std::function<void(size_t)>& fn);

  // How many pieces to cut n items into, for ParallelForEach: one on a pool of one thread (the serial order, the
  // naive twin), else up to 8 per thread (for balance), each of at least minPiece items.
  size_t PiecesFor(size_t n, size_t minPiece) const;

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
