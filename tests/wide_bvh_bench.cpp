// @file wide_bvh_bench.cpp: the wide BVH of a scene with and without spatial splits (not a test; run by hand).
//
//   build/tests/wide_bvh_bench SCENE.obj [RAYS.bin | any:RAYS.bin ...]
//
// Loads the scene as the tracer does, builds the scene's binary BVH, then the wide BVH without spatial splits (the
// naive twin, --no-spatial-splits) and with them, and prints for each: build seconds (the median of three, the
// binary BVH's excluded; wall clock and the building thread's CPU time, which other work on the machine disturbs
// less), references (triangles counting each copy), nodes, depth and the SAH cost (WideSahCost).
// For each ray file (--make-rays), it also prints the wide nodes visited per ray, closest hit or, with "any:",
// any hit, and the rays traced per CPU second (the threads' CPU time, best of three passes: unlike the wall clock
// of --trace-rays it does not count time the threads wait for a core, so other work on the machine disturbs it
// less). Node visits are counted by running the traversal's own step (WideStep), as TraverseWide does, and
// counting the steps: on the host each step visits exactly one node. Triangle tests per ray would need a counter
// inside WideStep.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "tracer/core/wide_bvh.h"
#include "tracer/host/bvh_build.h"
#include "tracer/host/ray_file.h"
#include "tracer/host/scene_loader.h"
#include "tracer/host/thread_pool.h"
#include "tracer/host/wide_bvh_build.h"

namespace tracer {
namespace {

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double ThreadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct TraversalStats {
  double nodesPerRay = 0.0, raysPerCpuSecond = 0.0;
};

// Wide nodes visited per traced ray, over all valid rays of the file, and traced rays per CPU second (best of three).
TraversalStats Traverse(const WideBvh& wide, const std::vector<RayRecord>& rays, bool anyHit, ThreadPool& pool) {
  const WideBvhView view = wide.View();
  constexpr size_t kChunk = 4096;
  std::vector<long long> steps((rays.size() + kChunk - 1) / kChunk, 0), traced(steps.size(), 0);
  std::vector<double> cpu(steps.size(), 0.0);
  auto pass = [&](size_t b, size_t e) {
    const double t0 = ThreadCpuSeconds();
    long long s = 0, n = 0;
    for (size_t i = b; i < e; ++i) {
      if (!RayRecordValid(rays[i])) continue;
      const RayRecord& r = rays[i];
      const Ray ray{Vec3(r.o[0], r.o[1], r.o[2]), Vec3(r.d[0], r.d[1], r.d[2]), r.tmax, static_cast<int32_t>(i)};
      WideGroup stack[kWideStackSize];
      WideTraversalState st = WideBegin(ray);
      ++n;
      do ++s;
      while (anyHit ? WideStep<true, false>(view, ray, st, stack) : WideStep<false, false>(view, ray, st, stack));
    }
    steps[b / kChunk] = s;
    traced[b / kChunk] = n;
    cpu[b / kChunk] = ThreadCpuSeconds() - t0;
  };
  TraversalStats out;
  double best = 0.0;
  for (int repeat = 0; repeat < 3; ++repeat) {
    pool.ParallelFor(rays.size(), kChunk, pass);
    long long s = 0, n = 0;
    double seconds = 0.0;
    for (size_t k = 0; k < steps.size(); ++k) s += steps[k], n += traced[k], seconds += cpu[k];
    out.nodesPerRay = n > 0 ? static_cast<double>(s) / static_cast<double>(n) : 0.0;
    if (seconds > 0.0) best = std::max(best, static_cast<double>(n) / seconds);
  }
  out.raysPerCpuSecond = best;
  return out;
}

int Run(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s SCENE.obj [RAYS.bin | any:RAYS.bin ...]\n", argv[0]);
    return 2;
  }
  auto t0 = std::chrono::steady_clock::now();
  const Scene scene = LoadScene(argv[1]);
  std::printf("%s: %zu triangles, loaded in %.2f s\n", argv[1], scene.NumTriangles(), Seconds(t0));
  t0 = std::chrono::steady_clock::now();
  const Bvh binary = BuildBvh(scene.positions);
  std::printf("binary BVH: %.2f s, %zu nodes, depth %d\n", Seconds(t0), binary.nodes.size(), binary.depth);

  std::vector<std::pair<std::string, std::vector<RayRecord>>> rayFiles;
  for (int k = 2; k < argc; ++k) {
    const bool any = std::strncmp(argv[k], "any:", 4) == 0;
    const std::string path = any ? argv[k] + 4 : argv[k];
    rayFiles.emplace_back(any ? "any:" + path : path, ReadRayFile(path));
  }
  ThreadPool pool(ThreadPool::ThreadsFor(0));
  for (bool spatial : {false, true}) {
    BvhBuildOptions options;
    options.spatialSplits = spatial;
    std::vector<double> seconds, cpuSeconds;
    WideBvh wide;
    for (int repeat = 0; repeat < 3; ++repeat) {
      t0 = std::chrono::steady_clock::now();
      const double c0 = ThreadCpuSeconds();
      wide = BuildWideBvh(scene.positions, binary, options);
      cpuSeconds.push_back(ThreadCpuSeconds() - c0);
      seconds.push_back(Seconds(t0));
    }
    std::sort(seconds.begin(), seconds.end());
    std::sort(cpuSeconds.begin(), cpuSeconds.end());
    const size_t refs = wide.tris.size() / 3;
    std::printf(
        "wide BVH, spatial splits %s: %.2f s (median of 3; CPU %.2f s), %zu references (%.3f per triangle), %zu nodes, "
        "depth "
        "%d, SAH cost %.3f\n",
        spatial ? "on " : "off", seconds[1], cpuSeconds[1], refs,
        static_cast<double>(refs) / static_cast<double>(std::max<size_t>(scene.NumTriangles(), 1)), wide.nodes.size(),
        wide.depth, WideSahCost(wide));
    for (const auto& [name, rays] : rayFiles) {
      const TraversalStats t = Traverse(wide, rays, name.compare(0, 4, "any:") == 0, pool);
      std::printf("  %s: %.2f wide nodes visited per ray, %.3f M rays per CPU second\n", name.c_str(), t.nodesPerRay,
                  t.raysPerCpuSecond * 1e-6);
    }
  }
  return 0;
}

}  // namespace
}  // namespace tracer

int main(int argc, char** argv) {
  try {
    return tracer::Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wide_bvh_bench: %s\n", e.what());
    return 1;
  }
}
