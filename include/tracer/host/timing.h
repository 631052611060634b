// @file timing.h: host-side measuring helpers: a steady-clock stopwatch, the median of repeats, peak host memory.
#pragma once
#include <chrono>
#include <cstddef>
#include <vector>

namespace tracer {

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double Seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
  double Ms() const { return Seconds() * 1e3; }
  void Restart() { start_ = std::chrono::steady_clock::now(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Median of timed repeats (0 for none).
double Median(std::vector<double> v);

// The process's peak resident host memory so far, in bytes (getrusage's ru_maxrss; 0 where unavailable).
size_t PeakHostBytes();

}  // namespace tracer
