// @file timing.cpp: the median of timed repeats.
#include "tracer/host/timing.h"

#include <algorithm>

namespace tracer {

double Median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace tracer
