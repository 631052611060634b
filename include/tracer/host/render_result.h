// @file render_result.h: what a render returns (image, film, statistics) and the progress callback.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tracer/host/film.h"

namespace tracer {

struct RenderStats {
  uint64_t extensionRays = 0;  // closest-hit rays traced (primary included)
  uint64_t primaryRays = 0;
  uint64_t shadowRays = 0;
  uint64_t droppedSamples = 0;          // non-finite contributions counted and dropped
  std::vector<uint64_t> livePerBounce;  // rays entering intersect at each bounce (when collected)
  double seconds = 0.0;                 // rendering only, not loading or building
  double setupSeconds = 0.0;            // before the first pass: the backend's set-up (on a GPU, the scene's upload)
  double allocateSeconds = 0.0;         // and the path pool's and film's allocation
  double readbackSeconds = 0.0;         // the final film's readback (in an MPI job, with the ranks' sum), in `seconds`
  double resolveSeconds = 0.0;          // the film's sums divided into the image's colours, after `seconds`
                                        // (RunPasses's last step: part of a render's frame time)
  std::vector<std::pair<std::string, double>> kernelMs;  // per stage, summed (GPU: CUDA events)
  double activeLanesShade = 0.0;     // average active lanes per warp in the shade kernels (GPU, collected)
  double classesPerShadeWarp = 0.0;  // average distinct material classes among a shade warp's lanes
  size_t peakDeviceBytes = 0;
  long long poolPaths = 0;  // the path pool's size (paths in flight)
};

// The first non-finite sample of a render: its pixel and the depth of the path vertex that produced it
// (the smallest pixel when several passes or threads found one).
struct NonFiniteSample {
  static constexpr unsigned long long kNone = ~0ull;  // the packed value when there is none (core/film.h)
  bool found = false;
  uint32_t pixel = 0, depth = 0;
  static NonFiniteSample Decode(unsigned long long packed) {
    NonFiniteSample s;
    s.found = packed != kNone;
    s.pixel = static_cast<uint32_t>(packed >> 32);
    s.depth = static_cast<uint32_t>(packed & 0xffffffffu);
    return s;
  }
};

struct RenderResult {
  NonFiniteSample firstNonFinite;
  std::vector<float> rgb;  // linear radiance, width*height*3, row 0 at the top
  HostFilm film;           // the fixed-point sums behind rgb
  int width = 0, height = 0;
  int sppDone = 0;
  // With RenderOptions::varianceAov: per pixel and channel, the variance of rgb's mean, from the spread of the
  // passes' means (batch means: sum n_p (m_p - m)^2 / (P - 1) / N over P passes of n_p samples, N in all);
  // varianceBatches = P (below 2 the variance is unknown and left 0).
  std::vector<float> variance;
  int varianceBatches = 0;
  bool converged = false;  // adaptive sampling stopped every pixel before --spp (film.pixelSpp: each pixel's)
  std::string backend;     // "cpu" or "cuda (GPU name)"
  RenderStats stats;
};

// Called after each pass with (samples per pixel done, samples per pixel asked for, rays so far).
// Returning false stops the render at that pass boundary.
using ProgressFn = std::function<bool(int sppDone, int sppTotal, const RenderStats&)>;

}  // namespace tracer
