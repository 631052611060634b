// @file denoise.h: --denoise on the host: the inputs (the image, its half-buffers and the first-hit features), the
// filters by name, and the run on the host's threads (DenoiseCpu) or on the GPU (DenoiseCuda, kernels/denoise.cu),
// both over core/denoise.h's per-pixel code.
#pragma once
#include <string>
#include <vector>

#include "tracer/core/denoise.h"
#include "tracer/host/film.h"
#include "tracer/host/render_options.h"

namespace tracer {

struct AovImages;
struct DeviceScene;
struct RenderResult;
struct SceneData;

// kNfor: the regression (the default); kAtrous: the edge-avoiding a-trous wavelets, its naive twin.
enum class DenoiseMethod { kNfor, kAtrous };
const char* DenoiseMethodName(DenoiseMethod m);
bool DenoiseMethodFromName(const std::string& name, DenoiseMethod* m);

// Everything 3 floats a pixel (depth one), row 0 at the top, width x height.
struct DenoiseImages {
  int width = 0, height = 0;
  std::vector<float> color;         // the raw image (the mean of every sample)
  std::vector<float> halfA, halfB;  // the means of the even- and of the odd-numbered samples
  std::vector<float> albedo, normal, position, depth, emission;
};

// The film's half-buffers as colours: the even-numbered samples' sums (sum - odd) over their count and the odd ones'
// over theirs, each pixel by its own sample count (pixelSpp under --adaptive, else sppDone). Needs film.odd; a pixel
// with no odd sample (1 spp) gets its one sample in both halves. On `threads` host threads (0: every core).
void ResolveHalves(const HostFilm& film, std::vector<float>& halfA, std::vector<float>& halfB, int threads = 1);

// A finished render's inputs: its image, its half-buffers (ResolveHalves) and the first-hit features in `aov`
// (ComputeFirstHitAovs with kFirstHitAovs).
DenoiseImages DenoiseInputs(const RenderResult& result, const AovImages& aov);

// Where --denoise's time went, in ms: the first-hit features traced (with the scene's upload where it was not
// resident), the inputs (the half-buffers resolved and, on the GPU, uploaded), the filter, the image read back.
struct DenoiseTiming {
  double features = 0.0, inputs = 0.0, filter = 0.0, readback = 0.0;
  double Total() const { return features + inputs + filter + readback; }
};

// The denoised image (3 floats a pixel) on `threads` host threads (0: every core).
std::vector<float> DenoiseCpu(const DenoiseImages& in, DenoiseMethod method, int threads = 0,
                              const DenoiseSettings& settings = {});
#if defined(TRACER_HAVE_CUDA)
// The same on the current CUDA device, one thread per pixel. Throws DeviceError.
std::vector<float> DenoiseCuda(const DenoiseImages& in, DenoiseMethod method, const DenoiseSettings& settings = {});
// The filter's kernels alone on `in` (uploaded once): the median of `repeats` runs after a warm-up, in ms (CUDA
// events); the image into `image` when given. For benchmarks (tests/denoise_bench.cpp).
double TimeDenoiseCuda(const DenoiseImages& in, DenoiseMethod method, const DenoiseSettings& settings, int repeats,
                       std::vector<float>* image);
// Loads the kernels of DenoiseFrameCuda's step for `method` (default settings) on the current device. CUDA loads a
// kernel at its first launch, which made about a quarter of the step's time at 1080p; called on a thread of its own
// while the scene loads (select_backend.h's DenoiserPreload), that cost leaves the step. Throws DeviceError.
void PrepareDenoiseCuda(DenoiseMethod method);
// --denoise after a render on the GPU, the features never leaving it: the first-hit features (`featureSamples` rays
// a pixel) over `resident` (the render's device scene) or, when null, over `scene` uploaded again, from the camera
// rays' hits that `film` kept (RenderOptions::firstHitSamples) and tracing the others; the raw
// image and the half-buffers resolved on the device from `film` (the render's film, still there, of sppDone samples in
// every pixel) or, when null, uploaded from in.halfA, in.halfB (and in.color for a-trous); the filter run; the image
// read back into `image` (in place when it has the image's size already: a new buffer's page faults cost more than
// the copy), through the film's pinned staging buffer where there is one, band by band as the regression finishes
// them. in's features are not read. The features of `aovKinds` are copied into `aov` as well (--aov asked for them).
// Throws DeviceError; `image` is then untouched unless the filter or the read-back failed after a band had arrived
// (the caller resolves the raw image again).
struct DeviceFilmView;
void DenoiseFrameCuda(const SceneData& scene, const DeviceScene* resident, const DeviceFilmView* film,
                      const RenderOptions& options, int featureSamples, int sppDone, const DenoiseImages& in,
                      DenoiseMethod method, int aovKinds, AovImages& aov, std::vector<float>& image,
                      DenoiseTiming* timing);
// --profile's and --benchmark's denoiser row: a render of `data` at options' image and spp (2 at least), the
// first-hit features (`featureSamples` rays a pixel) and each filter's kernels timed on the device (the median of
// `repeats` after a warm-up, CUDA events; uploads and read-backs left out), and each image's relMSE against a render at
// refFactor times the spp.
// nforPerPixelMs is the regression's per-pixel twin (settings.nforPerPixel), nforTwinDifference the largest
// |twin - tiled| / (tiled + 0.01) of their images.
struct DenoiseProfile {
  int spp = 0;
  // The first-hit features traced again (featuresMs), and from the render's kept camera-ray hits (featuresKeptMs:
  // those of its first min(spp, featureSamples) samples; RenderOptions::firstHitSamples)
  double featuresMs = 0.0, featuresKeptMs = 0.0, nforMs = 0.0, atrousMs = 0.0, nforPerPixelMs = 0.0;
  double relMseRaw = 0.0, relMseNfor = 0.0, relMseAtrous = 0.0, nforTwinDifference = 0.0;
};
DenoiseProfile ProfileDenoiseCuda(const SceneData& data, const RenderOptions& options, int featureSamples,
                                  int refFactor, int repeats);
#endif

}  // namespace tracer
