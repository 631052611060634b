// @file trace_command.cpp: the --trace-rays command: read the ray file, load the scene and build its BVH, trace
// the rays on the chosen backend, write the hit file, and print the traversal rate and hit counts.
#include <cstdio>
#include <string>
#include <vector>

#include "app/cli.h"
#include "scene_setup.h"
#include "select_backend.h"
#include "tracer/host/ray_file.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/scene_loader.h"
#include "tracer/host/timing.h"
#include "tracer/host/trace_rays.h"

namespace tracer {
namespace {

int TraceRays(CliOptions& cli) {
  BackendChoice backend;
  if (int code = SelectBackend(cli.backend, false, backend, !cli.render.quiet); code != kContinue) return code;
  // The ray file first: a bad one is reported without waiting for the BVH.
  const std::vector<RayRecord> rays = ReadRayFile(cli.traceRaysPath);
  Stopwatch load;
  const Scene scene = LoadScene(cli.scenePath, SceneLoadOptions(cli));
  // The camera plays no part in tracing given rays; BuildSceneData wants one.
  const Camera camera = Camera::LookAt(Vec3(0.0f, 0.0f, 1.0f), Vec3(0.0f), Vec3(0.0f, 1.0f, 0.0f), 45.0f, 1, 1);
  const BvhBuildOptions bvhOptions =
      SceneBvhOptions(cli, !cli.render.binaryBvh, ChooseBvhBuilder(cli.bvhBuilder, backend));
  const Stopwatch build;
  LoadClock clock;
  const SceneData data = BuildSceneData(scene, camera, cli.env, bvhOptions);
  clock.build = build.Seconds();
  if (cli.Details()) std::fprintf(stderr, "%s\n", scene.Summary().c_str());
  clock.total = load.Seconds();
  ReportBuilt(cli, scene, data, clock);

  TraceRaysOptions options;
  options.anyHit = cli.anyHit;
  options.binaryBvh = cli.render.binaryBvh;
  options.persistentRefill = cli.render.persistentRefill;
  options.modeByCoherence = cli.render.perRayCameraBounce;
  options.repeats = cli.repeats;
  options.threads = cli.render.threads;
  const TraceRaysResult result = TraceRaysOnSelectedBackend(backend, data, scene.triangleNumbers, rays, options);
  if (result.invalidCount > 0)
    std::fprintf(stderr,
                 "tracer: warning: %s: %lld rays with a NaN or infinite origin or direction, a zero direction or a NaN "
                 "tmax were not traced; they count as misses (t = inf, triangle -1)\n",
                 cli.traceRaysPath.c_str(), result.invalidCount);
  if (!cli.hitsPath.empty()) WriteHitFile(cli.hitsPath, result.hits);

  const double n = static_cast<double>(rays.size());
  std::printf(
      "traced %zu rays on %s (%s hit): %.2f M rays/s, %.3f ms (median of %d after one warm-up, traversal "
      "only)\nhits %lld, misses %lld (%lld invalid)\n",
      rays.size(), result.device.c_str(), cli.anyHit ? "any" : "closest",
      n / (result.medianSeconds > 0.0 ? result.medianSeconds : 1e-12) / 1e6, result.medianSeconds * 1e3, cli.repeats,
      result.hitCount, result.missCount, result.invalidCount);
  if (!cli.hitsPath.empty()) std::printf("wrote %s\n", cli.hitsPath.c_str());
  return 0;
}

}  // namespace

int RunTraceRaysCommand(CliOptions& options) { return ReportingErrors(TraceRays, options); }

}  // namespace tracer
