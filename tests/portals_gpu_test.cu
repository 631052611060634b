// @file portals_gpu_test.cu: environment portals on the GPU (label "gpu"; skips without a device): the device scene
// carries them and the shade and miss kernels sample and weigh through them as the CPU does.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "env_light_checks.h"
#include "env_test_scenes.h"
#include "gpu_test_util.h"
#include "test_util.h"
#include "tracer/host/backends.h"

using namespace tracer;

namespace {

// The convex cube with a portal above it under a constant sky reads its exact 0.5 through the portals on the GPU.
TEST(GpuPortals, ConvexDiffuseObjectReadsHalf) {
  TRACER_REQUIRE_GPU();
  test::ExpectConvexDiffuseObjectReadsHalf(
      [](const SceneData& d, const RenderOptions& o) { return RenderCuda(d, o).rgb; }, {EnvSampling::kPortals},
      test::kPortalAboveCube);
}

// And inside a box of six portals, where the shade kernel draws from each face's facing and the miss kernel must weigh
// with the facing the path kept in its flags.
TEST(GpuPortals, ConvexDiffuseObjectInABoxOfPortalsReadsHalf) {
  TRACER_REQUIRE_GPU();
  test::ExpectConvexDiffuseObjectReadsHalf(
      [](const SceneData& d, const RenderOptions& o) { return RenderCuda(d, o).rgb; }, {EnvSampling::kPortals},
      test::PortalBoxAroundCube());
}

// A sheet of diffuse transmission in an open box with two windows (env_light_checks.h's
// TransmittingSheetInAnOpenBox): the GPU's image with portals agrees with its own by importance sampling (image means
// within 4 combined standard errors over 16 seeds; the CPU's twin caught next-event estimation and the path keeping
// different facings at 12), with at most 0.7 of its pixel variance (the CPU measured 0.51).
TEST(GpuPortals, TransmittingSheetInAnOpenBoxAgrees) {
  TRACER_REQUIRE_GPU();
  const std::string dir = test::MakeTempDir();
  const SceneData d = test::TransmittingSheetInAnOpenBox(dir, 32, 32);
  test::ExpectPortalsAgreeWithLessNoise(
      [](const SceneData& sd, const RenderOptions& o) { return RenderCuda(sd, o).rgb; }, d,
      test::QuietRender(32, 32, 8, 5), 16, 0.7, "gpu transmitting sheet");
  test::RemoveTree(dir);
}

// The hall of make_skyhall.py under a constant sky and under a sky with a sun (there with --env-portal-mix 0.5: auto
// gives a sun-dominated sky no portal samples): the GPU's image with portals agrees with the CPU's (image means within
// 4 combined standard errors over 6 seeds each, t-distributed: a false alarm near 1%; pixel by pixel, the seeds' means
// differ by at most 5 combined standard errors in all but 1% of the pixels) and with its own by importance sampling;
// under the constant sky the GPU's pixel variance with portals is at most 0.6 of its own with importance sampling (the
// CPU measured 0.27 at 32 x 18 and 8 spp): the device scene carries the portals and the kernels use them.
TEST(GpuPortals, HallAgreesWithTheCpu) {
  TRACER_REQUIRE_GPU();
  const int w = 48, h = 27, seeds = 6;
  const EnvImage sun = test::SkyWithSun(64, 32, 20, 10, 2000.0f);
  for (bool map : {false, true}) {
    const SceneData d = test::LoadWithMap(test::ProjectScenesDir() + "/skyhall.obj", Vec3(2.5f, 4, 10), Vec3(38, 6, 10),
                                          60.0f, w, h, map ? &sun : nullptr, 0.0f, map ? Vec3(0.0f) : Vec3(1.0f));
    ASSERT_EQ(d.portals.size(), 15u);
    RenderOptions opt = test::QuietRender(w, h, 16, 5);
    if (map) opt.envPortalMix = 0.5f;
    const test::Series cpu = test::RenderSeeds(
        [](const SceneData& sd, const RenderOptions& o) { return RenderCpu(sd, o).rgb; }, d, opt, seeds);
    const test::Series gpu = test::RenderSeeds(
        [](const SceneData& sd, const RenderOptions& o) { return RenderCuda(sd, o).rgb; }, d, opt, seeds);
    opt.envSampling = EnvSampling::kImportance;
    const test::Series naive = test::RenderSeeds(
        [](const SceneData& sd, const RenderOptions& o) { return RenderCuda(sd, o).rgb; }, d, opt, seeds);
    double seCpu, seGpu, seNaive;
    const double mCpu = cpu.Mean(&seCpu), mGpu = gpu.Mean(&seGpu), mNaive = naive.Mean(&seNaive);
    const double vGpu = gpu.PixelVariance(), vNaive = naive.PixelVariance(), vCpu = cpu.PixelVariance();
    std::printf(
        "%s: cpu %.5f +- %.5f, gpu %.5f +- %.5f, gpu importance %.5f +- %.5f; pixel variance cpu %.4g, gpu %.4g, "
        "gpu importance %.4g\n",
        map ? "sun map" : "constant sky", mCpu, seCpu, mGpu, seGpu, mNaive, seNaive, vCpu, vGpu, vNaive);
    EXPECT_NEAR(mGpu, mCpu, 4.0 * std::sqrt(seCpu * seCpu + seGpu * seGpu));
    EXPECT_NEAR(mNaive, mGpu, 4.0 * std::sqrt(seNaive * seNaive + seGpu * seGpu));
    if (!map) {
      EXPECT_LT(vGpu, 0.6 * vNaive);
    }
    const std::vector<double> a = cpu.PixelMeans(), b = gpu.PixelMeans();
    size_t off = 0;
    for (size_t p = 0; p < a.size(); ++p) {
      double va = 0.0, vb = 0.0;  // the seeds' spread at this pixel
      for (int k = 0; k < seeds; ++k) {
        va += (cpu.images[k][3 * p] - a[p]) * (cpu.images[k][3 * p] - a[p]) / (seeds - 1);
        vb += (gpu.images[k][3 * p] - b[p]) * (gpu.images[k][3 * p] - b[p]) / (seeds - 1);
      }
      off += std::fabs(a[p] - b[p]) > 5.0 * std::sqrt((va + vb) / seeds) + 1e-6;
    }
    EXPECT_LE(off, a.size() / 100) << "pixels whose CPU and GPU means differ";
  }
}

}  // namespace
