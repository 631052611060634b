// @file aov_test.cpp: auxiliary outputs (--aov) on the CPU: the list is parsed strictly; the first-hit outputs of
// a known scene are its albedo, normal, camera distance and position (misses as documented); the variance of the
// pixel means agrees with the spread of independent renders and leaves the image byte for byte as it was; an .exr
// holds every layer, read back with OpenEXR, and other formats get files beside them.
#include "tracer/host/aov.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "env_test_scenes.h"
#include "test_util.h"
#include "tracer/host/backends.h"
#include "tracer/host/image_io.h"
#include "tracer/host/scene_loader.h"

using namespace tracer;

namespace {

TEST(Aov, ListIsParsedStrictly) {
  EXPECT_EQ(ParseAovList("albedo"), kAovAlbedo);
  EXPECT_EQ(ParseAovList("depth,normal,albedo"), kAovAlbedo | kAovNormal | kAovDepth);
  EXPECT_EQ(ParseAovList("albedo,normal,depth,position,variance"),
            kAovAlbedo | kAovNormal | kAovDepth | kAovPosition | kAovVariance);
  for (const char* bad : {"", "albedo,", "Albedo", "albedo,depht", " normal"}) {
    try {
      ParseAovList(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--aov"), std::string::npos) << e.what();
    }
  }
}

// A quad of Kd (0.3, 0.5, 0.7) at z = -2 facing +z, covering the left half of a 40-degree view from the origin
// (x <= 0); a mirror (Ks 0.9, illum 3, black Kd) strip below it. Every left-half pixel sees the quad: albedo Kd,
// normal +z, position z = -2, and camera distance 2 / cos of the ray's angle (the pixel's rays spread over its
// footprint: within 0.5% of the centre ray's). The right half sees nothing: depth kAovMissDepth, the rest 0.
TEST(Aov, FirstHitOutputsOfAKnownScene) {
  const std::string dir = test::MakeTempDir();
  test::WriteFile(dir + "/q.mtl", "newmtl q\nKd 0.3 0.5 0.7\nKs 0 0 0\n");
  test::WriteFile(dir + "/q.obj", "mtllib q.mtl\nusemtl q\nv -5 -5 -2\nv 0 -5 -2\nv 0 5 -2\nv -5 5 -2\nf 1 2 3 4\n");
  const int n = 32;
  const SceneData d = BuildSceneData(
      LoadScene(dir + "/q.obj"), Camera::LookAt(Vec3(0.0f), Vec3(0, 0, -1), Vec3(0, 1, 0), 40.0f, n, n), Vec3(0.0f));
  AovImages aov;
  const int all = kAovAlbedo | kAovNormal | kAovDepth | kAovPosition;
  ComputeFirstHitAovs(d, test::QuietRender(n, n, 16, 4), all, 8, aov);
  ASSERT_EQ(aov.albedo.size(), static_cast<size_t>(n * n * 3));
  ASSERT_EQ(aov.depth.size(), static_cast<size_t>(n * n));
  const double t = std::tan(20.0 * 3.14159265358979323846 / 180.0);
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      const size_t p = static_cast<size_t>(y) * n + x;
      if (x == n / 2 - 1 || x == n / 2) continue;  // the edge x = 0 crosses these pixels
      if (x < n / 2) {
        EXPECT_NEAR(aov.albedo[p * 3 + 0], 0.3f, 1e-6f);
        EXPECT_NEAR(aov.albedo[p * 3 + 1], 0.5f, 1e-6f);
        EXPECT_NEAR(aov.albedo[p * 3 + 2], 0.7f, 1e-6f);
        EXPECT_NEAR(aov.normal[p * 3 + 2], 1.0f, 1e-6f);
        EXPECT_NEAR(aov.normal[p * 3 + 0], 0.0f, 1e-6f);
        EXPECT_NEAR(aov.position[p * 3 + 2], -2.0f, 1e-5f);
        const double u = ((x + 0.5) / n * 2.0 - 1.0) * t, v = (1.0 - (y + 0.5) / n * 2.0) * t;
        const double expected = 2.0 * std::sqrt(1.0 + u * u + v * v);
        EXPECT_NEAR(aov.depth[p], expected, 0.005 * expected) << "pixel " << x << ", " << y;
        EXPECT_NEAR(aov.position[p * 3 + 0], 2.0 * u, 0.05) << "pixel " << x << ", " << y;
      } else {
        EXPECT_EQ(aov.depth[p], kAovMissDepth);
        EXPECT_EQ(aov.albedo[p * 3], 0.0f);
        EXPECT_EQ(aov.normal[p * 3 + 2], 0.0f);
        EXPECT_EQ(aov.position[p * 3 + 2], 0.0f);
      }
    }
  test::RemoveTree(dir);
}

double Mean(const std::vector<float>& v) {
  double s = 0.0;
  for (float x : v) s += x;
  return s / static_cast<double>(v.size());
}

// The variance of each pixel's mean, from the spread of 16 passes' means, against the spread of the means of 24
// renders with other seeds (a diffuse floor under a sky with a small sun, 8x8 pixels at 50 spp): their ratio,
// summed over the pixels, is within 15% of 1 (a variance of the samples instead of the mean would be 50 times
// too large, one over the passes several times). The image with the variance output is the image without it, byte for
// byte.
TEST(Aov, VarianceOfTheMeanMatchesTheSpreadOfIndependentRenders) {
  const std::string dir = test::MakeTempDir();
  SceneData d = BuildSceneData(LoadScene(test::WriteFloorScene(dir, 0.5f)),
                               Camera::LookAt(Vec3(0, 2, 0.001f), Vec3(0.0f), Vec3(0, 1, 0), 60.0f, 8, 8), Vec3(0.0f));
  SetEnvironmentMap(d, test::SkyWithSun(64, 32, 40, 8, 400.0f), 1.0f, 0.0f);
  RenderOptions opt = test::QuietRender(8, 8, 50, 3);
  const RenderResult plain = RenderCpu(d, opt);
  opt.varianceAov = true;
  const RenderResult withVariance = RenderCpu(d, opt);
  EXPECT_EQ(withVariance.rgb, plain.rgb);
  EXPECT_GE(withVariance.varianceBatches, 16);
  // With batches of unequal size too: the same render as passes of at most 3 samples (50 = 16 x 3 + 2).
  RenderOptions uneven = opt;
  uneven.pathsInFlight = 3 * 64;
  const RenderResult unevenResult = RenderCpu(d, uneven);
  EXPECT_EQ(unevenResult.rgb, plain.rgb);
  EXPECT_EQ(unevenResult.varianceBatches, 17);
  ASSERT_EQ(withVariance.variance.size(), plain.rgb.size());
  const int renders = 24;
  std::vector<double> sum(plain.rgb.size(), 0.0), sum2(plain.rgb.size(), 0.0), estimate(plain.rgb.size(), 0.0);
  for (int k = 0; k < renders; ++k) {  // half of them in the uneven batches
    RenderOptions o = k % 2 ? uneven : opt;
    o.seed = 100 + static_cast<uint32_t>(k);
    const RenderResult r = RenderCpu(d, o);
    for (size_t i = 0; i < r.rgb.size(); ++i) {
      sum[i] += r.rgb[i];
      sum2[i] += static_cast<double>(r.rgb[i]) * r.rgb[i];
      estimate[i] += r.variance[i] / renders;
    }
  }
  double estimated = 0.0, spread = 0.0;
  for (size_t i = 0; i < sum.size(); i += 3) {
    spread += (sum2[i] - sum[i] * sum[i] / renders) / (renders - 1);
    estimated += estimate[i];
  }
  ASSERT_GT(spread, 0.0);
  const double ratio = estimated / spread;
  std::printf("variance output %.4g against the spread of %d renders %.4g, summed over the pixels: ratio %.3f\n",
              estimated, renders, spread, ratio);
  EXPECT_NEAR(ratio, 1.0, 0.15);
  test::RemoveTree(dir);
}

// The command line: every output as .exr layers (read back with OpenEXR, each layer equal to the PFM file that a
// second run with a PNG output writes beside it: no layer swapped), and a bad list refused before rendering with no
// file written.
TEST(Aov, CommandLineWritesLayersOrSiblingFiles) {
  const std::string dir = test::MakeTempDir();
  const std::string scene = test::ProjectScenesDir() + "/cornell.obj";
  const std::string args = " --backend cpu --width 16 --height 16 --spp 32 -q --aov ";
  const test::CommandResult p =
      test::RunTracer(scene + args + "albedo,normal,depth,position,variance -o " + dir + "/b.png");
  ASSERT_EQ(p.exitCode, 0) << p.output;
  EXPECT_TRUE(test::FileExists(dir + "/b.png"));
  int w = 0, h = 0;
  EXPECT_GT(Mean(ReadPfm(dir + "/b.albedo.pfm", w, h)), 0.1);
  EXPECT_EQ(w, 16);
  const std::vector<float> depth = ReadPfm(dir + "/b.depth.pfm", w, h);
  for (size_t i = 0; i < depth.size(); i += 3) EXPECT_EQ(depth[i], depth[i + 1]);  // grey
  // The Cornell box fills nearly all the view: nearly every depth lies between its near and far walls.
  int inside = 0;
  for (size_t i = 0; i < depth.size(); i += 3) inside += depth[i] > 100.0f && depth[i] < 3000.0f;
  EXPECT_GT(inside, 16 * 16 * 9 / 10);
  if (ExrSupported()) {
    // --exr-half halves R, G, B only: the layers keep 32-bit floats, so each equals its PFM file exactly.
    const test::CommandResult r =
        test::RunTracer(scene + args + "albedo,normal,depth,position,variance --exr-half -o " + dir + "/a.exr");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    struct Layer {
      const char* name;
      std::vector<std::string> channels;
    };
    for (const Layer& layer :
         {Layer{"albedo", {"albedo.R", "albedo.G", "albedo.B"}}, Layer{"normal", {"normal.X", "normal.Y", "normal.Z"}},
          Layer{"depth", {"depth.Z"}}, Layer{"position", {"position.X", "position.Y", "position.Z"}},
          Layer{"variance", {"variance.R", "variance.G", "variance.B"}}}) {
      const std::vector<float> v = ReadExrChannels(dir + "/a.exr", layer.channels, w, h);
      EXPECT_EQ(w, 16);
      EXPECT_EQ(h, 16);
      const std::vector<float> pfm = ReadPfm(dir + "/b." + layer.name + ".pfm", w, h);
      const size_t n = layer.channels.size();
      ASSERT_EQ(v.size(), static_cast<size_t>(16 * 16) * n);
      for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], pfm[(i / n) * 3 + i % n]) << layer.name << " value " << i;
    }
    EXPECT_EQ(ReadExr(dir + "/a.exr", w, h).size(), static_cast<size_t>(16 * 16 * 3));
  }

  const test::CommandResult bad =
      test::RunTracer(scene + " --backend cpu --spp 4 -q -o " + dir + "/c.png --aov albedo,curvature");
  EXPECT_EQ(bad.exitCode, 2) << bad.output;
  EXPECT_NE(bad.output.find("curvature"), std::string::npos) << bad.output;
  EXPECT_FALSE(test::FileExists(dir + "/c.png"));
  test::RemoveTree(dir);
}

}  // namespace
