// @file profile.h: the profiling mode (every optimisation against its naive twin) and the benchmark mode.
#pragma once
#include <string>

#include "tracer/host/render_options.h"
#include "tracer/host/scene_data.h"

namespace tracer {

struct ProfileSettings {
  std::string sceneName;
  std::string jsonPath;    // where the report goes
  int repeats = 5;         // timed repeats after one warm-up; the median is reported
  int featureSamples = 8;  // the denoiser's first-hit features: camera rays per pixel (--aov-samples)
  // When set, receives the optimised render's samples/s (an MPI job adds every rank's; mpi_driver.h).
  double* samplesPerSecond = nullptr;
};

// Runs each optimisation on and off on the same scene, seeds and settings; prints the table and writes JSON.
// Returns the process exit code.
int RunProfile(const SceneData& data, const RenderOptions& base, const ProfileSettings& settings);

// Renders with the optimised settings and the naive twins side by side; prints samples/s, rays/s (primary,
// extension, shadow, diffuse), per-kernel milliseconds and peak device memory; writes JSON.
int RunBenchmark(const SceneData& data, const RenderOptions& base, const ProfileSettings& settings);

}  // namespace tracer
