// @file kernel_common.cuh: what every stage kernel needs: its thread index, the buffers of its mode,
// and the dispatch from run-time switches to template arguments.
#pragma once
#include "kernels/launch.h"
#include "tracer/cuda_host.h"
#include "tracer/queue_device.cuh"

namespace tracer {

constexpr unsigned kBlock = kStageBlock;

TRACER_DEVICE int ThreadIndex() { return static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); }

// Grid-stride loop over [0, n). Stage kernels are launched with at most as many blocks as the GPU holds at
// once (LaunchSettings::maxBlocks), not one thread per pool slot, so a stage whose queue is short or empty
// (a material class absent from the scene, the tail of a pass) costs little more than its launch.
template <typename F>
TRACER_DEVICE void ForEachItem(int n, F&& f) {
  for (int i = ThreadIndex(); i < n; i += static_cast<int>(gridDim.x * blockDim.x)) f(i);
}
inline unsigned Blocks(const LaunchSettings& ls, size_t n) {
  unsigned g = GridFor(n, kBlock);
  return g < ls.maxBlocks ? g : ls.maxBlocks;
}

// Without compaction every stage works in place on buffer 0; with it, rays and paths ping-pong.
template <Compaction C> TRACER_DEVICE int CurBuffer(int cur) { return C == Compaction::kNone ? 0 : cur; }

template <Compaction C> constexpr PushMode PushModeOf() {
  return C == Compaction::kPerThreadAtomic ? PushMode::kPerThread : PushMode::kWarpAggregated;
}

// Calls f(std::integral_constant<Compaction, C>{}) for the run-time compaction mode.
template <typename F>
void DispatchCompaction(Compaction c, F&& f) {
  switch (c) {
    case Compaction::kWarpAggregated: f(std::integral_constant<Compaction, Compaction::kWarpAggregated>{}); break;
    case Compaction::kPerThreadAtomic: f(std::integral_constant<Compaction, Compaction::kPerThreadAtomic>{}); break;
    case Compaction::kNone: f(std::integral_constant<Compaction, Compaction::kNone>{}); break;
  }
}
template <typename F>
void DispatchBool(bool b, F&& f) {
  if (b) f(std::true_type{});
  else f(std::false_type{});
}

}  // namespace tracer
