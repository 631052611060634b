// @file env_light_checks.h: the environment-light checks with known answers, run on the CPU (env_map_test.cpp) and on
// the GPU (render_gpu_test.cu) alike: a convex diffuse object of albedo 0.5 under a constant environment of 1 reads
// 0.5 on it, and a floor under a sky with a tiny sun, importance sampling against BSDF sampling only.
//
// Tolerances: means are compared with 4 standard errors estimated from the spread of independent seeds
// (t-distributed with seeds - 1 degrees of freedom: about a 1% false alarm at 8 seeds).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "env_test_scenes.h"
#include "test_util.h"
#include "tracer/host/scene_loader.h"

namespace tracer::test {

// A scene's render data from an OBJ with a camera, and the environment map img (unless null), scale 1.
inline SceneData LoadWithMap(const std::string& obj, Vec3 eye, Vec3 at, float fov, int w, int h, const EnvImage* img,
                             float rotateDegrees = 0.0f, Vec3 constant = Vec3(0.0f)) {
  Scene scene = LoadScene(obj);
  SceneData d = BuildSceneData(scene, Camera::LookAt(eye, at, Vec3(0, 1, 0), fov, w, h), constant);
  if (img) SetEnvironmentMap(d, *img, 1.0f, rotateDegrees);
  return d;
}

struct Series {
  std::vector<std::vector<float>> images;
  // Mean over seeds of each pixel's first channel, and the standard error of the image mean.
  std::vector<double> PixelMeans() const {
    std::vector<double> m(images[0].size() / 3, 0.0);
    for (const auto& img : images)
      for (size_t p = 0; p < m.size(); ++p) m[p] += img[3 * p] / images.size();
    return m;
  }
  // Each pixel's variance over the seeds' images (first channel), averaged over the pixels.
  double PixelVariance() const {
    const std::vector<double> mean = PixelMeans();
    double v = 0.0;
    for (const auto& img : images)
      for (size_t p = 0; p < mean.size(); ++p) v += (img[3 * p] - mean[p]) * (img[3 * p] - mean[p]);
    return v / (static_cast<double>(mean.size()) * (images.size() - 1));
  }
  double Mean(double* standardError) const {
    std::vector<double> means;
    for (const auto& img : images) {
      double s = 0;
      for (size_t p = 0; p < img.size(); p += 3) s += img[p];
      means.push_back(s / (img.size() / 3));
    }
    double m = 0, var = 0;
    for (double x : means) m += x / means.size();
    for (double x : means) var += (x - m) * (x - m) / (means.size() - 1);
    *standardError = std::sqrt(var / means.size());
    return m;
  }
};

// A renderer: RenderCpu's or RenderCuda's image.
using RenderImageFn = std::function<std::vector<float>(const SceneData&, const RenderOptions&)>;

inline Series RenderSeeds(const RenderImageFn& render, const SceneData& d, RenderOptions opt, int seeds) {
  Series s;
  for (int k = 0; k < seeds; ++k) {
    opt.seed = 500u + 31u * k;
    s.images.push_back(render(d, opt));
  }
  return s;
}

// A convex diffuse object of albedo 0.5 under an environment of radiance 1 reflects 0.5 in every direction: light
// reflected once leaves it for good. A pixel that sees the object over a fraction f of its samples reads
// 0.5 f + (1 - f); the same seed at depth 0 (where the object is black and the environment 1) reads 1 - f with the
// same camera rays, so each pixel's expected value is known exactly. Checked for a turned cube (so that no face is
// axis-aligned) under the constant --env colour and under a constant map, with and without importance sampling.
// `more`: OBJ text after the cube (env_test_scenes.h's kPortalAboveCube: a portal, which changes sampling only).
inline void ExpectConvexDiffuseObjectReadsHalf(const RenderImageFn& render,
                                               const std::vector<EnvSampling>& samplings = {EnvSampling::kImportance,
                                                                                            EnvSampling::kBsdfOnly},
                                               const std::string& more = "") {
  const std::string dir = test::MakeTempDir();
  const int w = 24, h = 24, seeds = 6;
  const EnvImage ones = test::ConstantMap(32, 16, 1.0f);
  int sceneIndex = 0;
  for (auto [axis, angle] : {std::pair<Vec3, float>{Vec3(1, 2, 3), 0.7f}, {Vec3(-2, 1, 0.5f), 2.1f}}) {
    const std::string obj = test::WriteCubeScene(dir, "cube" + std::to_string(sceneIndex++), 0.5f, axis, angle, more);
    for (bool useMap : {false, true})
      for (EnvSampling sampling : samplings) {
        const SceneData d = LoadWithMap(obj, Vec3(0.5f, 1.0f, 5.0f), Vec3(0.0f), 40.0f, w, h, useMap ? &ones : nullptr,
                                        0.0f, useMap ? Vec3(0.0f) : Vec3(1.0f));
        ASSERT_GT(d.env.params.pick, 0.99f);  // no emitters: the environment is the only light
        RenderOptions opt = test::QuietRender(w, h, 16, 4);
        opt.envSampling = sampling;
        const Series lit = RenderSeeds(render, d, opt, seeds);
        opt.maxDepth = 0;
        const Series bare = RenderSeeds(render, d, opt, seeds);
        const std::vector<double> got = lit.PixelMeans(), background = bare.PixelMeans();
        // Pixels fully on the object: mean 0.5 (within 4 standard errors from the spread of the seeds' means); every
        // pixel: its exact expectation, within what the noise (16 spp x 6 seeds, per-sample spread at most 0.5)
        // allows at 5 standard deviations.
        double worst = 0;
        std::vector<double> seedMeans(seeds, 0.0);
        int count = 0;
        for (size_t p = 0; p < got.size(); ++p) {
          const double expect = 0.5 * (1.0 - background[p]) + background[p];
          worst = std::max(worst, std::fabs(got[p] - expect));
          if (background[p] != 0.0) continue;
          ++count;
          for (int k = 0; k < seeds; ++k) seedMeans[k] += lit.images[k][3 * p];
        }
        const std::string what =
            std::string(useMap ? "map" : "--env") + (sampling == EnvSampling::kBsdfOnly  ? ", BSDF only"
                                                     : sampling == EnvSampling::kGuided  ? ", guided"
                                                     : sampling == EnvSampling::kPortals ? ", portals"
                                                                                         : ", importance");
        ASSERT_GT(count, 100) << "the cube should fill much of the view";
        double mean = 0, var = 0;
        for (double& m : seedMeans) mean += (m /= count) / seeds;
        for (double m : seedMeans) var += (m - mean) * (m - mean) / (seeds - 1);
        const double se = std::sqrt(var / seeds);
        std::printf("cube %d, %s: mean on the object %.5f +- %.5f\n", sceneIndex, what.c_str(), mean, se);
        EXPECT_LT(se, 0.005) << what;
        EXPECT_NEAR(mean, 0.5, 4 * se + 2e-4) << what;
        EXPECT_LT(worst, 5 * 0.5 / std::sqrt(16.0 * seeds)) << what;
      }
  }
  test::RemoveTree(dir);
}

// A diffuse floor under a sky with a tiny bright sun (nothing else in the scene): every pixel's expected value is
// the analytic FloorRadiance. Both samplings are unbiased (image means within 4 standard errors of it), and at
// equal spp importance sampling has at most a third of the RMSE of BSDF sampling alone.
inline void ExpectSunAndSkyImportanceSamplingCutsRmse(const RenderImageFn& render) {
  const std::string dir = test::MakeTempDir();
  const std::string obj = test::WriteFloorScene(dir, 0.6f);
  // 64 x 32: the sun one texel at row 8 (theta about 47 degrees), 4000 times the sky.
  const EnvImage sky = test::SkyWithSun(64, 32, 40, 8, 2000.0f);
  const double expected = test::FloorRadiance(sky, 0.6);
  const int w = 24, h = 24, seeds = 8;
  const SceneData d = LoadWithMap(obj, Vec3(0, 1, 0), Vec3(0, 0, -1.5f), 40.0f, w, h, &sky, 23.0f);
  double rmse[2], mean[2], se[2];
  for (int k = 0; k < 2; ++k) {
    RenderOptions opt = test::QuietRender(w, h, 16, 3);
    opt.envSampling = k == 0 ? EnvSampling::kImportance : EnvSampling::kBsdfOnly;
    const Series s = RenderSeeds(render, d, opt, seeds);
    double sq = 0, n = 0;
    for (const auto& img : s.images)
      for (size_t p = 0; p < img.size(); p += 3) sq += (img[p] - expected) * (img[p] - expected), n += 1;
    rmse[k] = std::sqrt(sq / n);
    mean[k] = s.Mean(&se[k]);
  }
  std::printf(
      "floor under sun and sky: expected %.4f; importance mean %.4f +- %.4f, RMSE %.4f; BSDF only mean %.4f "
      "+- %.4f, RMSE %.4f (ratio %.3f)\n",
      expected, mean[0], se[0], rmse[0], mean[1], se[1], rmse[1], rmse[0] / rmse[1]);
  EXPECT_NEAR(mean[0], expected, 4 * se[0] + 1e-4 * expected);
  EXPECT_NEAR(mean[1], expected, 4 * se[1] + 1e-4 * expected);
  EXPECT_LT(se[0], 0.01 * expected) << "too noisy for the bias check to mean anything";
  EXPECT_LE(rmse[0], rmse[1] / 3.0);
  test::RemoveTree(dir);
}

// Renders scene d with --env-sampling importance and portals (seeds each), prints both means and pixel variances,
// and checks that the means agree within 4 combined standard errors (t-distributed over the seeds: a false alarm
// near 1%) and that the portals' pixel variance is at most maxRatio times importance's.
inline void ExpectPortalsAgreeWithLessNoise(const RenderImageFn& render, const SceneData& d, RenderOptions opt,
                                            int seeds, double maxRatio, const char* what) {
  double mean[2], se[2], var[2];
  for (int k = 0; k < 2; ++k) {
    opt.envSampling = k == 0 ? EnvSampling::kImportance : EnvSampling::kPortals;
    const Series s = RenderSeeds(render, d, opt, seeds);
    mean[k] = s.Mean(&se[k]);
    var[k] = s.PixelVariance();
  }
  std::printf("%s: importance %.5f +- %.5f (pixel variance %.4g), portals %.5f +- %.5f (pixel variance %.4g, %.2fx)\n",
              what, mean[0], se[0], var[0], mean[1], se[1], var[1], var[1] / var[0]);
  EXPECT_GT(mean[0], 0.0) << what;
  EXPECT_NEAR(mean[1], mean[0], 4.0 * std::sqrt(se[0] * se[0] + se[1] * se[1])) << what;
  EXPECT_LT(var[1], maxRatio * var[0]) << what;
}

// The open box's inside, quads in order: [-1, 1] x [0, 2] x [-1, 1], floor, the walls z = -1, z = 1, x = -1, x = 1
// (with windowInX, four strips around a window over y in [0.3, 0.9], |z| < kOpenBoxHole), and the lid at y = 2 as four
// strips around its hole |x|, |z| < kOpenBoxHole.
constexpr float kOpenBoxHole = 0.3f;
inline std::vector<std::array<Vec3, 4>> OpenBoxQuads(bool windowInX) {
  const float h = kOpenBoxHole;
  std::vector<std::array<Vec3, 4>> q = {{Vec3(-1, 0, -1), Vec3(-1, 0, 1), Vec3(1, 0, 1), Vec3(1, 0, -1)},
                                        {Vec3(-1, 0, -1), Vec3(1, 0, -1), Vec3(1, 2, -1), Vec3(-1, 2, -1)},
                                        {Vec3(-1, 0, 1), Vec3(-1, 2, 1), Vec3(1, 2, 1), Vec3(1, 0, 1)},
                                        {Vec3(-1, 0, -1), Vec3(-1, 2, -1), Vec3(-1, 2, 1), Vec3(-1, 0, 1)}};
  if (windowInX) {
    q.push_back({Vec3(1, 0, -1), Vec3(1, 0, 1), Vec3(1, 0.3f, 1), Vec3(1, 0.3f, -1)});
    q.push_back({Vec3(1, 0.9f, -1), Vec3(1, 0.9f, 1), Vec3(1, 2, 1), Vec3(1, 2, -1)});
    q.push_back({Vec3(1, 0.3f, -1), Vec3(1, 0.3f, -h), Vec3(1, 0.9f, -h), Vec3(1, 0.9f, -1)});
    q.push_back({Vec3(1, 0.3f, h), Vec3(1, 0.3f, 1), Vec3(1, 0.9f, 1), Vec3(1, 0.9f, h)});
  } else {
    q.push_back({Vec3(1, 0, -1), Vec3(1, 0, 1), Vec3(1, 2, 1), Vec3(1, 2, -1)});
  }
  q.push_back({Vec3(-1, 2, -1), Vec3(1, 2, -1), Vec3(1, 2, -h), Vec3(-1, 2, -h)});
  q.push_back({Vec3(-1, 2, h), Vec3(1, 2, h), Vec3(1, 2, 1), Vec3(-1, 2, 1)});
  q.push_back({Vec3(-1, 2, -h), Vec3(-h, 2, -h), Vec3(-h, 2, h), Vec3(-1, 2, h)});
  q.push_back({Vec3(h, 2, -h), Vec3(1, 2, -h), Vec3(1, 2, h), Vec3(h, 2, h)});
  return q;
}

// The open box (OpenBoxQuads, with the window in x = 1), written for pbrt-v4 into dir, with a sheet of diffuse
// transmission (reflectance 0.3, transmittance 0.6) hanging under the lid's hole at y = 1, a second window below it in
// the wall x = 1 and a portal over each, under a constant sky of 1, seen from below the sheet at w x hgt.
inline SceneData TransmittingSheetInAnOpenBox(const std::string& dir, int w, int hgt) {
  std::string points, indices;
  int n = 0;
  auto quad = [&](Vec3 a, Vec3 b, Vec3 c, Vec3 d) {
    for (Vec3 v : {a, b, c, d})
      points += std::to_string(v.x) + " " + std::to_string(v.y) + " " + std::to_string(v.z) + "  ";
    for (int k : {0, 1, 2, 0, 2, 3}) indices += std::to_string(n + k) + " ";
    n += 4;
  };
  auto mesh = [&]() {
    const std::string m =
        "Shape \"trianglemesh\" \"point3 P\" [" + points + "] \"integer indices\" [" + indices + "]\n";
    points.clear(), indices.clear(), n = 0;
    return m;
  };
  for (const std::array<Vec3, 4>& q : OpenBoxQuads(true)) quad(q[0], q[1], q[2], q[3]);
  const std::string walls = mesh();
  const float h = kOpenBoxHole;
  quad(Vec3(-0.6f, 1, -0.6f), Vec3(0.6f, 1, -0.6f), Vec3(0.6f, 1, 0.6f), Vec3(-0.6f, 1, 0.6f));
  WriteFile(dir + "/sheet.pbrt",
            "Scale -1 1 1 Camera \"perspective\" WorldBegin\n"
            "LightSource \"infinite\" \"rgb L\" [1 1 1] \"point3 portal\" [-0.3 2.2 -0.3  0.3 2.2 -0.3  0.3 2.2 "
            "0.3  -0.3 2.2 0.3]\nMaterial \"diffuse\" \"rgb reflectance\" [0.5 0.5 0.5]\n" +
                walls +
                "Material \"diffusetransmission\" \"rgb reflectance\" [0.3 0.3 0.3] \"rgb transmittance\" "
                "[0.6 0.6 0.6]\n" +
                mesh());
  Scene scene = LoadScene(dir + "/sheet.pbrt");  // and a portal over the window (pbrt-v4 has one per infinite light)
  for (Vec3 v : {Vec3(1.2f, 0.3f, -h), Vec3(1.2f, 0.3f, h), Vec3(1.2f, 0.9f, h), Vec3(1.2f, 0.3f, -h),
                 Vec3(1.2f, 0.9f, h), Vec3(1.2f, 0.9f, -h)})
    scene.portals.push_back(v);
  return BuildSceneData(scene, Camera::LookAt(Vec3(0, 0.4f, 0.9f), Vec3(0, 1, -0.3f), Vec3(0, 1, 0), 70.0f, w, hgt),
                        Vec3(1.0f));
}

}  // namespace tracer::test
