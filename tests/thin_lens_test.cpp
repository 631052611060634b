// @file thin_lens_test.cpp: the thin-lens camera (--aperture, --focus-distance) against its geometry: the pinhole
// is unchanged, the rays of one image point meet on the focus plane and spread over the circle of confusion
// elsewhere, and a rendered edge is blurred over exactly that circle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"
#include "tracer/core/camera.h"
#include "tracer/core/rng.h"
#include "tracer/host/image_io.h"
#include "tracer/host/scene_loader.h"

using namespace tracer;

namespace {

constexpr double kPiD = 3.14159265358979323846;

TEST(ThinLens, ZeroApertureIsThePinholeBitForBit) {
  const Camera pin = Camera::LookAt(Vec3(1, 2, 3), Vec3(-2, 0, -5), Vec3(0, 1, 0), 50.0f, 160, 90);
  const Camera lens0 = Camera::LookAt(Vec3(1, 2, 3), Vec3(-2, 0, -5), Vec3(0, 1, 0), 50.0f, 160, 90, 0.0f, 3.0f);
  for (int i = 0; i < 200; ++i) {
    const int px = (i * 37) % 160, py = (i * 11) % 90;
    const float jx = Random(1, i, 0, 0), jy = Random(1, i, 0, 1), lu = Random(1, i, 0, 2), lv = Random(1, i, 0, 3);
    const Ray a = pin.Generate(px, py, jx, jy), b = lens0.Generate(px, py, jx, jy, lu, lv);
    EXPECT_EQ(0, std::memcmp(&a.o, &b.o, sizeof a.o));
    EXPECT_EQ(0, std::memcmp(&a.d, &b.d, sizeof a.d));
  }
}

TEST(ThinLens, FocusDistanceDefaultsToTheLookAtPoint) {
  const Camera c = Camera::LookAt(Vec3(0, 0, 0), Vec3(0, 0, -7.5f), Vec3(0, 1, 0), 40.0f, 64, 64, 0.2f);
  EXPECT_FLOAT_EQ(c.focusDistance, 7.5f);
}

// The rays through one image point all pass through one point of the focus plane (depth D along the view); at
// depth z they cover a disk of radius R |1 - z / D| around the pinhole ray's point, uniformly (mean squared radius
// of a uniform disk: r^2 / 2).
TEST(ThinLens, RaysOfOnePointMeetOnTheFocusPlaneAndSpreadElsewhere) {
  const float R = 0.4f, D = 6.0f;
  const Camera c = Camera::LookAt(Vec3(0.5f, -1, 2), Vec3(0.5f, -1, -10), Vec3(0, 1, 0), 45.0f, 100, 80, R, D);
  const Vec3 forward(0, 0, -1);
  const int px = 71, py = 23;
  const Ray pin = Camera::LookAt(c.eye, c.eye + forward, Vec3(0, 1, 0), 45.0f, 100, 80).Generate(px, py, 0.3f, 0.6f);
  auto at = [&](const Ray& r, double z) {  // where the ray reaches depth z along the view
    const double t = (z - Dot(r.o - c.eye, forward)) / Dot(r.d, forward);
    return Vec3(r.o.x + static_cast<float>(t) * r.d.x, r.o.y + static_cast<float>(t) * r.d.y,
                r.o.z + static_cast<float>(t) * r.d.z);
  };
  for (double z : {2.0, 6.0, 15.0}) {
    const Vec3 centre = at(pin, z);
    const double expected = R * std::fabs(1.0 - z / D);
    double maxR = 0.0, sumR2 = 0.0;
    const int n = 20000;
    for (int i = 0; i < n; ++i) {
      const Ray r = c.Generate(px, py, 0.3f, 0.6f, Random(7, 0, i, 0), Random(7, 0, i, 1));
      EXPECT_LE(Length(r.o - c.eye), R * 1.0001f);
      EXPECT_NEAR(Dot(r.o - c.eye, forward), 0.0, 1e-6) << "the lens is perpendicular to the view";
      const double d = Length(at(r, z) - centre);
      maxR = std::max(maxR, d);
      sumR2 += d * d;
    }
    SCOPED_TRACE(::testing::Message() << "depth " << z);
    EXPECT_NEAR(maxR, expected, 0.01 * R + 1e-4);
    EXPECT_NEAR(sumR2 / n, expected * expected / 2.0, 0.02 * expected * expected + 1e-8);
  }
}

// Fraction of a uniform disk of unit radius left of x = t.
double DiskCdf(double t) {
  if (t <= -1.0) return 0.0;
  if (t >= 1.0) return 1.0;
  return (t * std::sqrt(1.0 - t * t) + std::asin(t) + kPiD / 2.0) / kPiD;
}

// Renders (on the CPU, through the command line) an emitter of radiance 1 covering x > 0 at depth z in front of a
// camera at the origin looking along -z, and compares the middle rows with the analytic edge: a pixel whose centre
// lies at f on the focus plane sees the emitter through the part of the lens where l_x (1 - D/z) < f, a disk of
// radius r = R |1 - D/z| cut at f, i.e. DiskCdf(f / r), box-filtered over the pixel.
void CheckBlurredEdge(double R, double D, double z) {
  const int w = 64, h = 32, spp = 64, rows = 16;
  const double fov = 40.0, tanHalf = std::tan(0.5 * fov * kPiD / 180.0), aspect = static_cast<double>(w) / h;
  const std::string dir = test::MakeTempDir();
  const std::string zs = std::to_string(-z);
  test::WriteFile(dir + "/edge.obj", "mtllib edge.mtl\nusemtl light\nv 0 -1000 " + zs + "\nv 1000 -1000 " + zs +
                                         "\nv 1000 1000 " + zs + "\nv 0 1000 " + zs + "\nf 1 2 3\nf 1 3 4\n");
  test::WriteFile(dir + "/edge.mtl", "newmtl light\nKd 0 0 0\nKe 1 1 1\n");
  const std::string args = dir + "/edge.obj --backend cpu --width " + std::to_string(w) + " --height " +
                           std::to_string(h) + " --spp " + std::to_string(spp) +
                           " --eye 0,0,0 --look-at 0,0,-1 --fov 40 --aperture " + std::to_string(R) +
                           " --focus-distance " + std::to_string(D) + " -o " + dir + "/edge.pfm";
  const test::CommandResult run = test::RunTracer(args);
  ASSERT_EQ(run.exitCode, 0) << run.output;
  int iw = 0, ih = 0;
  const std::vector<float> rgb = ReadPfm(dir + "/edge.pfm", iw, ih);
  ASSERT_EQ(iw, w);
  ASSERT_EQ(ih, h);
  const double r = R * std::fabs(1.0 - D / z);
  double worst = 0.0;
  int measuredMid = 0, expectedMid = 0;  // columns between 10% and 90% of the emitter's radiance
  for (int x = 0; x < w; ++x) {
    double measured = 0.0;
    for (int y = h / 2 - rows / 2; y < h / 2 + rows / 2; ++y) measured += rgb[(static_cast<size_t>(y) * w + x) * 3];
    measured /= rows;
    double expected = 0.0;
    const int sub = 64;
    for (int s = 0; s < sub; ++s) {  // the pixel's box filter
      const double f = (2.0 * (x + (s + 0.5) / sub) / w - 1.0) * tanHalf * aspect * D;
      expected += r > 0.0 ? DiskCdf(f / r) : (f > 0.0 ? 1.0 : 0.0);  // (the disk is symmetric: either side of D)
    }
    expected /= sub;
    measuredMid += measured > 0.1 && measured < 0.9;
    expectedMid += expected > 0.1 && expected < 0.9;
    worst = std::max(worst, std::fabs(measured - expected));
  }
  // 1024 samples a column: a standard error of at most 0.016.
  EXPECT_LT(worst, 0.06) << "R " << R << ", D " << D << ", z " << z;
  EXPECT_NEAR(measuredMid, expectedMid, 1) << "width of the blurred edge in pixels";
  test::RemoveTree(dir);
}

TEST(ThinLens, RenderedEdgeBlursOverTheCircleOfConfusion) {
  CheckBlurredEdge(0.0, 5.0, 10.0);   // the pinhole: a sharp edge
  CheckBlurredEdge(0.5, 5.0, 10.0);   // beyond the focus plane: r = 0.25, 4.4 pixels
  CheckBlurredEdge(0.5, 5.0, 2.5);    // in front of it: r = 0.5, 8.8 pixels
  CheckBlurredEdge(0.5, 10.0, 10.0);  // on it: sharp again
}

TEST(ThinLens, BadSettingsAreRefusedBeforeRendering) {
  const std::string dir = test::MakeTempDir();
  const std::string scene = test::ProjectScenesDir() + "/cornell.obj";
  for (const char* bad : {"--aperture -1", "--focus-distance 0", "--focus-distance -2"}) {
    const test::CommandResult r =
        test::RunTracer(scene + " --backend cpu --spp 1 --width 8 --height 8 " + bad + " -o " + dir + "/x.png");
    EXPECT_NE(r.exitCode, 0) << bad;
    EXPECT_NE(r.output.find(std::string(bad).substr(2, std::string(bad).find(' ') - 2)), std::string::npos)
        << bad << ": " << r.output;
    EXPECT_FALSE(test::FileExists(dir + "/x.png")) << bad;
  }
  test::WriteFile(dir + "/a.camera", "eye 0 0 5\nlook_at 0 0 0\naperture -0.1\n");
  EXPECT_THROW(LoadCameraFile(dir + "/a.camera"), std::exception);
  test::WriteFile(dir + "/b.camera", "eye 0 0 5\nlook_at 0 0 0\nfocus_distance 0\n");
  EXPECT_THROW(LoadCameraFile(dir + "/b.camera"), std::exception);
  test::WriteFile(dir + "/c.camera", "eye 0 0 5\nlook_at 0 0 0\naperture 0.25\nfocus_distance 3\n");
  const CameraSpec c = LoadCameraFile(dir + "/c.camera");
  EXPECT_FLOAT_EQ(c.aperture, 0.25f);
  EXPECT_FLOAT_EQ(c.focusDistance, 3.0f);
  test::RemoveTree(dir);
}

}  // namespace
