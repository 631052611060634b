// @file timing.h: host-side timing helpers: a steady-clock stopwatch and the median of repeats.
#pragma once
#include <chrono>
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

}  // namespace tracer
