// @file timing.cpp: the median of timed repeats and the peak resident memory.
#include "tracer/host/timing.h"

#include <sys/resource.h>

#include <algorithm>

namespace tracer {

double Median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

size_t PeakHostBytes() {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<size_t>(usage.ru_maxrss) * 1024;  // Linux counts ru_maxrss in KiB
}

}  // namespace tracer
