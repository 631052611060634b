// @file kernel_common.cuh: small helpers for kernels: the thread index, and the dispatch from run-time
// switches to template arguments.
#pragma once
#include <type_traits>

#include "tracer/core/queue.h"
#include "tracer/cuda/cuda_check.h"

namespace tracer {

constexpr unsigned kBlock = 128;  // threads per block of the helper kernels

TRACER_DEVICE int ThreadIndex() { return static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); }

// Calls f(std::integral_constant<Compaction, C>{}) for the run-time compaction mode.
template <typename F>
void DispatchCompaction(Compaction c, F&& f) {
  switch (c) {
    case Compaction::kWarpAggregated:
      f(std::integral_constant<Compaction, Compaction::kWarpAggregated>{});
      break;
    case Compaction::kPerThreadAtomic:
      f(std::integral_constant<Compaction, Compaction::kPerThreadAtomic>{});
      break;
    case Compaction::kNone:
      f(std::integral_constant<Compaction, Compaction::kNone>{});
      break;
  }
}
template <typename F>
void DispatchBool(bool b, F&& f) {
  if (b)
    f(std::true_type{});
  else
    f(std::false_type{});
}

}  // namespace tracer
