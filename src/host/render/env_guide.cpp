// @file env_guide.cpp: learning the environment guide on the host (statistics per tile, then cdf rows).
#include "tracer/host/env_guide.h"

#include <algorithm>

#include "tracer/core/light_tiles.h"
#include "tracer/core/rng.h"

namespace tracer {

std::vector<float> EnvGuideCdfFromSums(const std::vector<double>& sums, int numTiles) {
  std::vector<float> cdf(static_cast<size_t>(numTiles) * (kEnvGuideBins + 1));
  for (int t = 0; t < numTiles; ++t) {
    const double* row = sums.data() + static_cast<size_t>(t) * kEnvGuideBins;
    float* out = cdf.data() + static_cast<size_t>(t) * (kEnvGuideBins + 1);
    double total = 0.0;
    for (int b = 0; b < kEnvGuideBins; ++b) total += row[b];
    // A tile that saw no sky: uniform (the mixture stays unbiased either way; this merely wastes nothing new).
    double acc = 0.0;
    out[0] = 0.0f;
    for (int b = 0; b < kEnvGuideBins; ++b) {
      acc += total > 0.0 ? row[b] / total : 1.0 / kEnvGuideBins;
      out[b + 1] = std::min(static_cast<float>(acc), 1.0f);
    }
    out[kEnvGuideBins] = 1.0f;
  }
  return cdf;
}

// Each tile's sums plus those of the tiles around it (3 x 3): a window seen from one tile is seen from its neighbours
// in nearly the same directions, and through openings of 1% of the sphere one tile's rays find too few of them.
std::vector<double> PoolNeighbours(const std::vector<double>& sums, int tilesX, int tilesY) {
  std::vector<double> pooled(sums.size(), 0.0);
  for (int ty = 0; ty < tilesY; ++ty)
    for (int tx = 0; tx < tilesX; ++tx) {
      double* out = pooled.data() + (static_cast<size_t>(ty) * tilesX + tx) * kEnvGuideBins;
      for (int y = std::max(ty - 1, 0); y <= std::min(ty + 1, tilesY - 1); ++y)
        for (int x = std::max(tx - 1, 0); x <= std::min(tx + 1, tilesX - 1); ++x) {
          const double* in = sums.data() + (static_cast<size_t>(y) * tilesX + x) * kEnvGuideBins;
          for (int b = 0; b < kEnvGuideBins; ++b) out[b] += in[b];
        }
    }
  return pooled;
}

std::unique_ptr<EnvGuideHost> LearnEnvGuide(const SceneView& scene, const RenderOptions& opt, ThreadPool& pool) {
  auto guide = std::make_unique<EnvGuideHost>();
  EnvGuideView& g = guide->view;
  g.width = opt.width;
  g.tileSize = opt.envGuideTile;
  g.tilesX = (opt.width + g.tileSize - 1) / g.tileSize;
  const int tilesY = (opt.height + g.tileSize - 1) / g.tileSize;
  g.numTiles = g.tilesX * tilesY;
  g.mix = opt.envGuideMix;
  g.depths = opt.envGuideDepths;
  std::vector<double> sums(static_cast<size_t>(g.numTiles) * kEnvGuideBins, 0.0);
  // Rounds: the first samples the environment's own way, each later one the mixture learned so far. Through an
  // opening of 1% of the sphere the first round's hits are few; later rounds aim at the openings found, and their
  // estimates (value / the mixture's pdf) are unbiased for the same bin integrals, so all rounds' sums add up.
  const int perRound = kEnvGuideSamplesPerTile / kEnvGuideRounds;
  for (int round = 0; round < kEnvGuideRounds; ++round) {
    const EnvGuideView learned = g;
    pool.ParallelForEach(static_cast<size_t>(g.numTiles), [&](size_t t) {
      const int x0 = static_cast<int>(t % g.tilesX) * g.tileSize, y0 = static_cast<int>(t / g.tilesX) * g.tileSize;
      const int w = std::min(g.tileSize, opt.width - x0), h = std::min(g.tileSize, opt.height - y0);
      double* row = sums.data() + t * kEnvGuideBins;
      for (int i = 0; i < perRound; ++i) {
        // The tile's pixels in turn; sample indices above any a render uses (its random numbers are the guide's own).
        const int k = round * perRound + i, px = x0 + k % (w * h) % w, py = y0 + k % (w * h) / w;
        const uint32_t pixel = static_cast<uint32_t>(py) * static_cast<uint32_t>(opt.width) + px;
        const PathRng rng{opt.seed ^ 0x5eedu, pixel, 0xC0000000u + static_cast<uint32_t>(k)};
        int bin;
        const float v = EnvGuideStatSample<false>(scene, learned, learned.cdf ? static_cast<int>(t) : -1, px, py,
                                                  rng.Get(0), rng.Get(1), rng.Get(2), rng.Get(3), bin);
        row[bin] += v;
      }
    });
    guide->cdf = EnvGuideCdfFromSums(PoolNeighbours(sums, g.tilesX, g.numTiles / g.tilesX), g.numTiles);
    g.cdf = guide->cdf.data();
  }
  return guide;
}

}  // namespace tracer
