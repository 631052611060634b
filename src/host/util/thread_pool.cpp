// @file thread_pool.cpp: the worker loop behind ThreadPool::ParallelFor.
#include "tracer/host/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <exception>

namespace tracer {

int ThreadPool::ThreadsFor(int requested) {
  return requested > 0 ? requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int ThreadPool::CoresAvailable() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return ThreadsFor(0);
}

ThreadPool::ThreadPool(int threads) {
  int extra = std::max(1, threads) - 1;
  for (int i = 0; i < extra; ++i) workers_.emplace_back([this] { Work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::RunChunks() {
  for (;;) {
    size_t begin = next_.fetch_add(chunk_);
    if (begin >= n_) break;
    (*fn_)(begin, std::min(n_, begin + chunk_));
  }
}

void ThreadPool::Work() {
  unsigned seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    RunChunks();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--busy_ == 0) done_.notify_all();
    }
  }
}

void ThreadPool::ParallelFor(size_t n, size_t chunk, const std::function<void(size_t, size_t)>& fn) {
  if (n == 0) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    n_ = n;
    chunk_ = std::max<size_t>(1, chunk);
    next_.store(0);
    busy_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  RunChunks();
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return busy_ == 0; });
}

void ThreadPool::ParallelForEach(size_t n, const std::function<void(size_t)>& fn) {
  std::vector<std::exception_ptr> errors(n);
  ParallelFor(n, 1, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  });
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

size_t ThreadPool::PiecesFor(size_t n, size_t minPiece) const {
  if (Size() == 1) return 1;
  return std::max<size_t>(1, std::min(static_cast<size_t>(Size()) * 8, n / std::max<size_t>(minPiece, 1)));
}

}  // namespace tracer
