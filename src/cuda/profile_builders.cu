// @file profile_builders.cu: the BVH builders side by side in --profile and --benchmark (profile_builders.h).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "profile_builders.h"
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
  std::printf("  BVH builders:\n");
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
