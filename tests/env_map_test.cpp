// @file env_map_test.cpp: the environment as a light (core/environment.h, host/env_map.h) on the CPU: the map's
// direction convention and rotation, its sampling pdf (integrates to 1, matches the sample histogram by chi-square),
// a white-furnace-style analytic test of a convex diffuse object under a constant environment (colour and map),
// importance sampling against BSDF sampling only under a sky with a tiny sun (unbiased against the analytic value,
// and at most a third of the RMSE), and the errors of bad map files.
//
// Tolerances: the chi-square test rejects at p < 0.001 (one test; fixed seeds, so a result reproduces). The image
// tests compare means with 4 standard errors estimated from the spread of independent seeds (t-distributed with
// seeds - 1 degrees of freedom: about a 1% false alarm at 8 seeds).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "chi2.h"
#include "env_light_checks.h"
#include "env_test_scenes.h"
#include "test_util.h"
#include "tracer/core/environment.h"
#include "tracer/host/backends.h"
#include "tracer/host/image_io.h"

using namespace tracer;

namespace {

constexpr double kPiD = 3.14159265358979323846;

// The map (and its scalars) of a scene made only for its environment: a SceneData with no geometry.
SceneData MapOnly(const EnvImage& img, float rotateDegrees) {
  SceneData d;
  d.boundsMin = Vec3(-1.0f);
  d.boundsMax = Vec3(1.0f);
  SetEnvironmentMap(d, img, 1.0f, rotateDegrees);
  return d;
}

float Uniform(std::mt19937& rng) { return static_cast<float>(rng() >> 8) * (1.0f / 16777216.0f); }

// ---- convention -----------------------------------------------------------------------------------------------

// A map dark everywhere except a block of texels around (u, v); w x h = 64 x 32.
EnvImage BrightBlock(float u, float v) {
  EnvImage img = test::ConstantMap(64, 32, 0.0f);
  const int cx = static_cast<int>(u * 64), cy = static_cast<int>(v * 32);
  for (int y = std::max(cy - 1, 0); y <= cy; ++y)  // rows clamped at the poles, columns wrapped
    for (int x = cx - 1; x <= cx; ++x)
      for (int c = 0; c < 3; ++c) img.rgb[(static_cast<size_t>(y) * 64 + (x + 64) % 64) * 3 + c] = 100.0f;
  return img;
}

// The pole cases look a little off the pole toward -z: at the pole itself u is undefined (any column of row 0).
TEST(EnvMap, ConventionUpIsTopRowCentreColumnIsMinusZ) {
  struct Case {
    float u, v;
    Vec3 dir;  // where the block must appear
  } cases[] = {{0.5f, 0.5f, Vec3(0, 0, -1)},
               {0.75f, 0.5f, Vec3(1, 0, 0)},
               {0.25f, 0.5f, Vec3(-1, 0, 0)},
               {0.0f, 0.5f, Vec3(0, 0, 1)},
               {0.5f, 0.03f, Normalize(Vec3(0, 1, -0.05f))},
               {0.5f, 0.97f, Normalize(Vec3(0, -1, -0.05f))},
               {0.625f, 0.25f, Normalize(Vec3(0.5f, 0.70710678f, -0.5f))}};
  for (const Case& c : cases) {
    const SceneData d = MapOnly(BrightBlock(c.u, c.v), 0.0f);
    const SceneView v = d.View();
    float pdf;
    EXPECT_GT(EnvRadiance(v.env, v.environment, c.dir, pdf).x, 0.0f) << "block at u=" << c.u << " v=" << c.v;
    EXPECT_EQ(EnvRadiance(v.env, v.environment, -c.dir, pdf).x, 0.0f) << "block at u=" << c.u << " v=" << c.v;
    // Every sample goes toward the block.
    std::mt19937 rng(7);
    for (int i = 0; i < 200; ++i) {
      const EnvSample s = SampleEnvironment(v.env, v.environment, Uniform(rng), Uniform(rng));
      ASSERT_GT(Dot(s.wi, c.dir), 0.9f) << "block at u=" << c.u << " v=" << c.v;
    }
  }
}

// --env-rotate 90 turns +x to -z (right-handed about +y); -90 turns +x to +z.
TEST(EnvMap, RotationIsRightHandedAboutY) {
  float pdf;
  for (auto [deg, dir] : {std::pair<float, Vec3>{90.0f, Vec3(0, 0, -1)},
                          {-90.0f, Vec3(0, 0, 1)},
                          {180.0f, Vec3(-1, 0, 0)},
                          {0.0f, Vec3(1, 0, 0)}}) {
    const SceneData d = MapOnly(BrightBlock(0.75f, 0.5f), deg);  // the block at +x before turning
    const SceneView v = d.View();
    EXPECT_GT(EnvRadiance(v.env, v.environment, dir, pdf).x, 0.0f) << deg << " degrees";
    EXPECT_EQ(EnvRadiance(v.env, v.environment, -dir, pdf).x, 0.0f) << deg << " degrees";
  }
}

// End to end through the CLI: camera rays that leave the scene see the map, so looking along +x shows the block
// that the map holds at u = 0.75, and after --env-rotate 90 it is found along -z.
TEST(EnvMap, RenderedViewFollowsTheConvention) {
  const std::string dir = test::MakeTempDir();
  ASSERT_TRUE(test::WriteHdrFile(dir + "/block.hdr", BrightBlock(0.75f, 0.5f)));
  test::WriteFile(dir + "/tiny.obj", "v 0 -50 0\nv 0.01 -50 0\nv 0 -50 0.01\nf 1 2 3\n");  // far below, unseen
  auto centre = [&](const std::string& lookAt, const std::string& extra) {
    const std::string out = dir + "/view.pfm";
    test::CommandResult r =
        test::RunTracer(dir + "/tiny.obj --backend cpu -q --env-map " + dir + "/block.hdr --eye 0,0,0 --look-at " +
                        lookAt + " --fov 5 --width 4 --height 4 --spp 4 --max-depth 0 -o " + out + extra);
    EXPECT_EQ(r.exitCode, 0) << r.output;
    int w = 0, h = 0;
    std::vector<float> rgb = ReadPfm(out, w, h);
    double sum = 0;
    for (float x : rgb) sum += x;
    return sum / rgb.size();
  };
  EXPECT_GT(centre("1,0,0", ""), 50.0);
  EXPECT_EQ(centre("-1,0,0", ""), 0.0);
  EXPECT_EQ(centre("0,0,-1", ""), 0.0);
  EXPECT_GT(centre("0,0,-1", " --env-rotate 90"), 50.0);
  EXPECT_EQ(centre("1,0,0", " --env-rotate 90"), 0.0);
  test::RemoveTree(dir);
}

// ---- the sampling distribution ----------------------------------------------------------------------------------

// A map with structure at several scales: random texels over a gradient, and a bright spot.
EnvImage TestMap(int w, int h) {
  EnvImage img = test::ConstantMap(w, h, 0.0f);
  std::mt19937 rng(3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const float base = 0.2f + 2.0f * static_cast<float>(y) / h + 3.0f * Uniform(rng);
      for (int c = 0; c < 3; ++c) img.rgb[(static_cast<size_t>(y) * w + x) * 3 + c] = base * (0.5f + 0.5f * c);
    }
  for (int c = 0; c < 3; ++c) img.rgb[(static_cast<size_t>(h / 4) * w + w / 3) * 3 + c] = 400.0f;
  for (int c = 0; c < 3; ++c) img.rgb[(static_cast<size_t>(0) * w + 5) * 3 + c] = 50.0f;  // at the pole
  return img;
}

// Integral over the sphere of the pdf EnvRadiance reports, by the midpoint rule on a (theta, phi) grid fine enough
// that texel edges matter little (the pdf is constant in phi and proportional to 1/sin(theta) inside a texel).
double IntegratePdf(const SceneView& v, int thetaSteps, int phiSteps) {
  double total = 0.0;
  for (int i = 0; i < thetaSteps; ++i) {
    const double theta = kPiD * (i + 0.5) / thetaSteps;
    for (int j = 0; j < phiSteps; ++j) {
      const double phi = 2 * kPiD * (j + 0.5) / phiSteps;
      const Vec3 d(static_cast<float>(std::sin(theta) * std::cos(phi)), static_cast<float>(std::cos(theta)),
                   static_cast<float>(std::sin(theta) * std::sin(phi)));
      float pdf;
      EnvRadiance(v.env, v.environment, d, pdf);
      total += pdf * std::sin(theta) * (kPiD / thetaSteps) * (2 * kPiD / phiSteps);
    }
  }
  return total;
}

TEST(EnvMap, PdfIntegratesToOne) {
  for (float deg : {0.0f, 37.0f}) {
    const SceneData d = MapOnly(TestMap(48, 24), deg);
    EXPECT_NEAR(IntegratePdf(d.View(), 24 * 16, 48 * 16), 1.0, 2e-3) << deg << " degrees";
  }
  SceneData c;  // the constant environment: uniform over the sphere
  c.environment = Vec3(1.0f);
  EXPECT_NEAR(IntegratePdf(c.View(), 200, 400), 1.0, 1e-4);
}

// The samples' histogram over a (theta, phi) grid against the counts the claimed pdf gives each cell. The grid
// splits each texel in 2 x 2 (map frame, no rotation), so the pdf is exactly integrable per cell; the expected
// counts come from integrating the pdf EnvRadiance reports (not the texel pmf), so a wrong Jacobian or row/column
// mix-up fails. Every sample's own pdf must also equal EnvRadiance's at its direction (MIS needs both to agree).
TEST(EnvMap, SampleHistogramMatchesPdfChiSquare) {
  const int w = 24, h = 12, rows = 2 * h, cols = 2 * w, n = 400000;
  const SceneData d = MapOnly(TestMap(w, h), 0.0f);
  const SceneView v = d.View();
  std::vector<double> observed(static_cast<size_t>(rows) * cols, 0.0), expected(observed.size(), 0.0);
  std::mt19937 rng(11);
  int pdfMismatches = 0;
  for (int i = 0; i < n; ++i) {
    const EnvSample s = SampleEnvironment(v.env, v.environment, Uniform(rng), Uniform(rng));
    ASSERT_GT(s.pdf, 0.0f);
    float pdf;
    const Vec3 le = EnvRadiance(v.env, v.environment, s.wi, pdf);
    if (std::fabs(pdf - s.pdf) > 1e-3f * s.pdf || le.x != s.le.x) ++pdfMismatches;
    float u, vv;
    EnvCoords(s.wi, u, vv);
    const int r = std::min(rows - 1, static_cast<int>(vv * rows)), c = std::min(cols - 1, static_cast<int>(u * cols));
    observed[static_cast<size_t>(r) * cols + c] += 1.0;
  }
  EXPECT_LT(pdfMismatches, n / 1000) << "samples whose pdf differs from EnvRadiance's (texel edges only)";
  const int sub = 8;  // midpoint points per cell side
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      double p = 0.0;
      for (int a = 0; a < sub; ++a)
        for (int b = 0; b < sub; ++b) {
          float sinTheta;
          const Vec3 dir = EnvDirection((c + (b + 0.5f) / sub) / cols, (r + (a + 0.5f) / sub) / rows, sinTheta);
          float pdf;
          EnvRadiance(v.env, v.environment, dir, pdf);
          p += pdf * sinTheta;  // dOmega = 2 pi^2 sin(theta) du dv
        }
      expected[static_cast<size_t>(r) * cols + c] = n * p * 2 * kPiD * kPiD / (double(sub) * sub * rows * cols);
    }
  const test::Chi2Outcome out = test::Chi2Test(observed, expected);
  std::printf("[ p-value  ] environment map sampling chi2 = %.2f, dof %d, p = %.4g\n", out.stat, out.dof, out.p);
  EXPECT_TRUE(out.error.empty()) << out.error;
  EXPECT_GT(out.dof, 100);
  EXPECT_GT(out.p, 0.001) << "chi2 = " << out.stat << " with " << out.dof << " dof";
}

// ---- whole renders ----------------------------------------------------------------------------------------------

// Known answers (env_light_checks.h; the GPU runs them too).
TEST(EnvLight, ConvexDiffuseObjectUnderConstantEnvironmentReadsHalf) {
  test::ExpectConvexDiffuseObjectReadsHalf(
      [](const SceneData& d, const RenderOptions& o) { return RenderCpu(d, o).rgb; });
}
TEST(EnvLight, SunAndSkyImportanceSamplingCutsRmseAndIsUnbiased) {
  test::ExpectSunAndSkyImportanceSamplingCutsRmse(
      [](const SceneData& d, const RenderOptions& o) { return RenderCpu(d, o).rgb; });
}

// An OpenEXR map gives the 32-bit floats it holds, bit for bit (RGBE's shared exponent could not).
TEST(EnvMap, ExrMapReadsTheFloatsWritten) {
  if (!ExrSupported()) GTEST_SKIP() << "this build has no OpenEXR (apt-get install libopenexr-dev)";
  const std::string dir = test::MakeTempDir();
  EnvImage img = BrightBlock(0.75f, 0.5f);
  for (size_t i = 0; i < img.rgb.size(); ++i) img.rgb[i] += static_cast<float>(1 << (i % 5)) / 8.0f;
  WriteImage(dir + "/m.exr", img.rgb, img.width, img.height);
  const EnvImage exr = ReadEnvImage(dir + "/m.exr");
  EXPECT_EQ(exr.width, 64);
  EXPECT_EQ(exr.height, 32);
  EXPECT_EQ(exr.rgb, img.rgb);
  test::RemoveTree(dir);
}

// ---- errors -----------------------------------------------------------------------------------------------------

TEST(EnvMap, BadFilesAreClearErrorsAndWriteNothing) {
  const std::string dir = test::MakeTempDir();
  test::WriteFile(dir + "/garbage.hdr", "this is not an image\n");
  test::WriteFile(dir + "/badsize.hdr", "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n+Y 64 -X 128\n");
  test::WriteFile(dir + "/map.exr", "v/1\x01");
  test::WriteFile(dir + "/map.png", "\x89PNG");
  const std::string scene = test::ProjectScenesDir() + "/cornell.obj";
  struct Case {
    std::string file, message;
  } cases[] = {{dir + "/missing.hdr", "cannot open environment map"},
               {dir + "/garbage.hdr", "not a Radiance .hdr image"},
               {dir + "/badsize.hdr", "cannot decode environment map"},
               {dir + "/map.exr", ExrSupported() ? "cannot read OpenEXR" : "this build has no OpenEXR support"},
               {dir + "/map.png", "unknown environment map format"},
               {dir, "environment map is not a regular file"}};
  for (const Case& c : cases) {
    const std::string out = dir + "/out.png";
    test::CommandResult r =
        test::RunTracer(scene + " --backend cpu --width 8 --height 8 --spp 1 --env-map " + c.file + " -o " + out);
    EXPECT_NE(r.exitCode, 0) << c.file;
    EXPECT_NE(r.output.find(c.file + ": " + c.message), std::string::npos) << r.output;
    EXPECT_FALSE(test::FileExists(out)) << c.file;
  }
  // Flags that go with a map, or exclude each other.
  for (const std::string& bad : {std::string(" --env-rotate 10"), std::string(" --env-map x.hdr --env 1,1,1"),
                                 std::string(" --env-sampling x")}) {
    test::CommandResult r = test::RunTracer(scene + " --backend cpu" + bad + " -o " + dir + "/out.png");
    EXPECT_EQ(r.exitCode, 2) << bad << ": " << r.output;
  }
  test::RemoveTree(dir);
}

}  // namespace
