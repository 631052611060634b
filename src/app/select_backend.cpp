// @file select_backend.cpp: every `#if TRACER_HAVE_CUDA` of the app: backend choice, fallback, --aov, profiler.
#include "select_backend.h"

#include <iostream>
#include <memory>
#include <stdexcept>

#include "tracer/host/aov.h"
#include "tracer/host/backends.h"
#include "tracer/host/cli.h"
#include "tracer/host/device_error.h"
#include "tracer/host/pass_driver.h"
#include "tracer/host/profile.h"
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
    if (!choice.useCuda && say) std::cerr << "tracer: no usable CUDA device (" << why << "); rendering on the CPU\n";
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
  if (flag == "auto" && say) std::cerr << "tracer: built without CUDA; rendering on the CPU\n";
#endif
  return kCliContinue;
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
    throw std::runtime_error("--bvh-builder gpu, but no usable CUDA device: " + why + " (use --bvh-builder cpu)");
  if (choice.rankDevice >= 0) UseCudaDevice(choice.rankDevice);
  return &BuildBvhsOnGpu;
#else
  throw std::runtime_error("--bvh-builder gpu, but this build has no CUDA support (use --bvh-builder cpu)");
#endif
}

RenderResult RenderOnSelectedBackend(BackendChoice& choice, const SceneData& data, const RenderOptions& options,
                                     const ProgressFn& progress, PassSchedule* schedule) {
  auto run = [&](Backend& backend) {
    return schedule ? RunPasses(options, backend, *schedule) : RunPasses(options, backend, progress);
  };
#if defined(TRACER_HAVE_CUDA)
  if (choice.useCuda) {
    try {
      if (choice.rankDevice >= 0) UseCudaDevice(choice.rankDevice);
      if (std::shared_ptr<Backend> prepared = std::move(choice.prepared)) {
        UploadScene(*prepared, data);
        return run(*prepared);
      }
      std::unique_ptr<Backend> cuda = MakeCudaBackend(data, options);
      return run(*cuda);
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
      ComputeFirstHitAovsCuda(data, options, kinds, samples, out);
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

TraceRaysResult TraceRaysOnSelectedBackend(const BackendChoice& choice, const SceneData& data,
                                           const std::vector<RayRecord>& rays, const TraceRaysOptions& options) {
#if defined(TRACER_HAVE_CUDA)
  if (choice.useCuda) return TraceRaysCuda(data, rays, options);
#else
  (void)choice;  // a build without CUDA always chose the CPU
#endif
  return TraceRaysCpu(data, rays, options);
}

}  // namespace tracer
