// @file trace_rays.cu: --trace-rays on the GPU: a thin kernel (one thread per ray) that loads a RayState,
// traverses the wide or the binary BVH and stores the Hit, timed with CUDA events around the kernel alone.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "tracer/core/bvh.h"
#include "tracer/core/ray.h"
#include "tracer/core/scene_view.h"
#include "tracer/core/wide_bvh.h"
#include "tracer/cuda/cuda_check.h"
#include "tracer/cuda/device_buffer.h"
#include "tracer/cuda/device_scene.h"
#include "tracer/cuda/event_timer.h"
#include "tracer/cuda/kernel_common.cuh"
#include "tracer/cuda/raii.h"
#include "tracer/host/trace_rays.h"

namespace tracer {
namespace {

// The intersect stage's traversal without its queues: what a ray costs to trace, and nothing else.
#ifndef TRACER_TRACE_MIN_BLOCKS
#define TRACER_TRACE_MIN_BLOCKS 1
#endif
template <bool kAnyHit, class T>
__global__ void __launch_bounds__(kBlock, TRACER_TRACE_MIN_BLOCKS)
    TraceRaysKernel(SceneView s, const RayState* rays, Hit* hits, int n) {
  const int i = ThreadIndex();
  if (i >= n) return;
  const Ray r = AlignedLayout::LoadRay(rays, i);
  AlignedLayout::StoreHit(hits, i, T::template Trace<kAnyHit, true>(s, r));
}

// Persistent threads with dynamic ray fetch (Aila and Laine 2009): as many threads as the GPU holds at once,
// each tracing one ray after another. A warp fetches rays for its idle lanes with one atomic, whenever fewer
// than `refill` of its lanes are still tracing, so that the slowest ray of a warp does not hold 31 idle lanes.
template <bool kAnyHit>
__global__ void __launch_bounds__(kBlock)
    PersistentTraceKernel(WideBvhView bvh, const RayState* rays, Hit* hits, int n, int* next, int refill) {
  constexpr unsigned kFull = 0xffffffffu;
  const unsigned lane = threadIdx.x & 31u;
  WideGroup stack[kWideStackSize];
  WideTraversalState st{};
  Ray ray{};
  int idx = -1;  // the ray this lane traces; -1: none yet; >= n: no rays left
  while (true) {
    const unsigned need = __ballot_sync(kFull, idx < 0);
    if (need != 0u) {
      const int leader = __ffs(static_cast<int>(need)) - 1;
      int base = 0;
      if (static_cast<int>(lane) == leader) base = atomicAdd(next, __popc(need));
      base = __shfl_sync(kFull, base, leader);
      if (idx < 0) {
        idx = base + __popc(need & ((1u << lane) - 1u));
        if (idx < n) {
          ray = AlignedLayout::LoadRay(rays, idx);
          st = WideBegin(ray);
        }
      }
    }
    if (__all_sync(kFull, idx >= n)) return;
    while (true) {
      bool working = idx >= 0 && idx < n;
      if (working && !WideStep<kAnyHit, true>(bvh, ray, st, stack)) {
        AlignedLayout::StoreHit(hits, idx, st.hit);
        idx = -1;
        working = false;
      }
      if (__popc(__ballot_sync(kFull, working)) < refill) break;
    }
  }
}

}  // namespace

TraceRaysResult TraceRaysCuda(const SceneData& scene, const std::vector<RayRecord>& rays,
                              const TraceRaysOptions& options) {
  TraceRaysResult result;
  RequireBvh(scene, options.binaryBvh);
  const std::vector<RayRecord> traced = SanitisedRays(rays, result.invalidCount);
  const int n = static_cast<int>(traced.size());
  DeviceScene deviceScene(scene);
  DeviceBuffer<RayState> dRays(traced.size(), "trace-rays rays");
  DeviceBuffer<Hit> dHits(traced.size(), "trace-rays hits");
  CudaStream stream;
  // RayRecord is RayState byte for byte (static_assert in trace_rays.cpp); the copy needs no alignment.
  TRACER_CUDA_CHECK(cudaMemcpyAsync(dRays.Get(), traced.data(), traced.size() * sizeof(RayRecord),
                                    cudaMemcpyHostToDevice, stream.Get()));
  const SceneView view = deviceScene.view;
  const unsigned grid = GridFor(traced.size(), kBlock);
  // Persistent threads: as many blocks as are resident at once, and the shared ray counter.
  const int refill = options.persistentRefill < 0 ? 0 : (options.persistentRefill > 32 ? 32 : options.persistentRefill);
  DeviceBuffer<int> dNext(1, "trace-rays ray counter");
  int perSm = 0, device = 0;
  cudaDeviceProp prop;
  TRACER_CUDA_CHECK(cudaGetDevice(&device));
  TRACER_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  TRACER_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, PersistentTraceKernel<false>, kBlock, 0));
  const unsigned persistentGrid = static_cast<unsigned>(prop.multiProcessorCount * (perSm > 0 ? perSm : 1));
  auto launch = [&]() {
    if (refill > 0 && !options.binaryBvh) {
      TRACER_CUDA_CHECK(cudaMemsetAsync(dNext.Get(), 0, sizeof(int), stream.Get()));
      if (options.anyHit)
        PersistentTraceKernel<true>
            <<<persistentGrid, kBlock, 0, stream.Get()>>>(view.wide, dRays.Get(), dHits.Get(), n, dNext.Get(), refill);
      else
        PersistentTraceKernel<false>
            <<<persistentGrid, kBlock, 0, stream.Get()>>>(view.wide, dRays.Get(), dHits.Get(), n, dNext.Get(), refill);
      TRACER_CHECK_LAUNCH("trace_rays (persistent)");
      return;
    }
    DispatchBvh(options.binaryBvh, [&](auto t) {
      using T = decltype(t);
      if (options.anyHit)
        TraceRaysKernel<true, T><<<grid, kBlock, 0, stream.Get()>>>(view, dRays.Get(), dHits.Get(), n);
      else
        TraceRaysKernel<false, T><<<grid, kBlock, 0, stream.Get()>>>(view, dRays.Get(), dHits.Get(), n);
    });
    TRACER_CHECK_LAUNCH("trace_rays");
  };
  const double ms = MedianLaunchMs(stream.Get(), 1, options.repeats < 1 ? 1 : options.repeats, launch);
  result.medianSeconds = ms * 1e-3;
  std::vector<HitFileRecord> bvhHits(traced.size());
  TRACER_CUDA_CHECK(cudaMemcpy(bvhHits.data(), dHits.Get(), dHits.Bytes(), cudaMemcpyDeviceToHost));
  result.device = std::string("cuda (") + prop.name + ")";
  if (refill > 0 && !options.binaryBvh)
    result.device += ", persistent threads refilling below " + std::to_string(refill) + " lanes";
  FinishTraceRays(scene, bvhHits, result);
  return result;
}

}  // namespace tracer
