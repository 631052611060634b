// @file select_backend.h: the app's one view of whether this build has CUDA: which backend renders, the
// default --spp that follows from it, the render with its out-of-memory fallback, --aov's first-hit outputs, and the
// GPU profiler.
#pragma once
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tracer/host/denoise.h"
#include "tracer/host/render_options.h"
#include "tracer/host/render_result.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/trace_rays.h"

namespace tracer {

struct AovImages;
struct ProfileSettings;
class Backend;
class PassSchedule;
class Job;

struct BackendChoice {
  std::string flag;      // --backend: auto, cpu or cuda
  bool useCuda = false;  // decided before loading; cleared when the GPU ran out of memory under auto
  // A rank of an MPI job: its node-local rank, whose GPU (modulo the visible devices) it uses; -1 alone.
  int rankDevice = -1;
  // PrepareRankRenderer's GPU renderer (its path pool and film allocated), which the render then uses; null when none.
  std::shared_ptr<Backend> prepared;
  // After a render on the GPU: its renderer, kept (with its device scene and film) for what works on them after the
  // render (--aov's first-hit outputs, --denoise) instead of uploading them again; null otherwise.
  std::shared_ptr<Backend> rendered;
  // Why --backend auto renders on the CPU, for the render's first line: "this build has no CUDA", "no usable GPU:
  // no NVIDIA GPU found"; empty when the CPU was asked for or the GPU renders.
  std::string cpuBecause;
  // The default --spp that --help promises: 1024 on the GPU, 64 on the (much slower) CPU.
  int DefaultSpp() const { return useCuda ? 1024 : 64; }
};

// Decides before loading (so that the default --spp is known and a missing GPU is reported without waiting
// for the BVH). Under --backend auto without a usable GPU, says so in one plain line on stderr when `say` (a command
// whose output names no backend, not --quiet), else leaves it to choice.cpuBecause (the render's first line names
// it). Returns kContinue, or 1 after printing why the asked-for backend or the profiler cannot run.
int SelectBackend(const std::string& flag, bool measuring, BackendChoice& choice, bool say = true);

// A rank of an MPI job rendering on the GPU: makes its device current and creates its CUDA context now (about
// 0.1 s), before it waits for the scene, instead of after. Nothing for the CPU backend or alone.
void PrepareRankDevice(const BackendChoice& choice);
// A rank other than 0, rendering on the GPU, while it waits for the scene: its renderer with the path pool and film
// for `options` (choice.prepared), so that it renders as soon as it has uploaded the scene. Nothing otherwise, or
// when the GPU has not the memory (the render then tries again as usual).
void PrepareRankRenderer(BackendChoice& choice, const RenderOptions& options);

// The BVH builder that --bvh-builder (`flag`: auto, gpu, ploc or cpu) asks for: the GPU builder (gpu, or auto when
// the render runs on the GPU; ploc: its naive twin), made current on the rank's device; null for the host builders.
// Throws UsageError for gpu without a usable CUDA device.
BvhBuilderFn ChooseBvhBuilder(const std::string& flag, const BackendChoice& choice);

// Makes the chosen backend for the loaded scene and renders with it, alone (RunPasses with `progress`) or with
// the steps of `schedule` when given (an MPI job's). Under --backend auto a GPU that runs out of memory (which
// leaves its context usable) hands the render to the CPU; any other device error propagates.
// With the MPI `job` whose ShareScene asked for the device scene: rank 0 offers its GPU's scene to the ranks of its
// node (Job::OfferDeviceScene), which copy it from there (ImportDeviceScene), or wait for `data` where they cannot.
RenderResult RenderOnSelectedBackend(BackendChoice& choice, const SceneData& data, const RenderOptions& options,
                                     const ProgressFn& progress, PassSchedule* schedule = nullptr, Job* job = nullptr);

// --profile or --benchmark on the GPU (the rank's, under MPI); returns the exit code. Only called after
// SelectBackend allowed it.
int RunGpuProfiler(bool benchmark, const BackendChoice& choice, const SceneData& data, const RenderOptions& options,
                   const ProfileSettings& settings);

// --aov's first-hit outputs of `kinds` at `samples` rays per pixel: on the GPU when the render ran there
// (choice.useCuda; over choice.renderedScene, or the scene uploaded again), on the host's threads otherwise; a GPU
// out of memory hands them to the host rather than lose the finished render. Any other device error propagates.
void ComputeFirstHitAovsOnSelectedBackend(const BackendChoice& choice, const SceneData& data,
                                          const RenderOptions& options, int kinds, int samples, AovImages& out);

// --denoise after the render: the first-hit features at `featureSamples` rays per pixel and the filter over the
// half-buffers of `film`, on the GPU when the render ran there (choice.useCuda: DenoiseFrameCuda, the features never
// leaving the device, and the half-buffers resolved there from the renderer's own film when `filmOnDevice`: one
// process, every pixel at film.sppDone), else on options.threads host threads; a GPU out of memory hands both to
// the host. `image` is the render's image (`film` resolved; a-trous filters it) and becomes the denoised one (the raw
// one again when this throws). The features of `aovKinds` go to `aov` as well. Any other device error propagates.
void DenoiseFrameOnSelectedBackend(const BackendChoice& choice, const SceneData& data, const RenderOptions& options,
                                   int featureSamples, const HostFilm& film, bool filmOnDevice,
                                   std::vector<float>& image, DenoiseMethod method, int aovKinds, AovImages& aov,
                                   DenoiseTiming* timing);

// --denoise's kernels loaded on the GPU that will render (choice's), on a thread of its own while the scene loads
// (host/denoise.h's PrepareDenoiseCuda says why); nothing without a GPU or without `denoise`. Best effort: a failure
// here is met again, and reported, by the step itself. Wait() (or the destructor) joins it, before the render, so that
// loading never stalls the render's launches (it may stall a GPU BVH build for as long as it takes: loading a module
// can wait for the device).
class DenoiserPreload {
 public:
  DenoiserPreload(const BackendChoice& choice, bool denoise, DenoiseMethod method);
  ~DenoiserPreload() { Wait(); }
  DenoiserPreload(const DenoiserPreload&) = delete;
  DenoiserPreload& operator=(const DenoiserPreload&) = delete;
  void Wait() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
};

// --trace-rays on the chosen backend (the GPU when choice.useCuda); hits name the scene file's triangle numbers
// (`numbers`, the Scene's that data was built from). Throws DeviceError on CUDA errors.
TraceRaysResult TraceRaysOnSelectedBackend(const BackendChoice& choice, const SceneData& data,
                                           const TriangleNumbers& numbers, const std::vector<RayRecord>& rays,
                                           const TraceRaysOptions& options);

}  // namespace tracer
