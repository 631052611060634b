// @file profile_builders.cu: the BVH builders in --profile and --benchmark (profile_builders.h): the GPU builder's
// triangle pre-splitting row (its wide BVH with pre-splits and without, each put in the scene in place of its own and
// rendered), and the builders side by side (CompareBvhBuilders).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "profile_builders.h"
#include "tracer/core/presplit.h"
#include "tracer/host/bvh_build.h"
#include "tracer/host/bvh_build_gpu.h"
#include "tracer/host/json_writer.h"
#include "tracer/host/make_rays.h"
#include "tracer/host/render_options.h"
#include "tracer/host/scene_loader.h"
#include "tracer/host/timing.h"
#include "tracer/host/trace_rays.h"
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

// The scene's triangles in the order its BVHs were built from (SceneData keeps them in the binary BVH's order).
std::vector<Vec3> OriginalPositions(const SceneData& data) {
  const size_t n = data.bvh.order.size();
  std::vector<Vec3> positions(3 * n);
  for (size_t k = 0; k < n; ++k)
    for (size_t v = 0; v < 3; ++v) {
      const Float4& q = data.bvh.tris[3 * k + v];
      positions[3 * static_cast<size_t>(data.bvh.order[k]) + v] = Vec3(q.x, q.y, q.z);
    }
  return positions;
}

// The BVH builders side by side on the scene's triangles: the GPU builder (H-PLOC), its naive twin (PLOC's global
// passes; both the median of `repeats` builds after a warm-up, which pays for loading their kernels) and the host's
// binned SAH with spatial splits (once; it takes seconds): build time, the wide BVH's SAH cost, and the wide
// traversal's speed on the same primary and diffuse rays (the --make-rays rays of the benchmark camera, traced as
// --trace-rays does). Prints one block, adds "bvh_builders".
void CompareBvhBuilders(const SceneData& data, const RenderOptions& base, int repeats, JsonWriter& j) {
  const size_t n = data.bvh.order.size();
  const std::vector<Vec3> positions = OriginalPositions(data);
  std::fprintf(stderr, "  measuring the BVH builders (the CPU one takes a while on big scenes)\n");
  struct Builder {
    const char *key, *label;
    BvhBuilderFn fn;
    SceneData scene;  // only the BVHs change: --trace-rays reads nothing else
    double buildMs = 0.0, transferMs = 0.0, sah = 0.0, rate[2] = {0.0, 0.0};  // rate: primary, diffuse rays/s
    int passes = 0;
  };
  Builder builders[3] = {{"gpu", "GPU H-PLOC", &BuildBvhsOnGpu, data},
                         {"ploc", "GPU PLOC passes", &BuildBvhsOnGpuInPasses, data},
                         {"cpu", "CPU binned SAH + spatial splits", nullptr, data}};
  const BvhBuildOptions options;
  for (Builder& b : builders) {
    if (!b.fn) {
      const Stopwatch clock;
      b.scene.bvh = BuildBvh(positions, options);
      b.scene.wide = BuildWideBvh(positions, b.scene.bvh, options);
      b.buildMs = clock.Ms();
    } else {
      std::vector<double> buildMs, transferMs;
      for (int r = 0; r <= std::max(repeats, 1); ++r) {
        const BvhBuildReport report = b.fn(positions, options, b.scene.bvh, b.scene.wide);
        b.passes = report.iterations;
        if (r > 0) buildMs.push_back(report.buildMs), transferMs.push_back(report.transferMs);
      }
      b.buildMs = Median(buildMs), b.transferMs = Median(transferMs);
    }
    b.sah = WideSahCost(b.scene.wide);
  }
  TraceRaysOptions to;
  to.repeats = repeats;
  to.persistentRefill = base.persistentRefill;
  to.modeByCoherence = base.perRayCameraBounce;
  for (int k = 0; k < 2; ++k) {
    const std::vector<RayRecord> rays =
        MakeBenchmarkRays(data, k == 0 ? RayKind::kPrimary : RayKind::kDiffuse, base.width, base.height, 1, 0);
    for (Builder& b : builders)  // only the rate is kept: the hits' triangle numbers play no part (none given)
      b.rate[k] = static_cast<double>(rays.size()) / TraceRaysCuda(b.scene, TriangleNumbers{}, rays, to).medianSeconds;
  }
  std::printf("  BVH builders (no spatial splits on the GPU):\n");
  for (const Builder& b : builders) {
    char extra[96] = "";
    if (b.fn) {
      const std::string passes = b.passes > 0 ? ", " + std::to_string(b.passes) + " passes" : "";
      std::snprintf(extra, sizeof extra, "%s; + %.1f ms transfers and gathers", passes.c_str(), b.transferMs);
    }
    std::printf(
        "    %-32s build %9.2f ms (%8.2f M triangles/s%s); wide SAH cost %.2f; primary %.2f, diffuse %.2f G rays/s\n",
        b.label, b.buildMs, static_cast<double>(n) / (b.buildMs * 1e3), extra, b.sah, b.rate[0] / 1e9, b.rate[1] / 1e9);
  }
  std::printf("    H-PLOC builds %.2fx as fast as PLOC's passes\n", builders[1].buildMs / builders[0].buildMs);
  j.BeginObject("bvh_builders");
  for (const Builder& b : builders) {
    j.BeginObject(b.key);
    j.Field("build_ms", b.buildMs);
    j.Field("sah_cost", b.sah);
    j.Field("primary_rays_per_s", b.rate[0]);
    j.Field("diffuse_rays_per_s", b.rate[1]);
    j.EndObject();
  }
  j.EndObject();
}

}  // namespace tracer
