// @file commands.cpp: the render and profile commands: camera, signals, resume and checkpoints, progress bar,
// summary and exit codes.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/cli.h"
#include "scene_setup.h"
#include "select_backend.h"
#include "tracer/host/aov.h"
#include "tracer/host/camera_probe.h"
#include "tracer/host/checkpoint.h"
#include "tracer/host/env_map.h"
#include "tracer/host/image_io.h"
#include "tracer/host/job.h"
#include "tracer/host/profile.h"
#include "tracer/host/ray_dump.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/scene_loader.h"
#include "tracer/host/tile_guide.h"
#include "tracer/host/timing.h"
#include "tracer/host/version.h"

namespace tracer {
namespace {

volatile std::sig_atomic_t gSignal = 0;
void OnSignal(int sig) {
  if (gSignal != 0) std::_Exit(128 + sig);  // a second signal: stop at once
  gSignal = sig;
}

// ---- loading ------------------------------------------------------------------------------------------------
// Frames the scene's bounding sphere in the vertical field of view, looking down -z.
CameraSpec FramedCamera(const Scene& scene, float fovY, int w, int h) {
  Vec3 c = (scene.boundsMin + scene.boundsMax) * 0.5f;
  float r = 0.5f * Length(scene.boundsMax - scene.boundsMin);
  float half = 0.5f * fovY * kPi / 180.0f;
  if (w < h) half = std::atan(std::tan(half) * static_cast<float>(w) / static_cast<float>(h));
  float dist = r / std::sin(half) * 1.05f;
  CameraSpec spec;
  spec.eye = c + Vec3(0.0f, 0.0f, dist);
  spec.lookAt = c;
  spec.fovY = fovY;
  return spec;
}

// The camera used and where it came from (printed, so that a framed camera can be kept in a file).
struct CameraChoice {
  CameraSpec spec;
  const char* source;
};

// --eye/--look-at, else SCENE.camera, else framed on the bounds; --fov overrides the field of view of each.
CameraChoice ChooseCamera(const CliOptions& cli, const Scene& scene) {
  const int w = cli.render.width, h = cli.render.height;
  CameraChoice choice;
  if (cli.explicitCamera) {
    choice.spec.eye = cli.eye;
    choice.spec.lookAt = cli.lookAt;
    choice.spec.up = cli.up;
    choice.spec.fovY = 45.0f;
    choice.source = "--eye/--look-at";
  } else if (scene.camera.valid) {
    choice.spec = scene.camera;
    choice.source = "the scene's .camera file";
  } else {
    choice.spec = FramedCamera(scene, cli.haveFov ? cli.fov : 45.0f, w, h);
    choice.source = "framed on the scene's bounds";
  }
  if (cli.haveFov) choice.spec.fovY = cli.fov;
  if (cli.aperture >= 0.0f) choice.spec.aperture = cli.aperture;
  if (cli.focusDistance > 0.0f) choice.spec.focusDistance = cli.focusDistance;
  return choice;
}

// The shortest decimal that reads back as the same float, so the printed camera reproduces the image.
std::string ShortFloat(float v) {
  char buf[32];
  for (int precision = 6; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return buf;
}

std::string CameraLine(const char* key, Vec3 v) {
  return std::string(key) + " " + ShortFloat(v.x) + " " + ShortFloat(v.y) + " " + ShortFloat(v.z) + "\n";
}

// The bounds and the camera as .camera-file lines (the format LoadCameraFile reads), ready to copy.
void PrintBoundsAndCamera(const Scene& scene, const CameraChoice& camera) {
  const CameraSpec& c = camera.spec;
  std::cerr << "scene bounds: min " << ShortFloat(scene.boundsMin.x) << "," << ShortFloat(scene.boundsMin.y) << ","
            << ShortFloat(scene.boundsMin.z) << " max " << ShortFloat(scene.boundsMax.x) << ","
            << ShortFloat(scene.boundsMax.y) << "," << ShortFloat(scene.boundsMax.z) << "\n"
            << "camera (" << camera.source << "; these lines make a .camera file):\n"
            << CameraLine("eye", c.eye) << CameraLine("look_at", c.lookAt) << CameraLine("up", c.up) << "fov "
            << ShortFloat(c.fovY) << "\n";
  if (c.aperture > 0.0f) {
    std::cerr << "aperture " << ShortFloat(c.aperture) << "\n";
    if (c.focusDistance > 0.0f) std::cerr << "focus_distance " << ShortFloat(c.focusDistance) << "\n";
  }
}

// A camera at the centre of the bounds, looking the way `camera` looks: the view from inside a room, as flags.
std::string InteriorCameraFlags(const Scene& scene, const CameraSpec& camera) {
  const Vec3 centre = (scene.boundsMin + scene.boundsMax) * 0.5f;
  const Vec3 target =
      centre + Normalize(camera.lookAt - camera.eye) * (0.5f * Length(scene.boundsMax - scene.boundsMin));
  auto flag = [](const char* name, Vec3 v) {
    return std::string(name) + " " + ShortFloat(v.x) + "," + ShortFloat(v.y) + "," + ShortFloat(v.z);
  };
  return flag("--eye", centre) + " " + flag("--look-at", target);
}

// Before rendering: when most primary rays see back faces, the camera is most likely outside a closed room.
void WarnAboutBackFaces(const SceneData& data, const std::string& interiorFlags) {
  const PrimaryRayProbe probe = ProbePrimaryRays(data);
  if (!MostlyBackFaces(probe)) return;
  std::fprintf(stderr,
               "tracer: warning: %d of the %d primary rays that hit the scene (of %d traced) see the back of a "
               "triangle: the camera is most likely outside a closed room or inside an object, and the image may be "
               "dark. To look from inside, try %s\n",
               probe.backFaces, probe.hits, probe.rays, interiorFlags.c_str());
}

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

struct LoadedScene {
  Scene scene;                // as loaded: the checkpoint hashes it
  SceneData data;             // what the backends render
  std::string interiorFlags;  // a camera from inside the bounds (InteriorCameraFlags), for the warnings
  double loadSeconds = 0.0;   // loading and building, as "loaded and built the BVH in" says
};

// Loads the scene, builds the BVH with `builder` (ChooseBvhBuilder's; null: on the host) (and the emitter clusters
// when tile guiding may need them) and says so.
LoadedScene LoadAndBuild(const CliOptions& cli, bool buildClusters, BvhBuilderFn builder) {
  const Stopwatch loadClock;
  LoadedScene loaded;
  // The environment map first: a bad one fails before the scene's (longer) load and BVH build.
  const EnvImage envMap = cli.envMapPath.empty() ? EnvImage{} : ReadEnvImage(cli.envMapPath);
  loaded.scene = LoadScene(cli.scenePath, SceneLoadOptions(cli));
  const CameraChoice camera = ChooseCamera(cli, loaded.scene);
  if (!cli.render.quiet) {
    PrintWarnings(loaded.scene.warnings);
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
      cli.env, bvhOptions);
  if (!cli.envMapPath.empty()) SetEnvironmentMap(loaded.data, envMap, cli.envScale, cli.envRotate);
  clock.build = part.Seconds();
  part.Restart();
  if (buildClusters) BuildLightClusters(loaded.data, cli.render.lightClusters);
  clock.clusters = part.Seconds();
  clock.total = loadClock.Seconds();
  loaded.loadSeconds = clock.total;
  ReportBuilt(cli, loaded.scene, loaded.data, clock);
  loaded.interiorFlags = InteriorCameraFlags(loaded.scene, c);
  if (cli.command == CliCommand::kRender && !cli.render.quiet) WarnAboutBackFaces(loaded.data, loaded.interiorFlags);
  return loaded;
}

// ---- resume and checkpoints ---------------------------------------------------------------------------------
// Points the render at the resumed film when the checkpoint was made with the same settings. Returns
// kContinue, or 2 (a usage error) when it was not.
int UseResumedFilm(const CliOptions& cli, const Checkpoint& resumed, const std::string& settings, RenderOptions& opt) {
  std::string diff = DescribeSettingsMismatch(resumed.settings, settings);
  if (!diff.empty() || resumed.film.width != opt.width || resumed.film.height != opt.height) {
    std::cerr << "tracer: usage error: --resume " << cli.resumePath
              << ": the checkpoint was rendered with different settings: " << (diff.empty() ? "image size" : diff)
              << "\n";
    return 2;
  }
  opt.resume = &resumed.film;
  if (resumed.film.sppDone >= opt.spp)
    std::fprintf(stderr, "tracer: %s already holds %d spp (--spp %d); writing it as it is\n", cli.resumePath.c_str(),
                 resumed.film.sppDone, opt.spp);
  else if (!opt.quiet)
    std::fprintf(stderr, "resuming %s at %d of %d spp\n", cli.resumePath.c_str(), resumed.film.sppDone, opt.spp);
  return kContinue;
}

// A failed periodic save must not end a render that may have hours left: warn (once, unless quiet) and go on.
CheckpointFn PeriodicCheckpoint(const std::string& path, uint32_t seed, const std::string& settings, bool quiet) {
  auto failures = std::make_shared<int>(0);  // shared by every copy the driver may make of the callback
  return [path, seed, settings, failures, quiet](const HostFilm& film) {
    try {
      SaveCheckpoint(path, film, seed, settings);
    } catch (const std::exception& e) {
      if ((*failures)++ == 0 && !quiet) std::fprintf(stderr, "\ntracer: warning: %s\n", e.what());
    }
  };
}

// ---- progress and summary -----------------------------------------------------------------------------------
std::string FormatDuration(double s) {
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%.0fs", s);
  else
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return buf;
}

// Draws the bar when showBar, and stops the render at the next pass boundary after a signal. Rates and the
// ETA count only this run's samples (from startSpp on), not those a resumed checkpoint brought along.
ProgressFn ProgressBar(bool showBar, int startSpp) {
  return [showBar, startSpp](int done, int total, const RenderStats& st) {
    if (showBar) {
      double rays = static_cast<double>(st.extensionRays + st.shadowRays);
      double eta = done > startSpp ? st.seconds * (total - done) / (done - startSpp) : 0.0;
      int width = 30, filled = static_cast<int>(width * static_cast<double>(done) / total);
      std::fprintf(stderr, "\r[%s%s] %d/%d spp  %.1f Mrays/s  ETA %s   ", std::string(filled, '#').c_str(),
                   std::string(width - filled, '.').c_str(), done, total, rays / std::max(st.seconds, 1e-9) / 1e6,
                   FormatDuration(eta).c_str());
      std::fflush(stderr);
    }
    return gSignal == 0;
  };
}

// Empty when the render found no non-finite sample; else the message naming its pixel and depth.
std::string NonFiniteReport(const RenderResult& result) {
  const NonFiniteSample& nf = result.firstNonFinite;
  if (!nf.found) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, "non-finite sample at pixel (%u, %u), path depth %u",
                nf.pixel % static_cast<uint32_t>(result.width), nf.pixel / static_cast<uint32_t>(result.width),
                nf.depth);
  return buf;
}

// Where a render's time to image went.
struct RenderTimes {
  const Stopwatch* command = nullptr;  // started with the render command
  double load = 0.0;                   // loading and building (LoadedScene::loadSeconds)
  // > 0: the time from the end of the build to the film on the host (the renderer's set-up and the scene's upload
  // included), which an MPI job's summary gives for the whole job instead.
  double frame = 0.0;
  double write = 0.0;  // the image file (and the AOV files beside it)
};

// The summary after the image was written; with times.frame > 0 (one process), also where the time went.
void PrintSummary(const CliOptions& cli, const RenderResult& result, int startSpp, bool checkpointSaved,
                  const RenderTimes& times) {
  const double frameSeconds = times.frame;
  const RenderStats& st = result.stats;
  const double pixels = static_cast<double>(result.width) * result.height;
  double samples = pixels * std::max(0, result.sppDone - startSpp);
  if (!result.film.pixelSpp.empty()) {  // adaptive sampling
    samples = 0.0;
    for (uint32_t n : result.film.pixelSpp) samples += n;
    std::fprintf(
        stderr, "adaptive sampling: %.1f spp on average (from %d to %d), %.1f%% of a uniform render's %d spp%s\n",
        samples / pixels, *std::min_element(result.film.pixelSpp.begin(), result.film.pixelSpp.end()), result.sppDone,
        100.0 * samples / (pixels * cli.render.spp), cli.render.spp, result.converged ? "; every pixel converged" : "");
  }
  std::string notes = startSpp > 0 ? " (" + std::to_string(startSpp) + " from the checkpoint)" : "";
  char frame[160] = "";
  if (frameSeconds > 0.0)
    std::snprintf(frame, sizeof frame, " (%.2fs from the end of the build; set-up %.3fs, path pool and film %.3fs)",
                  frameSeconds, st.setupSeconds, st.allocateSeconds);
  std::fprintf(stderr,
               "rendered on %s: %d spp%s in %.2fs%s, %.2f M samples/s, %.1f M rays/s (%.1f M extension, %.1f M "
               "shadow)\n",
               result.backend.c_str(), result.sppDone, notes.c_str(), st.seconds, frame, samples / st.seconds / 1e6,
               (st.extensionRays + st.shadowRays) / st.seconds / 1e6, st.extensionRays / st.seconds / 1e6,
               st.shadowRays / st.seconds / 1e6);
  std::fprintf(stderr, "wrote %s in %.2fs\n", cli.outPath.c_str(), times.write);
  if (frameSeconds > 0.0 && times.command) {
    const double total = times.command->Seconds();
    const double parts = times.load + frameSeconds + times.write;  // (the frame holds the set-up ... the resolve)
    std::fprintf(stderr,
                 "time to image %.2fs: loading and BVH build %.2fs, set-up %.3fs, path pool and film %.3fs, render "
                 "%.2fs (final film readback %.3fs), resolve %.3fs, write %.2fs, the rest %.2fs (start-up, GPU "
                 "context, AOVs)\n",
                 total, times.load, st.setupSeconds, st.allocateSeconds, st.seconds, st.readbackSeconds,
                 st.resolveSeconds, times.write, std::max(0.0, total - parts));
  }
  if (checkpointSaved)
    std::fprintf(stderr, "saved checkpoint %s (%d spp)\n", cli.checkpointPath.c_str(), result.sppDone);
}

// After the render: refuse a NaN or empty result, save the final checkpoint, write the image, report, and map
// what happened to the exit code (1 error, 128 + signal when `signal` interrupted the render, else 0).
int FinishRender(const CliOptions& cli, const RenderResult& result, const std::string& settings, int startSpp,
                 int signal, RenderTimes times, const std::string& interiorFlags, const AovImages& aov) {
  const RenderOptions& opt = cli.render;
  if (cli.checkNan) {
    std::string nf = NonFiniteReport(result);
    if (!nf.empty()) {
      std::cerr << "tracer: error: --check-nan: " << nf << "; no image written\n";
      return 1;
    }
  }
  if (result.sppDone <= 0) {
    std::cerr << "tracer: interrupted before the first pass finished; no image written\n";
    return signal ? 128 + signal : 1;
  }
  // The checkpoint first: it can reproduce the image, the image cannot reproduce it.
  std::string checkpointError;
  if (!cli.checkpointPath.empty()) {
    try {
      SaveCheckpoint(cli.checkpointPath, result.film, opt.seed, settings);
    } catch (const std::exception& e) {
      checkpointError = e.what();
    }
  }
  ImageExtras extras;  // (EXR keeps them: what the image is, and how it was made)
  extras.half = cli.exrHalf;
  extras.attributes = {{"tracer:version", VersionString()},
                       {"tracer:scene", cli.scenePath},
                       {"tracer:spp", std::to_string(result.sppDone)},
                       {"tracer:backend", result.backend},
                       {"tracer:settings", settings}};
  // --aov: layers of an .exr, else PFM files beside the image (1-channel depth as grey RGB), written before it, so
  // that a failure among them leaves no new image behind.
  const Stopwatch writeClock;
  const std::vector<ImageLayer> layers = AovLayers(aov, cli.aovKinds);
  const bool exr = FormatFromPath(cli.outPath) == ImageFormat::kExr;
  if (exr) extras.layers = layers;
  if (!exr)
    for (const ImageLayer& layer : layers) {
      std::vector<float> rgb(static_cast<size_t>(result.width) * result.height * 3);
      const size_t n = layer.channels.size();
      for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = (*layer.values)[(i / 3) * n + (n == 3 ? i % 3 : 0)];
      const std::string path = AovSiblingPath(cli.outPath, layer.name);
      WriteImage(path, rgb, result.width, result.height);
      if (!opt.quiet) std::fprintf(stderr, "wrote %s\n", path.c_str());
    }
  WriteImage(cli.outPath, result.rgb, result.width, result.height, cli.exposure, extras);
  times.write = writeClock.Seconds();
  if ((cli.aovKinds & kAovVariance) && result.varianceBatches < 2 && !opt.quiet)
    std::fprintf(stderr,
                 "tracer: warning: --aov variance needs at least 2 passes; this render had %d, so the variance is "
                 "written as 0 (raise --spp, or --time if it stopped the render)\n",
                 result.varianceBatches);
  if (!opt.quiet) PrintSummary(cli, result, startSpp, !cli.checkpointPath.empty() && checkpointError.empty(), times);
  if (!opt.quiet && std::all_of(result.rgb.begin(), result.rgb.end(), [](float v) { return v == 0.0f; }))
    std::fprintf(stderr,
                 "tracer: warning: the image is entirely black: no pixel received any light. Check the camera printed "
                 "above: an interior needs a camera inside it, such as %s; a scene without emitters needs --env "
                 "R,G,B or --env-map FILE.hdr\n",
                 interiorFlags.c_str());
  if (result.stats.droppedSamples && !opt.quiet)
    std::fprintf(stderr, "tracer: warning: %llu non-finite samples were dropped\n",
                 static_cast<unsigned long long>(result.stats.droppedSamples));
  if (!checkpointError.empty()) {
    std::cerr << "tracer: error: " << checkpointError << "\n";
    return 1;
  }
  if (signal) {
    std::fprintf(stderr, "tracer: interrupted at %d of %d spp; wrote the image so far to %s%s%s\n", result.sppDone,
                 opt.spp, cli.outPath.c_str(), cli.checkpointPath.empty() ? "" : " and the checkpoint to ",
                 cli.checkpointPath.c_str());
    return 128 + signal;
  }
  if (result.sppDone < opt.spp && !result.converged && !opt.quiet)
    std::fprintf(stderr, "stopped by --time after %d of %d spp\n", result.sppDone, opt.spp);
  return 0;
}

// Alone, or as a rank of an MPI job (job.h): rank 0 reads the checkpoint and the scene, builds, prints and writes;
// every rank renders the passes the job's schedule gives it.
int Render(CliOptions& cli, Job& job) {
  const Stopwatch commandClock;
  BackendChoice backend;
  if (int code = job.Agree(SelectBackend(cli.backend, false, backend, job.IsRoot())); code != kContinue) return code;
  if (job.Ranks() > 1) {
    backend.rankDevice = job.LocalRank();
    PrepareRankDevice(backend);  // while rank 0 loads, so that a rank renders as soon as it has the scene
  }
  RenderOptions& opt = cli.render;
  if (!cli.sppGiven) opt.spp = backend.DefaultSpp();
  if (opt.adaptiveThreshold > 0.0f && opt.spp <= opt.adaptiveMinSpp) {
    if (job.IsRoot())
      std::cerr << "tracer: error: --adaptive stops pixels only after --adaptive-min-spp " << opt.adaptiveMinSpp
                << " samples, and --spp is " << opt.spp << (cli.sppGiven ? "" : " (this backend's default)")
                << ": raise --spp or lower --adaptive-min-spp\n";
    return job.FinalCode(2);
  }
  if (((cli.aovKinds & kAovVariance) || opt.adaptiveThreshold > 0.0f) && job.Ranks() > 1) {
    if (job.IsRoot())
      std::cerr << "tracer: error: " << (opt.adaptiveThreshold > 0.0f ? "--adaptive" : "--aov variance")
                << " is not available under mpirun (each rank sees only its own passes); render it with one "
                   "process\n";
    return job.FinalCode(2);
  }
  job.PrepareFilm(opt.width, opt.height);  // (collective: before the ranks part, rank 0 to load, the others to wait)
  if (job.Ranks() > 1 && !job.IsRoot()) PrepareRankRenderer(backend, opt);  // (rank 0 loads meanwhile)

  // Signals from here on finish the current pass instead of killing the process; during loading
  // they stop it once loading returns (a second signal still exits at once).
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);

  Checkpoint resumed;
  LoadedScene loaded;
  std::string settings;  // what must match a checkpoint
  // A rank rendering on a GPU prepared before the scene came (PrepareRankRenderer) may copy it from rank 0's GPU;
  // the tile guide and --dump-rays need the host's arrays.
  const bool deviceScene = job.Ranks() > 1 && backend.useCuda && (job.IsRoot() || backend.prepared != nullptr) &&
                           opt.lightSampling != LightSampling::kTiles && cli.dumpRaysDir.empty();
  const int loadCode = job.ShareScene(
      [&] {
        // Read the checkpoint before the scene: a bad file is reported without waiting for a BVH build.
        if (!cli.resumePath.empty()) resumed = LoadCheckpoint(cli.resumePath);
        loaded =
            LoadAndBuild(cli, opt.lightSampling == LightSampling::kTiles, ChooseBvhBuilder(cli.bvhBuilder, backend));
        if (gSignal) {
          std::fprintf(stderr, "tracer: interrupted while loading; nothing written\n");
          return 128 + gSignal;
        }
        // The settings hash every scene array (SceneContentHash, one thread: about 3 s of the 50M-triangle terrain's
        // 10.5 s to its image), so they are made only where used: --resume, --checkpoint and .exr's header.
        if (!cli.resumePath.empty() || !cli.checkpointPath.empty() || FormatFromPath(cli.outPath) == ImageFormat::kExr)
          settings = CheckpointSettings(cli.scenePath, loaded.data, opt);
        return cli.resumePath.empty() ? kContinue : UseResumedFilm(cli, resumed, settings, opt);
      },
      loaded.data, deviceScene);
  if (loadCode != kContinue) return loadCode;
  const Stopwatch frameClock;

  // Long renders: the resumed film (above) and regular saves, on the rank that writes.
  if (job.IsRoot() && !cli.checkpointPath.empty())
    opt.checkpoint = PeriodicCheckpoint(cli.checkpointPath, opt.seed, settings, opt.quiet);
  opt.checkNan = cli.checkNan;
  const int startSpp = opt.resume ? opt.resume->sppDone : 0;

  const bool showBar = job.IsRoot() && !opt.quiet && isatty(STDERR_FILENO);
  std::unique_ptr<PassSchedule> schedule =
      job.MakeSchedule(opt, ProgressBar(showBar, startSpp), [] { return static_cast<int>(gSignal); });
  RenderResult result;
  try {
    result =
        cli.dumpRaysDir.empty()
            ? RenderOnSelectedBackend(backend, loaded.data, opt, ProgressBar(showBar, startSpp), schedule.get(), &job)
            : RenderCpuDumpingRays(loaded.data, opt, cli.dumpRaysDir, ProgressBar(showBar, startSpp));
  } catch (const std::exception& e) {
    // A rank that took rank 0's device scene still receives `loaded.data` on a thread: the job ends here, before
    // unwinding frees it (as ReportingErrors would end it).
    if (job.Ranks() > 1) job.Abort(e.what());
    throw;
  }
  const double frameSeconds = schedule ? 0.0 : frameClock.Seconds();  // (an MPI job's is in job.Report)
  job.SceneSent();                                                    // (rank 0 rendered while it sent the scene)
  if (showBar) std::fprintf(stderr, "\n");
  if (!job.IsRoot()) return job.FinalCode(kContinue);                         // rank 0's code
  if (schedule) result.backend = std::to_string(job.Ranks()) + " MPI ranks";  // each rank's is in job.Report
  const Stopwatch writeClock;
  AovImages aov;
  if (cli.aovKinds && result.sppDone > 0) {
    ComputeFirstHitAovsOnSelectedBackend(backend, loaded.data, opt, cli.aovKinds, cli.aovSamples, aov);
    aov.variance = result.variance;
    if (cli.aovKinds & kAovSamples) {
      const std::vector<uint32_t>& n = result.film.pixelSpp;
      aov.samples.assign(static_cast<size_t>(result.width) * result.height, static_cast<float>(result.sppDone));
      for (size_t p = 0; p < n.size(); ++p) aov.samples[p] = static_cast<float>(n[p]);
    }
  }
  RenderTimes times;
  times.command = &commandClock;
  times.load = loaded.loadSeconds;
  times.frame = frameSeconds;
  const int code = FinishRender(cli, result, settings, startSpp, schedule ? job.Signal() : gSignal, times,
                                loaded.interiorFlags, aov);
  job.Report(writeClock.Seconds());
  return job.FinalCode(code);
}

// The report of rank r > 0 of an MPI job: report.json -> report.rank<r>.json.
std::string RankReportPath(const std::string& path, const Job& job) {
  if (job.Rank() == 0) return path;
  const size_t dot = path.find_last_of('.'), slash = path.find_last_of('/');
  const size_t at = dot != std::string::npos && (slash == std::string::npos || dot > slash) ? dot : path.size();
  return path.substr(0, at) + ".rank" + std::to_string(job.Rank()) + path.substr(at);
}

int Profile(CliOptions& cli, Job& job) {
  BackendChoice backend;
  if (int code = job.Agree(SelectBackend(cli.backend, true, backend, job.IsRoot())); code != kContinue) return code;
  if (job.Ranks() > 1) backend.rankDevice = job.LocalRank();
  RenderOptions& opt = cli.render;
  // The profiler renders every variant at 64 spp unless --spp says otherwise, whichever backend was picked.
  if (!cli.sppGiven) opt.spp = 64;
  LoadedScene loaded;
  const int loadCode = job.ShareScene(
      [&] {
        // the profiler times tile guiding too
        loaded = LoadAndBuild(cli, true, ChooseBvhBuilder(cli.bvhBuilder, backend));
        return kContinue;
      },
      loaded.data, false);
  if (loadCode != kContinue) return loadCode;
  job.SceneSent();  // before any rank measures: the ranks measure at the same time
  ProfileSettings ps;
  ps.sceneName = cli.scenePath.substr(cli.scenePath.find_last_of('/') + 1);
  ps.jsonPath = RankReportPath(cli.reportPath, job);
  ps.repeats = cli.repeats;
  double samplesPerSecond = 0.0;
  ps.samplesPerSecond = &samplesPerSecond;
  const int code = RunGpuProfiler(cli.command == CliCommand::kBenchmark, backend, loaded.data, opt, ps);
  if (job.Ranks() == 1) return code;
  // Each rank measured on its own device: per rank and in total on rank 0.
  job.ReportThroughput(samplesPerSecond);
  const int agreed = job.Agree(code == 0 ? kContinue : code);
  return agreed == kContinue ? 0 : agreed;
}

// Scene, checkpoint and render errors (and any other) end the run with exit code 1. In an MPI job the other
// ranks may be waiting for this one: the job ends at once, naming the rank.
template <typename Command>
int ReportingErrors(Command command, CliOptions& cli, Job& job) {
  try {
    return command(cli, job);
  } catch (const std::exception& e) {
    if (job.Ranks() > 1) job.Abort(e.what());
    std::cerr << "tracer: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

int RunRenderCommand(CliOptions& options, Job& job) { return ReportingErrors(Render, options, job); }
int RunProfileCommand(CliOptions& options, Job& job) { return ReportingErrors(Profile, options, job); }

}  // namespace tracer
