// @file loaded_scene.cpp: see loaded_scene.h.
#include "app/loaded_scene.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <utility>
#include <vector>

#include "app/camera_choice.h"
#include "app/scene_setup.h"
#include "tracer/host/env_map.h"
#include "tracer/host/tile_guide.h"
#include "tracer/host/timing.h"

namespace tracer {
namespace {

// Without a line number, a warning repeated at many lines ("path:12: ...", "path:40: ...") is one text.
std::string WithoutLineNumber(const std::string& warning) {
  const size_t colon = warning.find(':');
  if (colon == std::string::npos) return warning;
  size_t end = colon + 1;
  while (end < warning.size() && std::isdigit(static_cast<unsigned char>(warning[end]))) ++end;
  if (end == colon + 1 || end >= warning.size() || warning[end] != ':') return warning;
  return warning.substr(0, colon) + warning.substr(end);
}

// The loader's warnings, each text once, at its first line, with the number of other lines that repeat it.
void PrintWarnings(const std::vector<std::string>& warnings) {
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::string, size_t>> seen;  // text without line -> (first warning, repeats)
  for (const std::string& w : warnings) {
    auto [it, isNew] = seen.emplace(WithoutLineNumber(w), std::make_pair(w, size_t(0)));
    if (isNew)
      order.push_back(it->first);
    else
      it->second.second++;
  }
  for (const std::string& key : order) {
    const auto& [first, repeats] = seen[key];
    std::cerr << "tracer: warning: " << first;
    if (repeats) std::cerr << " (and " << repeats << " more like it)";
    std::cerr << "\n";
  }
}

// The loader's warnings, and that nothing lights the scene where neither it nor --env/--env-map does (whether an
// environment can reach the camera is probed after the build).
std::vector<std::string> WarningsThatApply(const CliOptions& cli, const Scene& scene) {
  std::vector<std::string> warnings = scene.warnings;
  if (!scene.HasLight() && cli.envMapPath.empty() && IsBlack(cli.env)) warnings.push_back(NoLightWarning(scene));
  return warnings;
}

// The constant environment: --env, else the scene file's own constant one (pbrt-v4's "infinite" light with "L").
Vec3 SceneEnvColor(const CliOptions& cli, const Scene& scene) {
  const SceneEnvironment& env = scene.environment;
  return !cli.envGiven && env.present && env.width == 0 ? env.color : cli.env;
}

// What the portals (core/portals.h) can and cannot do in this render, once the environment is known: portals without
// an environment light nothing, --env-sampling portals asked for on a scene without them samples as importance, and
// --env-portal-mix auto under a sun-dominated map gives them no samples.
void WarnAboutPortals(const CliOptions& cli, const Scene& scene, const SceneData& data) {
  if (cli.render.quiet) return;
  const size_t portals = scene.portals.size() / 3;
  if (portals > 0 && !(data.env.params.pick > 0.0f))
    std::fprintf(stderr,
                 "tracer: warning: %s: %zu portal triangles but no environment (--env R,G,B or --env-map FILE): "
                 "portals only guide the sampling of the environment, so they do nothing here\n",
                 scene.path.c_str(), portals);
  if (portals == 0 && cli.envSamplingGiven && cli.render.envSampling == EnvSampling::kPortals)
    std::fprintf(stderr,
                 "tracer: warning: --env-sampling portals: %s has no portals (OBJ objects or groups named portal..., "
                 "pbrt's infinite light's \"portal\"); the environment is sampled as by importance\n",
                 scene.path.c_str());
  const RenderOptions& o = cli.render;
  if (portals > 0 && data.env.params.pick > 0.0f && o.envSampling == EnvSampling::kPortals && o.envPortalMix < 0.0f &&
      data.env.params.portalMix == 0.0f)
    std::fprintf(
        stderr,
        "tracer: note: the environment map's brightest texels hold most of its power (a sun): --env-portal-mix "
        "auto gives the portals no samples, as every share measured noisier there; --env-portal-mix A uses "
        "them\n");
}

}  // namespace

LoadedScene LoadAndBuild(const CliOptions& cli, bool buildClusters, BvhBuilderFn builder) {
  const Stopwatch loadClock;
  LoadedScene loaded;
  // The environment map first: a bad one fails before the scene's (longer) load and BVH build.
  const EnvImage envMap = cli.envMapPath.empty() ? EnvImage{} : ReadEnvImage(cli.envMapPath);
  // Any image reads as lat-long; one that is not 2:1 (a cube map's cross, a mirror ball) looks stretched or wrong.
  if (!cli.envMapPath.empty() && !cli.render.quiet &&
      std::abs(envMap.width - 2 * envMap.height) > std::max(1, envMap.width / 100))
    std::fprintf(stderr,
                 "tracer: warning: %s is %dx%d texels, but a lat-long environment map is 2:1 (width twice the height); "
                 "it is read as lat-long and will look stretched (cube maps and mirror balls are not supported)\n",
                 cli.envMapPath.c_str(), envMap.width, envMap.height);
  loaded.scene = LoadScene(cli.scenePath, SceneLoadOptions(cli));
  CameraChoice camera = ChooseCamera(cli, loaded.scene);
  // A scene file's field of view belongs to its image's shorter axis (pbrt-v4): at another size it is turned into
  // the vertical one again.
  const SceneDefaults& defaults = loaded.scene.defaults;
  if (!cli.haveFov && !cli.explicitCamera && loaded.scene.camera.valid && defaults.fovShorterAxis > 0.0f)
    camera.spec.fovY = FovYForShorterAxis(defaults.fovShorterAxis, cli.render.width, cli.render.height);
  if (!cli.render.quiet) PrintWarnings(WarningsThatApply(cli, loaded.scene));
  if (cli.Details()) {
    for (const std::string& note : loaded.scene.notes) std::cerr << "tracer: note: " << note << "\n";
    std::cerr << loaded.scene.Summary() << "\n";
    PrintBoundsAndCamera(loaded.scene, camera);
  }
  const CameraSpec& c = camera.spec;
  // --profile and --benchmark measure both BVHs; a render builds the one it traverses (the binary one always:
  // it fixes the triangle order, and the tile guide traces it).
  const BvhBuildOptions bvhOptions =
      SceneBvhOptions(cli, !cli.render.binaryBvh || cli.command != CliCommand::kRender, builder);
  LoadClock clock;
  Stopwatch part;
  loaded.data = BuildSceneData(
      loaded.scene,
      Camera::LookAt(c.eye, c.lookAt, c.up, c.fovY, cli.render.width, cli.render.height, c.aperture, c.focusDistance),
      SceneEnvColor(cli, loaded.scene), bvhOptions);
  if (!cli.envMapPath.empty()) SetEnvironmentMap(loaded.data, envMap, cli.envScale, cli.envRotate);
  const SceneEnvironment& sceneEnv = loaded.scene.environment;
  if (!cli.envGiven && sceneEnv.present && sceneEnv.width > 0)
    SetEnvironmentMap(loaded.data, EnvImage{sceneEnv.width, sceneEnv.height, sceneEnv.rgb}, 1.0f, 0.0f);
  clock.build = part.Seconds();
  WarnAboutPortals(cli, loaded.scene, loaded.data);
  part.Restart();
  if (buildClusters) BuildLightClusters(loaded.data, cli.render.lightClusters);
  clock.clusters = part.Seconds();
  clock.total = loadClock.Seconds();
  loaded.loadSeconds = clock.total;
  ReportBuilt(cli, loaded.scene, loaded.data, clock);
  if (cli.command == CliCommand::kRender && !cli.render.quiet) {
    loaded.camera = DiagnoseCamera(cli, loaded.scene, loaded.data, c);
    WarnAboutTheCamera(cli, loaded.camera);
  }
  return loaded;
}

}  // namespace tracer
