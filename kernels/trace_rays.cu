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
#include "tracer/cuda/stage_kernel.cuh"
#include "tracer/host/trace_rays.h"

namespace tracer {
namespace {

// The intersect stage's traversal without its queues: what a ray costs to trace, and nothing else. At most 64
// registers (8 blocks of 128 per SM), as the stage kernels get by themselves: left alone, ptxas gave this kernel
// over 90, which cut its occupancy to a third and its speed by a fifth or more.
#ifndef TRACER_TRACE_MIN_BLOCKS
#define TRACER_TRACE_MIN_BLOCKS 8
#endif
template <bool kAnyHit, class T>
__global__ void __launch_bounds__(kBlock, TRACER_TRACE_MIN_BLOCKS)
    TraceRaysKernel(SceneView s, const RayState* rays, Hit* hits, int n) {
  const int i = ThreadIndex();
  if (i >= n) return;
  const Ray r = AlignedLayout::LoadRay(rays, i);
  AlignedLayout::StoreHit(hits, i, T::template Trace<kAnyHit, true>(s, r));
}

// The same trace as a resumable stage body (core/stages.h), for PersistentStageKernel (cuda/stage_kernel.cuh):
// persistent threads that hand a warp's idle lanes new rays.
template <bool kAnyHitRays>
struct TraceRaysBody {
  static constexpr bool kResumable = true, kAnyHit = kAnyHitRays, kLdgLoads = true;
  using Payload = Ray;
  SceneView s;
  const RayState* rays;
  Hit* hits;
  int n;
  __device__ int Count() const { return n; }
  __device__ static const Ray& RayOf(const Ray& r) { return r; }
  __device__ bool Begin(int i, Ray& r) const {
    r = AlignedLayout::LoadRay(rays, i);
    return true;
  }
  __device__ void Finish(int i, const Ray&, const HitRecord& h) const { AlignedLayout::StoreHit(hits, i, h); }
};

}  // namespace

TraceRaysResult TraceRaysCuda(const SceneData& scene, const TriangleNumbers& numbers,
                              const std::vector<RayRecord>& rays, const TraceRaysOptions& options) {
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
  int refill = options.persistentRefill < 0 ? 0 : (options.persistentRefill > 32 ? 32 : options.persistentRefill);
  const double coherence = refill > 0 && options.modeByCoherence ? RayCoherence(traced) : 0.0;
  if (coherence >= kCoherentRays) refill = 0;  // coherent rays: one thread per ray
  DeviceBuffer<int> dNext(1, "trace-rays ray counter");
  int perSm = 0, device = 0;
  cudaDeviceProp prop;
  TRACER_CUDA_CHECK(cudaGetDevice(&device));
  TRACER_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  TRACER_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, PersistentStageKernel<TraceRaysBody<false>>,
                                                                  static_cast<int>(kStageBlock), 0));
  const unsigned persistentGrid = static_cast<unsigned>(prop.multiProcessorCount * (perSm > 0 ? perSm : 1));
  auto launch = [&]() {
    if (refill > 0 && !options.binaryBvh) {
      TRACER_CUDA_CHECK(cudaMemsetAsync(dNext.Get(), 0, sizeof(int), stream.Get()));
      if (options.anyHit)
        PersistentStageKernel<<<persistentGrid, kStageBlock, 0, stream.Get()>>>(
            TraceRaysBody<true>{view, dRays.Get(), dHits.Get(), n}, dNext.Get(), refill);
      else
        PersistentStageKernel<<<persistentGrid, kStageBlock, 0, stream.Get()>>>(
            TraceRaysBody<false>{view, dRays.Get(), dHits.Get(), n}, dNext.Get(), refill);
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
  else if (coherence >= kCoherentRays)
    result.device += ", one thread per ray (coherent rays: " + std::to_string(coherence).substr(0, 5) + ")";
  FinishTraceRays(scene, numbers, bvhHits, result);
  return result;
}

}  // namespace tracer
