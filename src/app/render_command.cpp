// @file render_command.cpp: the render command (cli.h's RunRenderCommand): choose the backend, load (resuming a
// checkpoint), render the passes with the progress bar and signals, compute --aov's outputs, then finish.
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/checkpoints.h"
#include "app/cli.h"
#include "app/finish_render.h"
#include "app/loaded_scene.h"
#include "app/progress.h"
#include "app/render_summary.h"
#include "app/scene_setup.h"
#include "app/select_backend.h"
#include "tracer/host/aov.h"
#include "tracer/host/checkpoint.h"
#include "tracer/host/image_io.h"
#include "tracer/host/job.h"
#include "tracer/host/pass_driver.h"
#include "tracer/host/ray_dump.h"
#include "tracer/host/timing.h"

namespace tracer {
namespace {

// What rank 0 loads for the render: the checkpoint it continues, the scene, and the settings a checkpoint must match.
struct RenderInputs {
  Checkpoint resumed;
  LoadedScene loaded;
  std::string settings;
};

// Refuses, before loading, what cannot be rendered with these settings: --adaptive whose minimum leaves no sample to
// save, and --adaptive or --aov variance under mpirun. Returns kContinue or the job's exit code.
int CheckRenderable(const CliOptions& cli, Job& job) {
  const RenderOptions& opt = cli.render;
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
  return kContinue;
}

// Where the render runs, for the line that opens it.
std::string Where(const BackendChoice& backend, const Job& job) {
  if (job.Ranks() > 1) return "on " + std::to_string(job.Ranks()) + " MPI ranks";
  if (backend.useCuda) return "on the GPU";
  return backend.cpuBecause.empty() ? "on the CPU" : "on the CPU (" + backend.cpuBecause + ")";
}

// Rank 0's part of loading: the checkpoint, the scene, the settings and the resumed film. Returns kContinue, or the
// exit code (a signal while loading, a checkpoint of other settings).
int LoadOnRoot(CliOptions& cli, const BackendChoice& backend, const Job& job, RenderInputs& in) {
  RenderOptions& opt = cli.render;
  // Read the checkpoint before the scene: a bad file is reported without waiting for a BVH build.
  if (!cli.resumePath.empty()) {
    in.resumed = LoadCheckpoint(cli.resumePath);
    if (int code = CheckResumedHalves(cli, in.resumed, opt); code != kContinue) return code;
  }
  in.loaded = LoadAndBuild(cli, opt.lightSampling == LightSampling::kTiles, ChooseBvhBuilder(cli.bvhBuilder, backend));
  if (StopSignal()) {
    std::fprintf(stderr, "tracer: interrupted while loading; nothing written\n");
    return 128 + StopSignal();
  }
  PrintRenderStart(cli, in.loaded.scene.NumTriangles(), Where(backend, job));
  // The settings hash every scene array (SceneContentHash, on one thread: seconds on big scenes; docs/PERFORMANCE.md),
  // so they are made only where used: --resume, --checkpoint and .exr's header.
  if (!cli.resumePath.empty() || !cli.checkpointPath.empty() || FormatFromPath(cli.outPath) == ImageFormat::kExr)
    in.settings = CheckpointSettings(cli.scenePath, in.loaded.data, opt, EnvMapSource{cli.envMapPath, cli.envScale});
  return cli.resumePath.empty() ? kContinue : UseResumedFilm(cli, in.resumed, in.settings, opt);
}

// std::bad_alloc names nothing: say what a render holds on the host (the film of width x height, its copy and the
// image, the path pool) and the flags that shrink it. What did not fit is most likely the largest of them.
std::runtime_error OutOfHostMemory(const RenderOptions& opt) {
  const unsigned long long pixels = static_cast<unsigned long long>(opt.width) * opt.height;
  char text[512];
  std::snprintf(text, sizeof text,
                "out of host memory for the render: the film of %dx%d pixels takes %llu bytes (24 per pixel: three "
                "64-bit sums), held twice, and the image %llu bytes more (three floats per pixel), besides the path "
                "pool (%s); lower --width/--height, or --paths-in-flight",
                opt.width, opt.height, pixels * 24ull, pixels * 12ull,
                opt.pathsInFlight > 0 ? ("--paths-in-flight " + std::to_string(opt.pathsInFlight) + " paths").c_str()
                                      : "up to 128K paths on the CPU");
  return std::runtime_error(text);
}

// The passes: alone with the progress bar, or the steps of an MPI job's schedule (`schedule`, when the job has one).
RenderResult RenderPasses(const CliOptions& cli, BackendChoice& backend, const SceneData& data,
                          const ProgressFn& progress, PassSchedule* schedule, Job& job) {
  try {
    return cli.dumpRaysDir.empty() ? RenderOnSelectedBackend(backend, data, cli.render, progress, schedule, &job)
                                   : RenderCpuDumpingRays(data, cli.render, cli.dumpRaysDir, progress);
  } catch (const std::exception& e) {
    // A rank that took rank 0's device scene still receives `data` on a thread: the job ends here, before
    // unwinding frees it (as ReportingErrors would end it).
    if (job.Ranks() > 1) job.Abort(e.what());
    throw;
  }
}

// Whether --denoise runs on this render: it needs a sample in each half.
bool Denoising(const CliOptions& cli, const RenderResult& result) { return cli.denoise && result.sppDone >= 2; }

// --aov's outputs of the finished render: the first-hit ones traced now (unless the denoiser traces them with its
// features), the variance and sample map from the render.
AovImages RenderAovs(const CliOptions& cli, const BackendChoice& backend, const SceneData& data,
                     const RenderResult& result) {
  AovImages aov;
  aov.width = result.width;
  aov.height = result.height;
  const int kinds = Denoising(cli, result) ? cli.aovKinds & ~kFirstHitAovs : cli.aovKinds;
  if (!kinds || result.sppDone <= 0) return aov;
  ComputeFirstHitAovsOnSelectedBackend(backend, data, cli.render, kinds, cli.aovSamples, aov);
  aov.variance = result.variance;
  if (cli.aovKinds & kAovSamples) {
    const std::vector<uint32_t>& n = result.film.pixelSpp;
    aov.samples.assign(static_cast<size_t>(result.width) * result.height, static_cast<float>(result.sppDone));
    for (size_t p = 0; p < n.size(); ++p) aov.samples[p] = static_cast<float>(n[p]);
  }
  return aov;
}

// --denoise: the image becomes the denoised one (the raw one and the halves kept for --aov noisy, halves; the
// first-hit features for --aov's first-hit kinds); returns the seconds it took, where they went in `timing`. `alone`:
// one process rendered (its GPU's film is the whole film).
double DenoiseImage(const CliOptions& cli, const BackendChoice& backend, const SceneData& data, bool alone,
                    AovImages& aov, RenderResult& result, DenoiseTiming& timing) {
  if (!cli.denoise || result.sppDone <= 0) return 0.0;
  const Stopwatch clock;
  if (cli.aovKinds & kAovHalves) ResolveHalves(result.film, aov.halfA, aov.halfB, cli.render.threads);
  if (cli.aovKinds & kAovNoisy) aov.noisy = result.rgb;
  if (!Denoising(cli, result)) {
    if (!cli.render.quiet)
      std::fprintf(stderr,
                   "tracer: warning: --denoise needs 2 samples per pixel, one in each half; the render "
                   "stopped at 1, so the image is written as rendered\n");
    return 0.0;
  }
  // A denoiser that fails (out of memory, a GPU error) costs the denoised image, not the render: the raw image and
  // the final checkpoint are still written (and --aov's first-hit outputs, traced on the host).
  const bool filmOnDevice = alone && result.film.pixelSpp.empty();
  try {
    DenoiseFrameOnSelectedBackend(backend, data, cli.render, cli.aovSamples, result.film, filmOnDevice, result.rgb,
                                  cli.denoiseMethod, cli.aovKinds, aov, &timing);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tracer: warning: the denoiser failed (%s); the image is written as rendered\n", e.what());
    if (cli.aovKinds & kFirstHitAovs) ComputeFirstHitAovs(data, cli.render, cli.aovKinds, cli.aovSamples, aov);
    return 0.0;
  }
  return clock.Seconds();
}

// Alone, or as a rank of an MPI job (job.h): rank 0 reads the checkpoint and the scene, builds, prints and writes;
// every rank renders the passes the job's schedule gives it.
int Render(CliOptions& cli, Job& job) {
  const Stopwatch commandClock;
  BackendChoice backend;
  // (The render's first line says why it runs on the CPU, and -q says nothing.)
  if (int code = job.Agree(SelectBackend(cli.backend, false, backend, false)); code != kContinue) return code;
  RenderOptions& opt = cli.render;
  if (job.Ranks() > 1) {
    backend.rankDevice = job.LocalRank();
    PrepareRankDevice(backend);  // while rank 0 loads, so that a rank renders as soon as it has the scene
    // The ranks trace the first samples apart, and rank 0 makes the first-hit features after the film sum: no rank
    // keeps its camera rays' hits for them.
    opt.firstHitSamples = 0;
  }
  // Only rank 0 read the scene file's render defaults (ParseCli): every rank makes the film and passes it says.
  std::vector<int> settings = {opt.width, opt.height, opt.spp, opt.maxDepth, cli.sppGiven ? 1 : 0};
  job.ShareInts(settings);
  opt.width = settings[0], opt.height = settings[1], opt.spp = settings[2], opt.maxDepth = settings[3];
  cli.sppGiven = settings[4] != 0;
  if (!cli.sppGiven) opt.spp = backend.DefaultSpp();
  if (int code = CheckRenderable(cli, job); code != kContinue) return code;
  job.PrepareFilm(opt.width, opt.height);  // (collective: before the ranks part, rank 0 to load, the others to wait)
  if (job.Ranks() > 1 && !job.IsRoot()) PrepareRankRenderer(backend, opt);  // (rank 0 loads meanwhile)

  // Signals from here on finish the current pass instead of killing the process; during loading
  // they stop it once loading returns (a second signal still exits at once).
  CatchStopSignals();
  DenoiserPreload preload(backend, cli.denoise && job.IsRoot(), cli.denoiseMethod);
  RenderInputs in;
  // A rank rendering on a GPU prepared before the scene came (PrepareRankRenderer) may copy it from rank 0's GPU;
  // the tile guide, the environment guide and --dump-rays need the host's arrays.
  const bool deviceScene = job.Ranks() > 1 && backend.useCuda && (job.IsRoot() || backend.prepared != nullptr) &&
                           opt.lightSampling != LightSampling::kTiles && opt.envSampling != EnvSampling::kGuided &&
                           cli.dumpRaysDir.empty();
  const int loadCode = job.ShareScene([&] { return LoadOnRoot(cli, backend, job, in); }, in.loaded.data, deviceScene);
  if (loadCode != kContinue) return loadCode;
  const Stopwatch frameClock;

  // Long renders: the resumed film (above) and regular saves, on the rank that writes.
  if (job.IsRoot() && !cli.checkpointPath.empty())
    opt.checkpoint = PeriodicCheckpoint(cli.checkpointPath, opt.seed, in.settings, opt.quiet);
  opt.checkNan = cli.checkNan;
  const int startSpp = opt.resume ? opt.resume->sppDone : 0;
  const bool showBar = job.IsRoot() && !opt.quiet && isatty(STDERR_FILENO);
  const ProgressFn progress = ProgressBar(showBar, startSpp);
  std::unique_ptr<PassSchedule> schedule = job.MakeSchedule(opt, progress, [] { return StopSignal(); });
  RenderResult result;
  preload.Wait();
  try {
    result = RenderPasses(cli, backend, in.loaded.data, progress, schedule.get(), job);
  } catch (const std::bad_alloc&) {
    throw OutOfHostMemory(opt);
  }
  const double frameSeconds = schedule ? 0.0 : frameClock.Seconds();  // (an MPI job's is in job.Report)
  job.SceneSent();                                                    // (rank 0 rendered while it sent the scene)
  if (showBar) std::fprintf(stderr, "\n");
  if (!job.IsRoot()) return job.FinalCode(kContinue);                         // rank 0's code
  if (schedule) result.backend = std::to_string(job.Ranks()) + " MPI ranks";  // each rank's is in job.Report
  const Stopwatch writeClock;
  RenderTimes times;
  times.command = &commandClock;
  times.load = in.loaded.loadSeconds;
  times.frame = frameSeconds;
  int code = 1;
  try {
    AovImages aov = RenderAovs(cli, backend, in.loaded.data, result);
    times.denoise = DenoiseImage(cli, backend, in.loaded.data, schedule == nullptr, aov, result, times.denoiseParts);
    code = FinishRender(cli, result, in.settings, startSpp, schedule ? job.Signal() : StopSignal(), times,
                        in.loaded.camera, aov);
  } catch (const std::bad_alloc&) {
    throw OutOfHostMemory(opt);
  }
  job.Report(writeClock.Seconds());
  return job.FinalCode(code);
}

}  // namespace

int RunRenderCommand(CliOptions& options, Job& job) { return ReportingErrors(Render, options, job); }

}  // namespace tracer
