// @file event_timer.h: the one way a kernel launch is timed with CUDA events: the median of repeats after
// warm-ups.
#pragma once
#include <cuda_runtime.h>

#include <vector>

#include "tracer/cuda/cuda_check.h"
#include "tracer/cuda/raii.h"
#include "tracer/host/timing.h"

namespace tracer {

// Runs launch() `warmups` times (first-launch costs: module load, caches, clocks), waits for them, then
// `repeats` times each between two events recorded on `stream`, and returns the median of those times in
// ms (0 for repeats <= 0). launch() must enqueue its work on `stream`; only its work is inside the timed
// region, and each repeat is waited for before the next starts, so repeats do not overlap.
template <typename Launch>
double MedianLaunchMs(cudaStream_t stream, int warmups, int repeats, Launch&& launch) {
  CudaEvent start, stop;  // destroyed on every way out, exceptions included
  for (int w = 0; w < warmups; ++w) launch();
  TRACER_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    start.Record(stream);
    launch();
    stop.Record(stream);
    stop.Synchronize();
    ms.push_back(stop.MsSince(start));
  }
  return Median(ms);
}

}  // namespace tracer
