// @file select_backend.cpp: every `#if TRACER_HAVE_CUDA` of the app: backend choice, fallback, --aov, profiler.
#include "select_backend.h"

#include <iostream>
#include <memory>
#include <stdexcept>
#include <system_error>

#include "app/cli.h"
#include "tracer/host/aov.h"
#include "tracer/host/backends.h"
#include "tracer/host/device_error.h"
#include "tracer/host/job.h"
#include "tracer/host/pass_driver.h"
#include "tracer/host/profile.h"
#include "tracer/host/timing.h"
#if defined(TRACER_HAVE_CUDA)
#include "tracer/host/bvh_build_gpu.h"
#endif

namespace tracer {

int SelectBackend(const std::string& flag, bool measuring, BackendChoice& choice, bool say) {
  choice.flag = flag;
  choice.useCuda = false;
#if defined(TRACER_HAVE_CUDA)
  // --backend cpu asks nothing of the driver; the profiler then still runs on the GPU, as it always did.
  if (flag != "cpu") {
    std::string why;
    choice.useCuda = CudaAvailable(why);
    if (!choice.useCuda && flag == "cuda") {
      std::cerr << "tracer: error: --backend cuda, but no usable CUDA device: " << why << "\n";
      return 1;
    }
    if (!choice.useCuda && measuring) {
      std::cerr << "tracer: error: --profile and --benchmark need a CUDA device: " << why << "\n";
      return 1;
    }
    if (!choice.useCuda) {
      choice.cpuBecause = "no usable GPU: " + PlainNoGpuReason(why);
      if (say) std::cerr << "tracer: no usable GPU (" << PlainNoGpuReason(why) << "); running on the CPU\n";
    }
  }
#else
  if (measuring) {
    std::cerr << "tracer: error: --profile and --benchmark need the CUDA renderer; this build has none (nvcc was not "
                 "found at configure time)\n";
    return 1;
  }
  if (flag == "cuda") {
    std::cerr
        << "tracer: error: --backend cuda, but this build has no CUDA support (nvcc was not found at configure time)\n";
    return 1;
  }
  (void)say;  // (every run of such a build would say it: the render's first line does)
  if (flag == "auto") choice.cpuBecause = "this build has no CUDA";
#endif
  return kContinue;
}

void PrepareRankDevice(const BackendChoice& choice) {
#if defined(TRACER_HAVE_CUDA)
  if (choice.useCuda && choice.rankDevice >= 0) UseCudaDevice(choice.rankDevice);  // cudaSetDevice makes the context
#else
  (void)choice;
#endif
}

void PrepareRankRenderer(BackendChoice& choice, const RenderOptions& options) {
#if defined(TRACER_HAVE_CUDA)
  if (!choice.useCuda || choice.rankDevice < 0) return;
  try {
    std::unique_ptr<Backend> backend = MakeCudaBackendWithoutScene(options);
    backend->Allocate(PoolSizeFor(options, backend->Pool()));
    choice.prepared = std::move(backend);
  } catch (const DeviceError& e) {
    if (e.sticky || !e.outOfMemory) throw;  // (out of memory: the render allocates again, and falls back as it would)
  }
#else
  (void)choice, (void)options;
#endif
}

BvhBuilderFn ChooseBvhBuilder(const std::string& flag, const BackendChoice& choice) {
  if (flag == "cpu" || (flag == "auto" && !choice.useCuda)) return nullptr;
#if defined(TRACER_HAVE_CUDA)
  std::string why;
  if (!choice.useCuda && !CudaAvailable(why))
    throw std::runtime_error("--bvh-builder " + flag + ", but no usable CUDA device: " + why +
                             " (use --bvh-builder cpu)");
  if (choice.rankDevice >= 0) UseCudaDevice(choice.rankDevice);
  return flag == "ploc" ? &BuildBvhsOnGpuInPasses : flag == "auto" ? &BuildBvhsAuto : &BuildBvhsOnGpu;
#else
  throw std::runtime_error("--bvh-builder " + flag + ", but this build has no CUDA support (use --bvh-builder cpu)");
#endif
}

#if defined(TRACER_HAVE_CUDA)
namespace {
// A prepared rank's scene: copied from rank 0's GPU where rank 0 offered it and the driver can map it, else
// uploaded from the host's arrays once they are here.
void TakeScene(Backend& prepared, const SceneData& data, Job* job) {
  if (job && !job->RootDeviceScene().empty()) {
    try {
      ImportDeviceScene(prepared, job->RootDeviceScene());
      return;
    } catch (const DeviceError& e) {
      if (e.sticky || e.outOfMemory) throw;  // (out of memory: as for any upload)
      std::cerr << "tracer: cannot copy the scene from rank 0's GPU (" << e.what()
                << "); uploading it from the host instead\n";
    }
  }
  if (job) job->WaitForScene();
  UploadScene(prepared, data);
}

// Rank 0's: its scene for the ranks of its node that take it; nothing (they wait for the host's arrays) where
// the driver cannot export it.
void OfferScene(Backend& backend, Job& job) {
  DeviceSceneOffer offer;
  try {
    offer = ExportDeviceScene(backend);
  } catch (const DeviceError& e) {
    if (e.sticky) throw;
    std::cerr << "tracer: cannot offer the scene on the GPU to the other ranks (" << e.what()
              << "); they upload it from the host\n";
  }
  job.OfferDeviceScene(std::move(offer));
}
}  // namespace
#endif

RenderResult RenderOnSelectedBackend(BackendChoice& choice, const SceneData& data, const RenderOptions& options,
                                     const ProgressFn& progress, PassSchedule* schedule, Job* job) {
  auto run = [&](Backend& backend) {
    return schedule ? RunPasses(options, backend, *schedule) : RunPasses(options, backend, progress);
  };
#if defined(TRACER_HAVE_CUDA)
  if (choice.useCuda) {
    try {
      if (choice.rankDevice >= 0) UseCudaDevice(choice.rankDevice);
      if (std::shared_ptr<Backend> prepared = std::move(choice.prepared)) {
        TakeScene(*prepared, data, job);
        RenderResult result = run(*prepared);
        choice.rendered = prepared;
        return result;
      }
      if (job) job->WaitForScene();
      std::shared_ptr<Backend> cuda = MakeCudaBackend(data, options);
      if (job && job->IsRoot() && job->Ranks() > 1) OfferScene(*cuda, *job);
      RenderResult result = run(*cuda);
      choice.rendered = cuda;
      return result;
    } catch (const DeviceError& e) {
      // Out of device memory leaves the context usable: under --backend auto, render on the CPU instead.
      // Any other CUDA error (a sticky one above all: illegal address, launch timeout) ends the run here,
      // with no further CUDA call.
      if (e.sticky || !e.outOfMemory || choice.flag != "auto") throw;
      std::cerr << "tracer: " << e.what() << "\ntracer: falling back to the CPU renderer\n";
      choice.useCuda = false;
    }
  }
#else
  (void)choice;  // a build without CUDA always chose the CPU
#endif
  if (job) {
    job->OfferDeviceScene({});  // (the root: no device scene to offer)
    job->WaitForScene();
  }
  std::unique_ptr<Backend> cpu = MakeCpuBackend(data, options);
  return run(*cpu);
}

int RunGpuProfiler(bool benchmark, const BackendChoice& choice, const SceneData& data, const RenderOptions& options,
                   const ProfileSettings& settings) {
#if defined(TRACER_HAVE_CUDA)
  if (choice.rankDevice >= 0) UseCudaDevice(choice.rankDevice);
  return benchmark ? RunBenchmark(data, options, settings) : RunProfile(data, options, settings);
#else
  // SelectBackend refused --profile and --benchmark in this build, so this is never reached.
  (void)benchmark, (void)choice, (void)data, (void)options, (void)settings;
  throw std::logic_error("the profiler needs the CUDA renderer");
#endif
}

void ComputeFirstHitAovsOnSelectedBackend(const BackendChoice& choice, const SceneData& data,
                                          const RenderOptions& options, int kinds, int samples, AovImages& out) {
#if defined(TRACER_HAVE_CUDA)
  if (choice.useCuda) {
    try {
      const std::shared_ptr<DeviceScene> resident = choice.rendered ? DeviceSceneOf(*choice.rendered) : nullptr;
      const DeviceFilmView film = choice.rendered ? DeviceFilmOf(*choice.rendered) : DeviceFilmView{};
      ComputeFirstHitAovsCuda(data, options, kinds, samples, out, resident.get(), &film);
      return;
    } catch (const DeviceError& e) {
      if (e.sticky || !e.outOfMemory) throw;
      std::cerr << "tracer: " << e.what() << "\ntracer: tracing the --aov first-hit outputs on the CPU\n";
    }
  }
#else
  (void)choice;
#endif
  ComputeFirstHitAovs(data, options, kinds, samples, out);
}

void DenoiseFrameOnSelectedBackend(const BackendChoice& choice, const SceneData& data, const RenderOptions& options,
                                   int featureSamples, const HostFilm& film, bool filmOnDevice,
                                   std::vector<float>& image, DenoiseMethod method, int aovKinds, AovImages& aov,
                                   DenoiseTiming* timing) {
  DenoiseImages in;
  in.width = film.width;
  in.height = film.height;
  // (the raw image is read by a-trous only, and the CPU's filter checks every input's size)
  auto resolveOnHost = [&](bool withColor) {
    const Stopwatch clock;
    ResolveHalves(film, in.halfA, in.halfB, options.threads);
    if (withColor) in.color = image;
    if (timing) timing->inputs = clock.Ms();
  };
#if defined(TRACER_HAVE_CUDA)
  if (choice.useCuda) {
    try {
      const std::shared_ptr<DeviceScene> resident = choice.rendered ? DeviceSceneOf(*choice.rendered) : nullptr;
      // The renderer's film where it is the whole film (else the halves come from the host's), and its kept
      // camera-ray hits in any case (an adaptive render's too).
      DeviceFilmView deviceFilm = choice.rendered ? DeviceFilmOf(*choice.rendered) : DeviceFilmView{};
      if (!filmOnDevice) deviceFilm.sum = deviceFilm.odd = nullptr;
      if (!deviceFilm.odd) resolveOnHost(method == DenoiseMethod::kAtrous);
      DenoiseTiming t;
      try {
        DenoiseFrameCuda(data, resident.get(), &deviceFilm, options, featureSamples, film.sppDone, in, method, aovKinds,
                         aov, image, &t);
      } catch (...) {
        // Its read-back writes the image band by band as the filter finishes them, so a device error in a later band
        // leaves the earlier ones denoised: the raw image is resolved again from the film (the render's arithmetic).
        image = film.Resolve();
        throw;
      }
      if (timing) {
        t.inputs += timing->inputs;  // (the host's share: the halves resolved there)
        *timing = t;
      }
      return;
    } catch (const DeviceError& e) {
      if (e.sticky || !e.outOfMemory) throw;
      std::cerr << "tracer: " << e.what() << "\ntracer: denoising on the CPU\n";
    }
  }
#else
  (void)choice, (void)filmOnDevice;
#endif
  if (in.halfA.empty()) resolveOnHost(true);
  if (in.color.empty()) in.color = image;
  Stopwatch clock;
  AovImages features;
  ComputeFirstHitAovs(data, options, kFirstHitAovs, featureSamples, features);
  in.albedo = std::move(features.albedo);
  in.normal = std::move(features.normal);
  in.position = std::move(features.position);
  in.depth = std::move(features.depth);
  in.emission = std::move(features.emission);
  const double featureMs = clock.Ms();
  clock.Restart();
  std::vector<float> denoised = DenoiseCpu(in, method, options.threads);
  if (timing) timing->features = featureMs, timing->filter = clock.Ms();
  if (aovKinds & kAovAlbedo) aov.albedo = in.albedo;
  if (aovKinds & kAovNormal) aov.normal = in.normal;
  if (aovKinds & kAovPosition) aov.position = in.position;
  if (aovKinds & kAovDepth) aov.depth = in.depth;
  if (aovKinds & kAovEmission) aov.emission = in.emission;
  image = std::move(denoised);
}

DenoiserPreload::DenoiserPreload(const BackendChoice& choice, bool denoise, DenoiseMethod method) {
#if defined(TRACER_HAVE_CUDA)
  if (!denoise || !choice.useCuda) return;
  const int rankDevice = choice.rankDevice;
  try {
    thread_ = std::thread([rankDevice, method] {
      try {
        if (rankDevice >= 0) UseCudaDevice(rankDevice);
        PrepareDenoiseCuda(method);
      } catch (const std::exception&) {  // (the step meets it again)
      }
    });
  } catch (const std::system_error&) {  // no thread to be had: the step loads its kernels itself
  }
#else
  (void)choice, (void)denoise, (void)method;
#endif
}

TraceRaysResult TraceRaysOnSelectedBackend(const BackendChoice& choice, const SceneData& data,
                                           const TriangleNumbers& numbers, const std::vector<RayRecord>& rays,
                                           const TraceRaysOptions& options) {
#if defined(TRACER_HAVE_CUDA)
  if (choice.useCuda) return TraceRaysCuda(data, numbers, rays, options);
#else
  (void)choice;  // a build without CUDA always chose the CPU
#endif
  return TraceRaysCpu(data, numbers, rays, options);
}

}  // namespace tracer
