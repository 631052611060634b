// @file env_guide_test.cpp: --env-sampling guided (core/env_guide.h): the mixture's pdf integrates to 1, the sampled
// directions follow it (chi-square), the pdf a sample reports is the one a miss recomputes (MIS), and on the hall of
// make_skyhall.py the guided render's mean equals the unguided one's within the noise, and the guide's shadow rays
// find the openings far more often than the environment's own.
#include "tracer/core/env_guide.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "env_light_checks.h"
#include "tracer/core/light_tiles.h"
#include "tracer/host/backends.h"
#include "tracer/host/env_guide.h"

namespace tracer {
namespace {

// A guide of `tiles` rows with random, uneven bin weights (some bins empty), mix 0.5.
EnvGuideHost RandomGuide(int tiles, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> sums(static_cast<size_t>(tiles) * kEnvGuideBins);
  for (double& s : sums) s = u(rng) < 0.7 ? 0.0 : std::pow(u(rng), 4.0);
  EnvGuideHost g;
  g.cdf = EnvGuideCdfFromSums(sums, tiles);
  g.view.cdf = g.cdf.data();
  g.view.width = 8;
  g.view.tileSize = 8;
  g.view.tilesX = 1;
  g.view.numTiles = tiles;
  g.view.mix = 0.5f;
  g.view.depths = 1;
  return g;
}

// Midpoint integration of the mixture's pdf over the sphere on a grid of rows x cols cells in (theta, azimuth) of the
// map's parameterisation (u, v): with rows and cols multiples of the map's size, each cell lies inside one texel,
// where the map's pdf is constant; the guide's bins cut cells, an error of the order of one cell's share.
double IntegratePdf(const EnvMapView& env, const EnvGuideView& g, int tile, int rows, int cols) {
  double sum = 0.0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      float sinTheta;
      const Vec3 d = EnvDirection((c + 0.5f) / cols, (r + 0.5f) / rows, sinTheta);
      float pdf;
      EnvRadianceGuided(env, Vec3(1.0f), g, tile, d, pdf);
      sum += pdf * sinTheta * (kPi / rows) * (2.0 * kPi / cols);
    }
  return sum;
}

// The same over cells in (y, azimuth), sub x sub of them in each guide bin: exact up to rounding where the
// environment's pdf is constant (a constant sky), since the guide's pdf is constant in each bin.
double IntegrateOnGuideBins(const EnvGuideView& g, int tile, int sub) {
  const int rows = kEnvGuideRows * sub, cols = kEnvGuideCols * sub;
  double sum = 0.0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const float y = -1.0f + 2.0f * (r + 0.5f) / rows, phi = kPi * (2.0f * (c + 0.5f) / cols - 1.0f);
      const float sy = std::sqrt(1.0f - y * y);
      float pdf;
      EnvRadianceGuided(EnvMapView{}, Vec3(1.0f), g, tile, Vec3(sy * std::cos(phi), y, sy * std::sin(phi)), pdf);
      sum += pdf * (4.0 * kPi / (static_cast<double>(rows) * cols));
    }
  return sum;
}

TEST(EnvGuide, BinsAndDirectionsAgree) {
  for (int b = 0; b < kEnvGuideBins; ++b)
    for (float f : {0.01f, 0.5f, 0.99f}) ASSERT_EQ(EnvGuideBin(EnvGuideDirection(b, f, 1.0f - f)), b) << b;
}

TEST(EnvGuide, MixturePdfIntegratesToOne) {
  const EnvGuideHost g = RandomGuide(3, 11);
  for (int t = 0; t < 3; ++t) EXPECT_NEAR(IntegrateOnGuideBins(g.view, t, 2), 1.0, 1e-5) << "tile " << t;
  // Under a map with a sun (1 of 2048 texels, most of the map's pmf): cells inside the map's texels.
  SceneData d;
  SetEnvironmentMap(d, test::SkyWithSun(64, 32, 40, 8, 2000.0f), 1.0f, 23.0f);
  const EnvMapView map = d.View().env;
  EXPECT_NEAR(IntegratePdf(map, g.view, 1, 512, 1024), 1.0, 1e-3);
}

// Directions drawn by SampleEnvGuided, counted per guide bin, against the counts the mixture's pdf predicts under a
// constant sky ((1 - mix) / bins + mix pmf(bin)). 511 degrees of freedom: the bound dof + 6 sqrt(2 dof) is a false
// alarm below 1e-6; a pdf off by 10% in the guided bins would exceed it by far at this sample count. Each sample's
// reported pdf must be what a miss in that direction recomputes (EnvRadianceGuided), or MIS would be biased.
TEST(EnvGuide, SamplesFollowTheMixturePdf) {
  const EnvGuideHost g = RandomGuide(2, 5);
  const EnvMapView constant{};
  const int n = 2000000, tile = 1;
  std::vector<double> count(kEnvGuideBins, 0.0);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int i = 0; i < n; ++i) {
    const EnvSample s = SampleEnvGuided(constant, Vec3(1.0f), g.view, tile, u(rng), u(rng));
    ASSERT_GT(s.pdf, 0.0f);
    float pdf;
    EnvRadianceGuided(constant, Vec3(1.0f), g.view, tile, s.wi, pdf);
    ASSERT_NEAR(s.pdf, pdf, 1e-5f * pdf);
    count[EnvGuideBin(s.wi)] += 1.0;
  }
  const float* cdf = g.cdf.data() + static_cast<size_t>(tile) * (kEnvGuideBins + 1);
  double chi2 = 0.0;
  for (int b = 0; b < kEnvGuideBins; ++b) {
    const double expect = n * (0.5 / kEnvGuideBins + 0.5 * (cdf[b + 1] - cdf[b]));
    chi2 += (count[b] - expect) * (count[b] - expect) / expect;
  }
  const double dof = kEnvGuideBins - 1;
  std::printf("chi-square %.1f over %g degrees of freedom\n", chi2, dof);
  EXPECT_LT(chi2, dof + 6.0 * std::sqrt(2.0 * dof));
}

// The convex cube under a constant sky (env_light_checks.h) reads its exact answer with the guide too.
TEST(EnvGuide, ConvexDiffuseObjectReadsHalf) {
  test::ExpectConvexDiffuseObjectReadsHalf(
      [](const SceneData& d, const RenderOptions& o) { return RenderCpu(d, o).rgb; }, {EnvSampling::kGuided});
}

// The hall: the image mean with the guide (at the first hits only, the default, and at every vertex) agrees with the
// mean without it within 4 combined standard errors (from 6 seeds each: t-distributed, a false alarm near 1% per
// comparison).
TEST(EnvGuide, HallMeanAgrees) {
  const std::string obj = test::ProjectScenesDir() + "/skyhall.obj";
  const int w = 32, h = 18;
  const SceneData d =
      test::LoadWithMap(obj, Vec3(2.5f, 4, 10), Vec3(38, 6, 10), 60.0f, w, h, nullptr, 0.0f, Vec3(1.0f));
  double mean[3], se[3];
  for (int k = 0; k < 3; ++k) {
    RenderOptions opt = test::QuietRender(w, h, 8, 5);
    opt.envSampling = k == 0 ? EnvSampling::kImportance : EnvSampling::kGuided;
    opt.envGuideTile = 8;
    opt.envGuideDepths = k == 2 ? 8 : 1;
    mean[k] =
        test::RenderSeeds([](const SceneData& sd, const RenderOptions& o) { return RenderCpu(sd, o).rgb; }, d, opt, 6)
            .Mean(&se[k]);
  }
  std::printf("hall mean: importance %.5f +- %.5f, guided %.5f +- %.5f, guided at every vertex %.5f +- %.5f\n", mean[0],
              se[0], mean[1], se[1], mean[2], se[2]);
  EXPECT_GT(mean[0], 0.0);
  for (int k = 1; k < 3; ++k)
    EXPECT_NEAR(mean[k], mean[0], 4.0 * std::sqrt(se[0] * se[0] + se[k] * se[k])) << "guided, depths " << k;
}

// The guide finds the openings: from the first hit at the centre of each of the hall's guide tiles, shadow rays
// drawn from the guide (the u1 < mix branch) reach the sky at least 5 times as often as the environment's own
// (uniform) ones, summed over the tiles (measured: 9.3 times; a guide that learned nothing would give 1,
// one that learned the wrong bins less). 4000 rays per tile and way: deterministic.
TEST(EnvGuide, HallGuideFindsTheOpenings) {
  const int w = 128, h = 72;
  RenderOptions opt = test::QuietRender(w, h, 1, 5);
  const SceneData d = test::LoadWithMap(test::ProjectScenesDir() + "/skyhall.obj", Vec3(2.5f, 4, 10), Vec3(38, 6, 10),
                                        60.0f, w, h, nullptr, 0.0f, Vec3(1.0f));
  ThreadPool pool(ThreadPool::ThreadsFor(0));
  const std::unique_ptr<EnvGuideHost> g = LearnEnvGuide(d.View(), opt, pool);
  const SceneView s = d.View();
  long long sky[2] = {0, 0};
  for (int t = 0; t < g->view.numTiles; ++t) {
    const int px = (t % g->view.tilesX) * g->view.tileSize + g->view.tileSize / 2,
              py = (t / g->view.tilesX) * g->view.tileSize + g->view.tileSize / 2;
    const Ray r = s.camera.Generate(px, py, 0.5f, 0.5f);
    const HitRecord hit = BinaryBvhTraversal::Trace<false, false>(s, r);
    if (hit.tri < 0) continue;
    const Surface sf = GetSurface<false>(s, hit);
    const Vec3 n = Dot(sf.ng, r.d) > 0.0f ? -sf.ng : sf.ng;
    for (int k = 0; k < 4000; ++k)
      for (int way = 0; way < 2; ++way) {
        const float u1 = Random(3, t, k, 0), u2 = Random(3, t, k, 1);
        const EnvSample e = way == 0 ? SampleEnvGuided(s.env, s.environment, g->view, t, u1 * g->view.mix, u2)
                                     : SampleEnvironment(s.env, s.environment, u1, u2);
        if (Dot(e.wi, n) <= 0.0f) continue;
        Ray q;
        q.o = OffsetRayOrigin(sf.p, n, e.wi, s.offsetFloor);
        q.d = e.wi;
        q.tmax = kInf;
        q.index = 0;
        sky[way] += BinaryBvhTraversal::Trace<true, false>(s, q).tri < 0 ? 1 : 0;
      }
  }
  std::printf("shadow rays reaching the sky: guided %lld, environment's own %lld\n", sky[0], sky[1]);
  ASSERT_GT(sky[1], 0);
  EXPECT_GT(sky[0], 5 * sky[1]);
}

}  // namespace
}  // namespace tracer
