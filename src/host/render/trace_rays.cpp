// @file trace_rays.cpp: --trace-rays on the CPU (a thread pool over the rays, timed with the steady clock),
// and what the CPU and GPU versions share: sanitising the rays and naming each hit's triangle by its number in the
// scene file.
#include "tracer/host/trace_rays.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "tracer/core/bvh.h"
#include "tracer/core/ray.h"
#include "tracer/core/scene_view.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/thread_pool.h"
#include "tracer/host/timing.h"

namespace tracer {

static_assert(sizeof(RayRecord) == sizeof(RayState) && sizeof(HitFileRecord) == sizeof(Hit),
              "the file records are RayState and Hit byte for byte");

std::vector<RayRecord> SanitisedRays(const std::vector<RayRecord>& rays, long long& invalid) {
  std::vector<RayRecord> out(rays);
  invalid = 0;
  for (RayRecord& r : out) {
    if (RayRecordValid(r)) continue;
    ++invalid;
    // tmax < 0: every box test fails against it, so traversal stops at the root with a miss.
    r = RayRecord{{0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 1.0f}, -1.0f, r.id};
  }
  return out;
}

void FinishTraceRays(const SceneData& scene, const TriangleNumbers& numbers, const std::vector<HitFileRecord>& bvhHits,
                     TraceRaysResult& result) {
  const std::vector<int32_t>& order = scene.bvh.order;
  result.hits.resize(bvhHits.size());
  result.hitCount = result.missCount = 0;
  for (size_t i = 0; i < bvhHits.size(); ++i) {
    const HitFileRecord& h = bvhHits[i];
    if (h.tri >= 0 && static_cast<size_t>(h.tri) < order.size()) {
      // BVH position -> Scene triangle -> its number in the scene file.
      const int64_t number = numbers.FileNumber(order[static_cast<size_t>(h.tri)]);
      if (number > std::numeric_limits<int32_t>::max())
        throw std::runtime_error("triangle number " + std::to_string(number) +
                                 " does not fit a hit record's int32 triangle field");
      result.hits[i] = HitFileRecord{h.t, h.b1, h.b2, static_cast<int32_t>(number)};
      ++result.hitCount;
    } else {
      result.hits[i] = MissHitRecord();
      ++result.missCount;
    }
  }
}

double RayCoherence(const std::vector<RayRecord>& rays) {
  constexpr size_t kWarp = 32, kMaxGroups = 4096;
  const size_t groups = rays.size() / kWarp;
  if (groups == 0) return 0.0;
  const size_t step = groups > kMaxGroups ? groups / kMaxGroups : 1;
  double sum = 0.0;
  size_t counted = 0;
  for (size_t g = 0; g < groups; g += step) {
    double m[3] = {0.0, 0.0, 0.0};
    for (size_t k = g * kWarp; k < (g + 1) * kWarp; ++k) {
      const float* d = rays[k].d;
      const double len = std::sqrt(double(d[0]) * d[0] + double(d[1]) * d[1] + double(d[2]) * d[2]);
      if (!(len > 0.0) || !std::isfinite(len)) continue;  // (an invalid ray adds nothing)
      for (int c = 0; c < 3; ++c) m[c] += d[c] / len;
    }
    sum += std::sqrt(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]) / kWarp;
    ++counted;
  }
  return sum / static_cast<double>(counted);
}

TraceRaysResult TraceRaysCpu(const SceneData& scene, const TriangleNumbers& numbers, const std::vector<RayRecord>& rays,
                             const TraceRaysOptions& options) {
  TraceRaysResult result;
  RequireBvh(scene, options.binaryBvh);
  const std::vector<RayRecord> traced = SanitisedRays(rays, result.invalidCount);
  // Aligned copies, so that the rays load as RayState does in the renderer.
  std::vector<RayState> states(traced.size());
  std::copy_n(reinterpret_cast<const char*>(traced.data()), traced.size() * sizeof(RayRecord),
              reinterpret_cast<char*>(states.data()));
  std::vector<Hit> hits(states.size());
  const int threads = ThreadPool::ThreadsFor(options.threads);
  ThreadPool pool(threads);
  const SceneView view = scene.View();
  auto traceAll = [&]() {
    DispatchBvh(options.binaryBvh, [&](auto t) {
      using T = decltype(t);
      pool.ParallelFor(states.size(), 1024, [&](size_t b, size_t e) {
        for (size_t i = b; i < e; ++i) {
          const Ray r = AlignedLayout::LoadRay(states.data(), static_cast<int>(i));
          const HitRecord h =
              options.anyHit ? T::template Trace<true, false>(view, r) : T::template Trace<false, false>(view, r);
          AlignedLayout::StoreHit(hits.data(), static_cast<int>(i), h);
        }
      });
    });
  };
  traceAll();  // warm-up: caches and page faults of the output
  std::vector<double> seconds;
  for (int k = 0; k < std::max(1, options.repeats); ++k) {
    Stopwatch sw;
    traceAll();
    seconds.push_back(sw.Seconds());
  }
  result.medianSeconds = Median(seconds);
  result.device = "cpu (" + std::to_string(threads) + " threads)";
  std::vector<HitFileRecord> bvhHits(hits.size());
  std::copy_n(reinterpret_cast<const char*>(hits.data()), hits.size() * sizeof(Hit),
              reinterpret_cast<char*>(bvhHits.data()));
  FinishTraceRays(scene, numbers, bvhHits, result);
  return result;
}

}  // namespace tracer
