// @file gpu_build_bench.cpp: the GPU BVH builders on a scene (not a test; run by hand on a machine with a GPU).
//
//   build/tests/gpu_build_bench SCENE.obj [REPEATS]
//
// Loads the scene as the tracer does and builds its BVHs with H-PLOC (BuildBvhsOnGpu, the default) and with PLOC's
// passes (BuildBvhsOnGpuInPasses, its naive twin), alternately, one warm-up each and then REPEATS (default 9) timed
// builds, and prints for each builder: the median, lowest and highest build time of the kernels (CUDA events, as
// report.buildMs), triangles per second, the transfers and gathers around it, and the trees' nodes, depths and wide
// SAH cost (WideSahCost); then the medians of the build's parts (Morton codes and sort, clustering, SAH top, sweeps).
// Trace speed is --trace-rays's (tracer SCENE --trace-rays RAYS --bvh-builder gpu|ploc).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tracer/host/bvh_build_gpu.h"
#include "tracer/host/scene_loader.h"
#include "tracer/host/wide_bvh_build.h"

int main(int argc, char** argv) {
  using namespace tracer;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s SCENE.obj [REPEATS]\n", argv[0]);
    return 2;
  }
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 9;
  const std::vector<Vec3> positions = LoadScene(argv[1]).positions;
  const size_t n = positions.size() / 3;
  struct Builder {
    const char* name;
    BvhBuilderFn fn;
    std::vector<double> ms, transferMs, sortMs, clusterMs, topMs, sweepMs;
    Bvh binary;
    WideBvh wide;
    int passes = 0;
  };
  Builder builders[2] = {{"H-PLOC", &BuildBvhsOnGpu, {}, {}, {}, {}, {}, {}, {}, {}, 0},
                         {"PLOC passes", &BuildBvhsOnGpuInPasses, {}, {}, {}, {}, {}, {}, {}, {}, 0}};
  const BvhBuildOptions options;
  for (int r = 0; r <= repeats; ++r) {
    for (Builder& b : builders) {
      const BvhBuildReport report = b.fn(positions, options, b.binary, b.wide);
      if (report.builder != "gpu") {
        std::fprintf(stderr, "%s: built on the host: %s\n", b.name, report.note.c_str());
        return 1;
      }
      b.passes = report.iterations;
      if (r == 0) continue;
      b.ms.push_back(report.buildMs), b.transferMs.push_back(report.transferMs);
      b.sortMs.push_back(report.sortMs), b.clusterMs.push_back(report.clusterMs), b.topMs.push_back(report.topMs);
      b.sweepMs.push_back(report.sweepMs);
    }
  }
  std::printf("%s: %zu triangles, median of %d builds after a warm-up\n", argv[1], n, repeats);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  for (Builder& b : builders) {
    std::sort(b.ms.begin(), b.ms.end());
    const double med = b.ms[b.ms.size() / 2];
    std::printf(
        "  %-12s build %8.2f ms (%.2f-%.2f; %7.1f M triangles/s), transfers and gathers %7.1f ms; binary %zu nodes "
        "depth %d, wide %zu nodes depth %d, wide SAH cost %.3f%s\n",
        b.name, med, b.ms.front(), b.ms.back(), static_cast<double>(n) / (med * 1e3), median(b.transferMs),
        b.binary.nodes.size(), b.binary.depth, b.wide.nodes.size(), b.wide.depth, WideSahCost(b.wide),
        b.passes ? (", " + std::to_string(b.passes) + " passes").c_str() : "");
  }
  for (const Builder& b : builders)
    std::printf(
        "  %-12s Morton codes and sort %.3f ms, clustering %.3f ms, SAH top %.3f ms, top-down sweeps %.3f ms "
        "(medians)\n",
        b.name, median(b.sortMs), median(b.clusterMs), median(b.topMs), median(b.sweepMs));
  std::printf("  H-PLOC / PLOC passes build time: %.3f\n",
              builders[0].ms[builders[0].ms.size() / 2] / builders[1].ms[builders[1].ms.size() / 2]);
  return 0;
}
