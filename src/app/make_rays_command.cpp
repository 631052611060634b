// @file make_rays_command.cpp: the --make-rays command: load the scene and build its BVH, make the traversal
// benchmark's rays (host/make_rays.h), write them as a ray file, and print one line saying what it holds.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "app/cli.h"
#include "scene_setup.h"
#include "tracer/host/make_rays.h"
#include "tracer/host/ray_file.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/scene_loader.h"
#include "tracer/host/timing.h"

namespace tracer {
namespace {

std::string Vec3Text(Vec3 v) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "(%g, %g, %g)", v.x, v.y, v.z);
  return buf;
}

int MakeRays(CliOptions& cli) {
  const int w = cli.render.width, h = cli.render.height;
  Stopwatch load;
  const Scene scene = LoadScene(cli.scenePath, SceneLoadOptions(cli));
  const BvhBuildOptions bvhOptions = SceneBvhOptions(cli, false);  // the generator traces the binary BVH
  const Stopwatch build;
  LoadClock clock;
  const SceneData data =
      BuildSceneData(scene, BenchmarkCamera(scene.boundsMin, scene.boundsMax, w, h), cli.env, bvhOptions);
  // The benchmark's camera, fixed by the bounds, unless --eye/--look-at (with --up) place another; --fov for either.
  // Unplaced, MakeBenchmarkRays makes the camera itself, as before the flags: the same bytes (see BenchmarkCamera).
  const bool placed = cli.explicitCamera || cli.haveFov;
  BenchmarkView view = cli.explicitCamera ? BenchmarkView{cli.eye, cli.lookAt, cli.up, kBenchmarkFovY}
                                          : BenchmarkViewOf(data.boundsMin, data.boundsMax);
  if (cli.haveFov) view.fovY = cli.fov;
  clock.build = build.Seconds();
  if (cli.Details()) std::fprintf(stderr, "%s\n", scene.Summary().c_str());
  clock.total = load.Seconds();
  ReportBuilt(cli, scene, data, clock);

  const RayKind kind = cli.makeRaysKind;
  const std::vector<RayRecord> rays =
      MakeBenchmarkRays(data, kind, w, h, cli.render.seed, cli.render.threads, placed ? &view : nullptr);
  if (rays.empty()) {  // a ray file may not be empty
    std::cerr << "tracer: error: " << cli.makeRaysPath << ": no primary ray of the " << w << "x" << h << " "
              << (cli.explicitCamera ? "--eye/--look-at" : "benchmark") << " camera hits the scene, so there are no "
              << RayKindName(kind) << " rays to write\n";
    return 1;
  }
  WriteRayFile(cli.makeRaysPath, rays);

  const long long pixels = static_cast<long long>(w) * h;
  std::string what;
  if (kind == RayKind::kPrimary) {
    what = "one per pixel centre, tmax inf";
  } else {
    const long long hits = static_cast<long long>(rays.size()) / kBenchmarkRaysPerHit;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%d from each of the %lld primary hits of %lld pixels, seed %u, tmax %g",
                  kBenchmarkRaysPerHit, hits, pixels, cli.render.seed, static_cast<double>(rays.front().tmax));
    what = buf;
  }
  std::printf("wrote %zu %s rays (%s) to %s; camera %dx%d: eye %s, target %s, up %s, vertical fov %g\n", rays.size(),
              RayKindName(kind), what.c_str(), cli.makeRaysPath.c_str(), w, h, Vec3Text(view.eye).c_str(),
              Vec3Text(view.target).c_str(), Vec3Text(view.up).c_str(), static_cast<double>(view.fovY));
  return 0;
}

}  // namespace

int RunMakeRaysCommand(CliOptions& options) { return ReportingErrors(MakeRays, options); }

}  // namespace tracer
