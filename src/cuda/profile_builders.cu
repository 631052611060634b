// @file profile_builders.cu: --profile's row for the GPU BVH builder's triangle pre-splitting (profile_builders.h):
// the builder's wide BVH with pre-splits and without, each put in the scene in place of its own and rendered.
#include <algorithm>
#include <cstdio>

#include "profile_builders.h"
#include "tracer/core/presplit.h"
#include "tracer/host/bvh_build_gpu.h"
#include "tracer/host/timing.h"
#include "tracer/host/wide_bvh_build.h"

namespace tracer {
namespace {

// One GPU build, `repeats` times after a warm-up: its wide BVH with each entry reporting the scene's binary BVH
// position of its triangle (so that the scene's arrays, in that order, still apply), and the median build time.
struct GpuTree {
  WideBvh wide;
  BvhBuildReport report;
  double buildMs = 0.0;
};
GpuTree BuildForScene(const SceneData& data, const std::vector<Vec3>& positions, const BvhBuildOptions& options,
                      int repeats) {
  GpuTree g;
  Bvh binary;
  std::vector<double> ms;
  for (int r = 0; r <= std::max(repeats, 1); ++r) {
    g.report = BuildBvhsOnGpu(positions, options, binary, g.wide);
    if (r > 0) ms.push_back(g.report.buildMs);
  }
  g.buildMs = Median(ms);
  std::vector<int32_t> scenePosition(data.bvh.order.size());
  for (size_t k = 0; k < data.bvh.order.size(); ++k) scenePosition[static_cast<size_t>(data.bvh.order[k])] = int32_t(k);
  for (size_t w = 0; w < g.wide.tris.size() / 3; ++w) {
    Float4& v0 = g.wide.tris[3 * w];
    const int32_t tri = binary.order[BitsFromFloat(v0.w)];
    v0.w = FloatFromBits(static_cast<uint32_t>(scenePosition[static_cast<size_t>(tri)]));
  }
  return g;
}

}  // namespace

PresplitRow ProfilePresplit(const SceneData& data, const std::vector<Vec3>& positions, int repeats,
                            const MeasureTraversal& measure) {
  std::fprintf(stderr, "  measuring the GPU builder's tree with and without pre-splits\n");
  BvhBuildOptions forced, none;
  forced.presplitAlways = true;
  none.presplitBudget = 0.0f;
  const GpuTree split = BuildForScene(data, positions, forced, repeats);
  const GpuTree whole = BuildForScene(data, positions, none, repeats);
  SceneData withSplits = data, without = data;
  withSplits.wide = split.wide;
  without.wide = whole.wide;
  const TraversalMs s = measure(withSplits, "GPU tree, pre-splits"), w = measure(without, "GPU tree, no pre-splits");
  const double n = static_cast<double>(std::max<size_t>(positions.size() / 3, 1));
  const double waste = split.report.presplitWaste;
  char ev[400];
  std::snprintf(ev, sizeof ev,
                "intersect %.2f vs %.2f ms, shadow %.2f vs %.2f ms; %.2f references/triangle; SAH cost %.2f vs %.2f; "
                "build %.2f vs %.2f ms; waste %.3f: the gate %s",
                w.intersect, s.intersect, w.shadow, s.shadow, static_cast<double>(split.report.references) / n,
                WideSahCost(whole.wide), WideSahCost(split.wide), whole.buildMs, split.buildMs, waste,
                waste >= kPresplitMinWaste ? "splits" : "keeps the triangles whole");
  return PresplitRow{"GPU BVH (triangle pre-splits vs none)", "intersect+shadow", ev, w.intersect + w.shadow,
                     s.intersect + s.shadow};
}

}  // namespace tracer
