// @file backends.h: the backends a render can run on, and one-call renders for tests and the profiler.
// Plain C++: the CUDA backend's declarations need no CUDA header (they are defined only when nvcc built it).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tracer/core/ray.h"
#include "tracer/host/pass_driver.h"

namespace tracer {

struct DeviceScene;
struct SceneData;

// A GPU renderer's scene as another process of its node can copy it, device to device (CUDA IPC: an MPI job's
// ranks on the node of rank 0; ExportDeviceScene): the bytes to send it, and what keeps the device copy alive
// while such a process may still read it. Empty bytes: no scene to copy.
struct DeviceSceneOffer {
  std::vector<unsigned char> bytes;
  std::shared_ptr<const void> keepAlive;
};

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
// The scene of a CUDA backend made by MakeCudaBackend (or after UploadScene), for other processes of this node.
// Throws DeviceError where the driver cannot export it.
DeviceSceneOffer ExportDeviceScene(Backend& backend);
// UploadScene from another process's ExportDeviceScene bytes instead of the host's arrays: each array copied from
// that process's GPU (peer to peer) on a backend of MakeCudaBackendWithoutScene; not with --light-sampling tiles,
// whose guide is built from the host's arrays. Throws DeviceError where the driver cannot map the other process's
// memory (no peer access between the two GPUs): UploadScene still works then.
void ImportDeviceScene(Backend& backend, const std::vector<unsigned char>& exported);
// The device scene of a CUDA backend (MakeCudaBackend's, or after UploadScene or ImportDeviceScene), which the
// pointer keeps after the backend is gone: what traces rays after a render (--aov's first-hit outputs, --denoise's
// features) uses it instead of uploading the scene again. Null on other backends or before the scene came.
std::shared_ptr<DeviceScene> DeviceSceneOf(Backend& backend);
// A CUDA backend's film as it stays on the device after the render, for what reads it there (--denoise resolves its
// half-buffers and raw image on the GPU instead of uploading them).
struct DeviceFilmView {
  int width = 0, height = 0;
  const unsigned long long* sum = nullptr;  // width x height x 3 fixed-point sums (core/film.h); null: none
  const unsigned long long* odd = nullptr;  // the odd-numbered samples' sums (RenderOptions::halfBuffers), else null
  void* staging = nullptr;                  // the backend's pinned read-back buffer (null under --pageable-readback)
  size_t stagingBytes = 0;
  // RenderOptions::firstHitSamples: the camera rays' hits of samples below firstHitSamples (core/film.h's
  // FilmView::firstHits; those no pass of this process reached marked kHitNotRecorded), else null
  const HitRecord* firstHits = nullptr;
  int firstHitSamples = 0;
};
// The film of a CUDA backend after its passes (null pointers for any other backend), valid while the backend lives.
// Only this process's samples: an MPI job's summed film is on rank 0's host, not here.
DeviceFilmView DeviceFilmOf(Backend& backend);
RenderResult RenderCuda(const SceneData& scene, const RenderOptions& options, const ProgressFn& progress = {});
#endif

}  // namespace tracer
