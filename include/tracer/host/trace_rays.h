// @file trace_rays.h: --trace-rays: trace a ray file's rays against a scene's BVH on the CPU or the GPU, and
// time the traversal alone. Plain C++: the CUDA version is declared only when nvcc built it (as backends.h).
#pragma once
#include <string>
#include <vector>

#include "tracer/host/ray_file.h"

namespace tracer {

struct SceneData;
struct TriangleNumbers;

struct TraceRaysOptions {
  bool anyHit = false;     // any hit (shadow-ray traversal) instead of the closest
  int repeats = 5;         // timed repeats after one warm-up; the median is reported
  int threads = 0;         // CPU threads (0 = all cores)
  bool binaryBvh = false;  // trace the binary BVH; else the wide one (SceneData::wide must then be built)
  // GPU, wide BVH: persistent threads that fetch rays whenever fewer than this many lanes of a warp still trace
  // (1..32); 0: one thread per ray (RenderOptions::persistentRefill).
  int persistentRefill = 0;
  // GPU, wide BVH, with persistentRefill > 0: one thread per ray instead where the rays are coherent (RayCoherence at
  // least kCoherentRays: a camera's, in pixel order). Off (an explicit --persistent N): persistent for any rays.
  bool modeByCoherence = false;
};

// How alike the directions of neighbouring rays are, as a warp sees them: the mean, over groups of 32 consecutive
// rays (up to 4096 groups spread over the file), of the length of the group's mean unit direction: 1 for parallel
// rays, about 1/sqrt(32) = 0.18 for uniformly random ones.
double RayCoherence(const std::vector<RayRecord>& rays);
constexpr double kCoherentRays = 0.9;  // a camera's rays at any common field of view and resolution: above 0.99

struct TraceRaysResult {
  std::vector<HitFileRecord> hits;  // in ray order; the scene file's triangle numbers; misses as MissHitRecord()
  std::string device;
  double medianSeconds = 0.0;  // one traversal of every ray, without transfers
  long long hitCount = 0, missCount = 0;
  long long invalidCount = 0;  // rays not traced (RayRecordValid false); counted as misses
};

// The rays as traced: an invalid ray becomes one that hits nothing (tmax -1), counted in `invalid`.
std::vector<RayRecord> SanitisedRays(const std::vector<RayRecord>& rays, long long& invalid);
// Turns the traversal's hits (BVH order, as TraverseBvh returns them) into the file's records and counts: a hit's
// BVH position names a Scene triangle (Bvh::order), whose number in the scene file `numbers` gives
// (Scene::triangleNumbers). Throws std::runtime_error for a number beyond the record's int32.
void FinishTraceRays(const SceneData& scene, const TriangleNumbers& numbers, const std::vector<HitFileRecord>& bvhHits,
                     TraceRaysResult& result);

// `numbers`: the Scene's, that scene was built from.
TraceRaysResult TraceRaysCpu(const SceneData& scene, const TriangleNumbers& numbers, const std::vector<RayRecord>& rays,
                             const TraceRaysOptions& options);

#if defined(TRACER_HAVE_CUDA)
// The same on the GPU: one thread per ray, TraverseBvh through the read-only path, timed with CUDA events.
// Throws DeviceError on CUDA errors.
TraceRaysResult TraceRaysCuda(const SceneData& scene, const TriangleNumbers& numbers,
                              const std::vector<RayRecord>& rays, const TraceRaysOptions& options);
#endif

}  // namespace tracer
