// @file pbrt_loader_lights_test.cpp: pbrt-v4 lights as the loader maps them: area lights' radiance and power on
// tessellated shapes, the infinite light as an environment (pbrt's equal-area octahedral image turned into a lat-long
// map: the mapping's round trip, a constant image, where a bright texel lands), and the lights left out.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "pbrt_loader_test_util.h"
#include "tracer/core/environment.h"

namespace tracer {
namespace {

using test::NearVec;
using test::PbrtDir;

constexpr double kPi = 3.14159265358979323846;

// A side x side PFM (little-endian, bottom row first) whose texel (x, y), row 0 at the top, is f(x, y).
template <typename F>
void WritePfm(const std::string& path, int side, F f) {
  std::string data = "PF\n" + std::to_string(side) + " " + std::to_string(side) + "\n-1\n";
  for (int y = side - 1; y >= 0; --y)
    for (int x = 0; x < side; ++x) {
      const Vec3 c = f(x, y);
      const float v[3] = {c.x, c.y, c.z};
      data.append(reinterpret_cast<const char*>(v), sizeof v);
    }
  test::WriteFile(path, data);
}

TEST(PbrtLoaderLights, EqualAreaMappingRoundTrip) {
  EXPECT_TRUE(NearVec(EqualAreaSquareToSphere(0.5f, 0.5f), Vec3(0, 0, 1), 1e-6f)) << "+z at the centre";
  EXPECT_TRUE(NearVec(EqualAreaSquareToSphere(0.0f, 0.0f), Vec3(0, 0, -1), 1e-6f)) << "-z at the corners";
  EXPECT_TRUE(NearVec(EqualAreaSquareToSphere(1.0f, 0.5f), Vec3(1, 0, 0), 1e-6f));
  EXPECT_TRUE(NearVec(EqualAreaSquareToSphere(0.5f, 1.0f), Vec3(0, 1, 0), 1e-6f));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int i = 0; i < 10000; ++i) {
    const float a = u(rng), b = u(rng);
    const Vec3 d = EqualAreaSquareToSphere(a, b);
    ASSERT_NEAR(Length(d), 1.0f, 1e-5f);
    float a2, b2;
    EqualAreaSphereToSquare(d, a2, b2);
    const Vec3 back = EqualAreaSquareToSphere(a2, b2);
    ASSERT_TRUE(NearVec(back, d, 2e-5f)) << a << " " << b << " -> " << a2 << " " << b2;
    // Away from the square's seams (its edges and the diamond |u'| + |v'| = 1), the square point itself returns.
    const float su = std::fabs(2 * a - 1), sv = std::fabs(2 * b - 1);
    if (std::fabs(su + sv - 1.0f) > 1e-3f && su < 0.999f && sv < 0.999f) {
      ASSERT_NEAR(a2, a, 1e-4f);
      ASSERT_NEAR(b2, b, 1e-4f);
    }
  }
  // Equal area: as many of a grid's texel centres fall in the upper hemisphere as in the lower.
  int upper = 0, lower = 0;
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) {
      const float z = EqualAreaSquareToSphere((x + 0.5f) / 64, (y + 0.5f) / 64).z;
      upper += z > 0.0f;
      lower += z < 0.0f;
    }
  EXPECT_EQ(upper, lower);
  EXPECT_GE(upper, 64 * 64 / 2 - 64) << "all but the diamond's texels, which lie on the equator";
}

TEST(PbrtLoaderLights, ConstantEqualAreaImageStaysConstant) {
  PbrtDir dir;
  WritePfm(dir.File("sky.pfm"), 16, [](int, int) { return Vec3(0.3f, 0.5f, 0.7f); });
  const Scene s = dir.LoadWorld(
      "AttributeBegin\nRotate 30 1 2 3\nLightSource \"infinite\" \"string filename\" \"sky.pfm\" \"float scale\" 2\n"
      "AttributeEnd\nShape \"sphere\"\n");
  ASSERT_TRUE(s.environment.present);
  EXPECT_EQ(s.environment.height, 16);
  EXPECT_EQ(s.environment.width, 32);
  ASSERT_EQ(s.environment.rgb.size(), size_t(32 * 16 * 3));
  for (size_t i = 0; i < s.environment.rgb.size(); ++i)
    ASSERT_FLOAT_EQ(s.environment.rgb[i], 2.0f * (i % 3 == 0 ? 0.3f : (i % 3 == 1 ? 0.5f : 0.7f)));
  EXPECT_EQ(s.environment.source, dir.File("s.pbrt") + ":4");
  EXPECT_TRUE(s.HasLight()) << "an environment lights the scene";
}

TEST(PbrtLoaderLights, BrightTexelLandsWhereThePbrtMappingSaysThroughTheLightTransform) {
  PbrtDir dir;
  const int side = 64, hotX = 40, hotY = 12;
  WritePfm(dir.File("sky.pfm"), side, [&](int x, int y) { return Vec3(x == hotX && y == hotY ? 100.0f : 0.0f); });
  // "Rotate -90 1 0 0" turns the image's +z (pbrt's usual sky up) into the world's +y.
  const Scene s = dir.LoadWorld(
      "AttributeBegin\nRotate -90 1 0 0\n"
      "LightSource \"infinite\" \"string filename\" \"sky.pfm\"\nAttributeEnd\nShape \"sphere\"\n");
  ASSERT_TRUE(s.environment.present);
  size_t best = 0;
  for (size_t i = 0; i < s.environment.rgb.size() / 3; ++i)
    if (s.environment.rgb[3 * i] > s.environment.rgb[3 * best]) best = i;
  const int w = s.environment.width, h = s.environment.height;
  float sinTheta;
  const Vec3 got =
      EnvDirection((float(best % size_t(w)) + 0.5f) / float(w), (float(best / size_t(w)) + 0.5f) / float(h), sinTheta);
  const Vec3 light = EqualAreaSquareToSphere((hotX + 0.5f) / side, (hotY + 0.5f) / side);
  const Vec3 world(light.x, light.z, -light.y);  // Rotate -90 about x: (x, y, z) -> (x, z, -y)
  EXPECT_GT(Dot(got, world), std::cos(3.0f * float(kPi) / 180.0f)) << "within 3 degrees (texel sizes)";
}

TEST(PbrtLoaderLights, UniformInfiniteLightAndTheOthers) {
  PbrtDir dir;
  const Scene s = dir.LoadWorld(
      "LightSource \"infinite\" \"rgb L\" [0.1 0.2 0.3] \"float scale\" 2\nLightSource \"infinite\"\n"
      "LightSource \"distant\"\nLightSource \"goniometric\"\nLightSource \"projection\"\nShape \"sphere\"\n");
  ASSERT_TRUE(s.environment.present);
  EXPECT_EQ(s.environment.width, 0);
  EXPECT_TRUE(NearVec(s.environment.color, Vec3(0.2f, 0.4f, 0.6f), 1e-6f));
  EXPECT_EQ(test::CountWarnings(s, "s.pbrt:3: LightSource \"infinite\": the renderer has one environment"), 1u);
  for (const char* kind : {"s.pbrt:5: LightSource \"goniometric\" is not rendered yet",
                           "s.pbrt:6: LightSource \"projection\" is not rendered yet"})
    EXPECT_EQ(test::CountWarnings(s, kind), 1u) << kind << "\n" << test::AllWarnings(s);
  EXPECT_EQ(test::CountWarnings(s, "LightSource \"distant\""), 0u) << test::AllWarnings(s);
  EXPECT_EQ(s.deltaLights.size(), 1u) << "the distant light (pbrt_loader_delta_lights_test.cpp maps it)";
}

// pbrt emits pi L A from a one-sided diffuse emitter of area A; the tessellation must emit the same.
TEST(PbrtLoaderLights, TessellatedSphereKeepsItsPower) {
  PbrtDir dir;
  for (const char* transform : {"Translate 1 2 3\nScale 0.7 0.7 0.7\n", "Scale 3 3 3\n"}) {
    const Scene s = dir.LoadWorld(std::string("AttributeBegin\n") + transform +
                                  "AreaLightSource \"diffuse\" \"rgb L\" [3 3 3]\nShape \"sphere\"\nAttributeEnd\n"
                                  "Shape \"trianglemesh\" \"point3 P\" [-40 -40 -40 40 -40 -40 0 40 -40]\n");
    const double r = std::strncmp(transform, "Scale 3", 7) == 0 ? 3.0 : 0.7;
    const double expected = kPi * 3.0 * 4.0 * kPi * r * r;
    EXPECT_NEAR(test::EmittedPowerX(s) / expected, 1.0, 0.005) << transform;
    EXPECT_GT(test::MaterialOf(s, 1).ke.x, 3.0f) << "the radiance is raised by true / tessellated area";
  }
  // A non-uniform scale: an ellipsoid of semi-axes (1, 1, 2), area ~ 21.4784 (Knud Thomsen's formula is 0.8%
  // away; this value is the series for a prolate spheroid: 2 pi a^2 (1 + c / (a e) asin e), e = sqrt(1 - a^2/c^2)).
  const Scene s = dir.LoadWorld(
      "AttributeBegin\nScale 1 1 2\nAreaLightSource \"diffuse\" \"rgb L\" [1 1 1]\nShape \"sphere\"\nAttributeEnd\n"
      "Shape \"trianglemesh\" \"point3 P\" [-40 -40 -40 40 -40 -40 0 40 -40]\n");
  const double e = std::sqrt(1.0 - 1.0 / 4.0), area = 2.0 * kPi * (1.0 + 2.0 / e * std::asin(e));
  EXPECT_NEAR(test::EmittedPowerX(s) / (kPi * area), 1.0, 0.005);
}

TEST(PbrtLoaderLights, PowerAndScaleOfAreaLights) {
  PbrtDir dir;
  // "power" P on a sphere: radiance P / (pi A) with A pbrt's object-space area.
  Scene s = dir.LoadWorld(
      "AttributeBegin\nAreaLightSource \"diffuse\" \"float power\" 100\nShape \"sphere\" \"float radius\" 2\n"
      "AttributeEnd\nShape \"trianglemesh\" \"point3 P\" [-40 -40 -40 40 -40 -40 0 40 -40]\n");
  EXPECT_NEAR(test::EmittedPowerX(s) / 100.0, 1.0, 0.005);
  // On a mesh, every triangle is a pbrt shape of its own and emits P.
  s = dir.LoadWorld(
      "AttributeBegin\nAreaLightSource \"diffuse\" \"rgb L\" [2 1 1] \"float power\" 10\n"
      "Shape \"trianglemesh\" \"point3 P\" [0 0 0 1 0 0 1 1 0 0 3 0] \"integer indices\" [0 1 2 0 2 "
      "3]\nAttributeEnd\n");
  EXPECT_NEAR(test::EmittedPowerX(s), 2.0 * 2 * 10.0, 1e-3) << "x: L's red (2) times P per triangle";
  // "scale" and "twosided": L on both sides, not warned about.
  s = dir.LoadWorld(
      "AreaLightSource \"diffuse\" \"rgb L\" [1 2 3] \"float scale\" 4 \"bool twosided\" true\n"
      "Shape \"trianglemesh\" \"point3 P\" [0 0 0 1 0 0 0 1 0]\n");
  EXPECT_TRUE(NearVec(test::MaterialOf(s, 0).ke, Vec3(4, 8, 12), 0.0f));
  EXPECT_TRUE(test::MaterialOf(s, 0).twoSided);
  EXPECT_TRUE(s.warnings.empty()) << test::AllWarnings(s);
  // "power" of a two-sided light is what both sides emit together: L = P / (2 pi A) (pbrt-v4's k_e counts 2).
  s = dir.LoadWorld(
      "AreaLightSource \"diffuse\" \"float power\" 10 \"bool twosided\" true\n"
      "Shape \"trianglemesh\" \"point3 P\" [0 0 0 2 0 0 0 1 0]\n");
  EXPECT_NEAR(test::MaterialOf(s, 0).ke.x, 10.0 / (2.0 * kPi * 1.0), 1e-5);
  EXPECT_TRUE(test::MaterialOf(s, 0).twoSided);
}

TEST(PbrtLoaderLights, BlackbodyHasUnitLuminance) {
  PbrtDir dir;
  const Scene s = dir.LoadWorld(
      "AreaLightSource \"diffuse\" \"blackbody L\" 6500\nShape \"trianglemesh\" \"point3 P\" [0 0 0 1 0 0 0 1 0]\n");
  const Vec3 ke = test::MaterialOf(s, 0).ke;
  EXPECT_NEAR(Luminance(ke), 1.0f, 1e-3f);
  EXPECT_NEAR(ke.x, 1.0f, 0.06f) << "6500 K is close to the sRGB white";
  EXPECT_NEAR(ke.z, 1.0f, 0.06f);
}

}  // namespace
}  // namespace tracer
