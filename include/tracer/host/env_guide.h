// @file env_guide.h: learning the environment guide of --env-sampling guided (core/env_guide.h) on the host, before
// the render: per screen tile, shadow rays toward the environment from the tile's primary hits, binned by direction.
#pragma once
#include <memory>
#include <vector>

#include "tracer/core/scene_view.h"
#include "tracer/host/render_options.h"
#include "tracer/host/thread_pool.h"

namespace tracer {

// The learned guide: one cdf row of kEnvGuideBins + 1 entries per tile; view.cdf points into cdf (so the object is
// held by pointer and never copied).
struct EnvGuideHost {
  std::vector<float> cdf;
  EnvGuideView view{};
};

// Shadow rays a tile's statistics trace; the cost is numTiles times this, traced on the host's threads.
constexpr int kEnvGuideSamplesPerTile = 8192, kEnvGuideRounds = 8;

// Learns the guide of `scene` for the image of opt (opt.envGuideTile pixels a tile, opt.envGuideMix): for each
// tile, kEnvGuideSamplesPerTile samples of EnvGuideStatSample over its pixels, summed per bin; the bins' sums,
// normalised, are the tile's pmf. A tile whose samples saw no sky gets the uniform pmf. Deterministic for a seed.
std::unique_ptr<EnvGuideHost> LearnEnvGuide(const SceneView& scene, const RenderOptions& opt, ThreadPool& pool);

// The guide's pmf rows from per-bin sums (numTiles rows of kEnvGuideBins), as cdf rows of kEnvGuideBins + 1.
std::vector<float> EnvGuideCdfFromSums(const std::vector<double>& sums, int numTiles);

}  // namespace tracer
