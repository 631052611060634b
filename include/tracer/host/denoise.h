// @file denoise.h: --denoise on the host: the inputs (the image, its half-buffers and the first-hit features), the
// filters by name, and the run on the host's threads (DenoiseCpu) or on the GPU (DenoiseCuda, kernels/denoise.cu),
// both over core/denoise.h's per-pixel code.
#pragma once
#include <string>
#include <vector>

#include "tracer/core/denoise.h"
#include "tracer/host/film.h"

namespace tracer {

struct AovImages;
struct RenderResult;

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
// with no odd sample (1 spp) gets its one sample in both halves.
void ResolveHalves(const HostFilm& film, std::vector<float>& halfA, std::vector<float>& halfB);

// A finished render's inputs: its image, its half-buffers (ResolveHalves) and the first-hit features in `aov`
// (ComputeFirstHitAovs with kFirstHitAovs).
DenoiseImages DenoiseInputs(const RenderResult& result, const AovImages& aov);

// The denoised image (3 floats a pixel) on `threads` host threads (0: every core).
std::vector<float> DenoiseCpu(const DenoiseImages& in, DenoiseMethod method, int threads = 0,
                              const DenoiseSettings& settings = {});
#if defined(TRACER_HAVE_CUDA)
// The same on the current CUDA device, one thread per pixel. Throws DeviceError.
std::vector<float> DenoiseCuda(const DenoiseImages& in, DenoiseMethod method, const DenoiseSettings& settings = {});
#endif

}  // namespace tracer
