// @file delta_lights_gpu_test.cu: point, spot and distant lights and two-sided area lights on the GPU (label "gpu";
// skips without a device): the analytic checks of delta_light_checks.h with the CUDA renderer, and its image of a
// scene lit by every kind of light against the CPU's.
#include <gtest/gtest.h>

#include <cstdio>

#include "delta_light_checks.h"
#include "gpu_test_util.h"
#include "image_compare.h"
#include "tracer/host/backends.h"

using namespace tracer;

namespace {

std::vector<float> Gpu(const SceneData& d, const RenderOptions& o) { return RenderCuda(d, o).rgb; }

}  // namespace

TEST(GpuDeltaLights, PointSpotAndDistantLightsOnAPlane) {
  TRACER_REQUIRE_GPU();
  test::FloorLights point, spot, sun;
  point.points.push_back({{0.7, 2.0, -0.4}, {2.0, 3.0, 4.0}});
  spot.spots.push_back({{0.3, 2.0, 0.2}, {0.8, 0.0, 0.2}, {6.0, 5.0, 4.0}, 30.0, 10.0});
  sun.distants.push_back({{1.0, 2.0, 0.5}, {0.0, 0.0, 0.0}, {1.0, 2.0, 3.0}});
  EXPECT_EQ(test::ExpectSingleLightExact(Gpu, point, "point light"), 32 * 32);
  EXPECT_LT(test::ExpectSingleLightExact(Gpu, spot, "spot light"), 32 * 32);
  EXPECT_EQ(test::ExpectSingleLightExact(Gpu, sun, "distant light"), 32 * 32);
}

TEST(GpuDeltaLights, SelectionByPowerAndByTilesIsUnbiased) {
  TRACER_REQUIRE_GPU();
  test::ExpectSelectionUnbiased(Gpu, false);
  test::ExpectSelectionUnbiased(Gpu, true);
}

TEST(GpuDeltaLights, EmittersMisWeightsCountTheDeltaLightsShare) {
  TRACER_REQUIRE_GPU();
  test::ExpectEmitterMisWithDeltaLights(Gpu);
}

TEST(GpuDeltaLights, TwoSidedAreaLightsEmitOnBothSides) {
  TRACER_REQUIRE_GPU();
  test::ExpectTwoSidedEmission(Gpu);
}

// GPU and CPU images of the selection scene (point, spot, distant and area lights and a sky; and a two-sided area
// light seen from its back) agree block by block within 4 standard errors from 8 independent seeds each (Student's t
// with ~14 degrees of freedom: about 0.1% per block), by power and under the tile guide.
TEST(GpuAgreement, DeltaAndTwoSidedLitScene) {
  TRACER_REQUIRE_GPU();
  test::FloorLights lights = test::SelectionLights();
  lights.rects.push_back({-0.4, 0.6, -0.5, 0.3, 1.0, {2.0, 3.0, 4.0}, true, true});
  const int w = 32, h = 32, seeds = 8;
  for (bool tiles : {false, true}) {
    SceneData d = test::FloorData(lights, w, h);
    RenderOptions opt = test::QuietRender(w, h, 64, 4);
    if (tiles) {
      BuildLightClusters(d, 8);
      opt.lightSampling = LightSampling::kTiles;
      opt.tileSize = 8;
    }
    auto run = [&](bool gpu) {
      return test::RenderBlocks(
          [&](unsigned s) {
            RenderOptions o = opt;
            o.seed = gpu ? s + 1000u : s;  // independent estimates: the same seed draws the same numbers
            return gpu ? Gpu(d, o) : RenderCpu(d, o).rgb;
          },
          seeds, w, h, 8);
    };
    const test::BlockSeries cpu = run(false), gpu = run(true);
    size_t worst = 0;
    const double z = test::MaxBlockZ(cpu, gpu, &worst);
    std::printf("%s: max block z = %.2f (block %zu: cpu %.4f +- %.4f, gpu %.4f +- %.4f)\n", tiles ? "tiles" : "power",
                z, worst, cpu.mean[worst], cpu.standardError[worst], gpu.mean[worst], gpu.standardError[worst]);
    EXPECT_TRUE(cpu.allFinite);
    EXPECT_TRUE(gpu.allFinite);
    EXPECT_LT(z, 4.0) << (tiles ? "tiles" : "power");
  }
}
