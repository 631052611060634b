// @file backends.h: the backends a render can run on, and one-call renders for tests and the profiler.
// Plain C++: the CUDA backend's declarations need no CUDA header (they are defined only when nvcc built it).
#pragma once
#include <memory>
#include <string>

#include "tracer/host/pass_driver.h"

namespace tracer {

struct SceneData;

// The CPU backend: the same stage bodies (core/stages.h) run on a thread pool. Always available.
std::unique_ptr<Backend> MakeCpuBackend(const SceneData& scene, const RenderOptions& options);
RenderResult RenderCpu(const SceneData& scene, const RenderOptions& options, const ProgressFn& progress = {});

#if defined(TRACER_HAVE_CUDA)
// True when a CUDA device and driver are usable; otherwise explains why in `why`.
bool CudaAvailable(std::string& why);

// Makes device (localRank modulo the visible devices) current for this process: an MPI rank's GPU. Returns it.
int UseCudaDevice(int localRank);

// The CUDA backend: uploads the scene (and builds the tile guide) when made. Throws DeviceError (CUDA errors
// carry file:line); an out-of-memory error names the bytes requested and suggests --paths-in-flight.
std::unique_ptr<Backend> MakeCudaBackend(const SceneData& scene, const RenderOptions& options);
// The same made before its scene is known (an MPI rank waiting for it): Allocate may come now, and UploadScene
// (only on such a backend) makes it MakeCudaBackend's; Allocate again with the same pool only clears the film.
std::unique_ptr<Backend> MakeCudaBackendWithoutScene(const RenderOptions& options);
void UploadScene(Backend& backend, const SceneData& scene);
RenderResult RenderCuda(const SceneData& scene, const RenderOptions& options, const ProgressFn& progress = {});
#endif

}  // namespace tracer
