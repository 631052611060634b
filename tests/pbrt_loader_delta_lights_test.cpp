// @file pbrt_loader_delta_lights_test.cpp: pbrt-v4's "point", "spot" and "distant" lights as the loader maps them onto
// delta lights (core/delta_lights.h): "I"/"L" times "scale", "power" and "illuminance", "from"/"to", cone angles, the
// CTM at the light (a spot's cone measured in the light's own frame, as pbrt-v4 does, also under a non-uniform scale),
// a mirrored scene, and the lights left out with a warning. Expected values come from pbrt-v4's definitions
// (src/pbrt/lights.cpp), written out here.
#include <gtest/gtest.h>

#include <cmath>

#include "pbrt_loader_test_util.h"
#include "tracer/core/delta_lights.h"

namespace tracer {
namespace {

using test::NearVec;
using test::PbrtDir;

constexpr double kPi = 3.14159265358979323846;
const char* kShape = "Shape \"trianglemesh\" \"point3 P\" [0 0 5 1 0 5 0 1 5]\n";

int32_t KindOf(const DeltaLight& l) { return static_cast<int32_t>(BitsFromFloat(l.p.w)); }
Vec3 Xyz(const Float4& f) { return Vec3(f.x, f.y, f.z); }

// A scene of one triangle and the light `light` (pbrt text) under the transform `ctm` (pbrt text).
Scene LoadLight(const PbrtDir& dir, const std::string& ctm, const std::string& light) {
  return dir.LoadWorld("AttributeBegin\n" + ctm + light + "\nAttributeEnd\n" + kShape);
}

const DeltaLight& OnlyLight(const Scene& s) {
  EXPECT_EQ(s.deltaLights.size(), 1u) << test::AllWarnings(s);
  static const DeltaLight none{};
  return s.deltaLights.empty() ? none : s.deltaLights[0];
}

TEST(PbrtLoaderDeltaLights, PointLightPositionIntensityScaleAndPower) {
  PbrtDir dir;
  Scene s = LoadLight(dir, "Translate 10 0 0\nRotate 90 0 0 1\n",
                      "LightSource \"point\" \"rgb I\" [1 2 3] \"float scale\" 2 \"point3 from\" [1 2 3]");
  const DeltaLight& l = OnlyLight(s);
  EXPECT_EQ(KindOf(l), kPointLight);
  // Rotate 90 about z takes (1, 2, 3) to (-2, 1, 3); then the translation.
  EXPECT_TRUE(NearVec(Xyz(l.p), Vec3(8, 1, 3), 1e-5f));
  EXPECT_TRUE(NearVec(Xyz(l.e), Vec3(2, 4, 6), 1e-6f));
  EXPECT_TRUE(s.warnings.empty()) << test::AllWarnings(s);
  EXPECT_NE(s.Summary().find("1 point, spot or distant lights"), std::string::npos) << s.Summary();
  // "power" P: I = P / (4 pi), the RGB multiplying (pbrt-v4 normalises by the illuminant, not by the RGB); "scale" too.
  s = LoadLight(dir, "", "LightSource \"point\" \"rgb I\" [2 1 1] \"float power\" 100 \"float scale\" 3");
  EXPECT_TRUE(NearVec(Xyz(OnlyLight(s).e), Vec3(2, 1, 1) * float(3 * 100 / (4 * kPi)), 1e-5f));
  // Defaults: I white (the colour space's illuminant), at the origin.
  s = LoadLight(dir, "", "LightSource \"point\"");
  EXPECT_TRUE(NearVec(Xyz(OnlyLight(s).p), Vec3(0.0f), 0.0f));
  EXPECT_TRUE(NearVec(Xyz(OnlyLight(s).e), Vec3(1.0f), 1e-6f));
}

// pbrt-v4's spot: the cosine to the axis, in the light's frame (the CTM's inverse applied to the world direction),
// through smoothstep between cos(coneangle) and cos(coneangle - conedeltaangle).
double PbrtSpotFalloff(Vec3 axisLight, Vec3 worldDir, const double inverse[3][3], double cone, double delta) {
  double w[3];
  for (int i = 0; i < 3; ++i)
    w[i] = inverse[i][0] * worldDir.x + inverse[i][1] * worldDir.y + inverse[i][2] * worldDir.z;
  const double len = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
  const Vec3 a = Normalize(axisLight);
  const double c = (w[0] * a.x + w[1] * a.y + w[2] * a.z) / len;
  const double e = std::cos(cone * kPi / 180), s = std::cos((cone - delta) * kPi / 180);
  const double t = std::min(1.0, std::max(0.0, (c - e) / (s - e)));
  return t * t * (3 - 2 * t);
}

TEST(PbrtLoaderDeltaLights, SpotLightConeAndFrameThroughTheCtm) {
  PbrtDir dir;
  // A non-uniform scale stretches the cone in the world; pbrt measures the angle in the light's frame.
  const Scene s = LoadLight(dir, "Translate 0 1 0\nScale 1 1 3\n",
                            "LightSource \"spot\" \"rgb I\" [5 5 5] \"point3 from\" [1 0 0] \"point3 to\" [1 1 1] "
                            "\"float coneangle\" 40 \"float conedeltaangle\" 25");
  const DeltaLight& l = OnlyLight(s);
  EXPECT_EQ(KindOf(l), kSpotLight);
  EXPECT_TRUE(NearVec(Xyz(l.p), Vec3(1, 1, 0), 1e-6f));
  EXPECT_TRUE(NearVec(Xyz(l.e), Vec3(5.0f), 1e-6f));
  EXPECT_NEAR(l.frame[0].w, std::cos(40 * kPi / 180), 1e-6);
  EXPECT_NEAR(l.frame[1].w, std::cos(15 * kPi / 180), 1e-6);
  const double inverse[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1.0 / 3.0}};
  int inside = 0, falloff = 0, outside = 0;
  for (int i = 0; i < 2000; ++i) {
    // Directions around the world axis (0, 1, 3) of the stretched cone.
    const double a = 0.001 * i, b = 0.37 * i;
    const Vec3 w =
        Normalize(Vec3(float(std::sin(a) * std::cos(b)), float(1 + std::sin(a) * std::sin(b)), float(3 * std::cos(a))));
    const double want = PbrtSpotFalloff(Vec3(0, 1, 1), w, inverse, 40, 25);
    ASSERT_NEAR(SpotFalloff<false>(&l, w), want, 2e-5) << i;
    (want >= 1 ? inside : (want <= 0 ? outside : falloff))++;
  }
  EXPECT_GT(inside, 100);
  EXPECT_GT(falloff, 100);
  EXPECT_GT(outside, 100);
}

TEST(PbrtLoaderDeltaLights, SpotPowerAndDefaults) {
  PbrtDir dir;
  // "power" P: I = P / (2 pi ((1 - cos start) + (cos start - cos end) / 2)).
  Scene s = LoadLight(dir, "",
                      "LightSource \"spot\" \"float power\" 50 \"float coneangle\" 20 "
                      "\"float conedeltaangle\" 5");
  const double ce = std::cos(20 * kPi / 180), cs = std::cos(15 * kPi / 180);
  EXPECT_NEAR(OnlyLight(s).e.x, 50.0 / (2 * kPi * ((1 - cs) + (cs - ce) / 2)), 1e-3);
  // Defaults: from the origin toward +z, coneangle 30, conedeltaangle 5.
  s = LoadLight(dir, "", "LightSource \"spot\"");
  const DeltaLight& l = OnlyLight(s);
  EXPECT_NEAR(l.frame[0].w, std::cos(30 * kPi / 180), 1e-6);
  EXPECT_NEAR(l.frame[1].w, std::cos(25 * kPi / 180), 1e-6);
  EXPECT_EQ(SpotFalloff<false>(&l, Vec3(0, 0, 1)), 1.0f);
  EXPECT_EQ(SpotFalloff<false>(&l, Vec3(0, 0, -1)), 0.0f);
}

TEST(PbrtLoaderDeltaLights, DistantLightDirectionScaleAndIlluminance) {
  PbrtDir dir;
  // The direction toward the light is from - to, through the CTM (Rotate 90 about x: (x, y, z) -> (x, -z, y)).
  Scene s = LoadLight(dir, "Rotate 90 1 0 0\n",
                      "LightSource \"distant\" \"rgb L\" [1 2 3] \"float scale\" 2 \"point3 from\" [0 3 4] "
                      "\"point3 to\" [0 3 0]");
  const DeltaLight l = OnlyLight(s);
  EXPECT_EQ(KindOf(l), kDistantLight);
  EXPECT_TRUE(NearVec(Xyz(l.p), Vec3(0, -1, 0), 1e-6f));
  EXPECT_TRUE(NearVec(Xyz(l.e), Vec3(2, 4, 6), 1e-6f)) << "L is the irradiance at normal incidence";
  // "illuminance" E_v: a white L gives exactly E_v at normal incidence; an RGB L multiplies it (as in pbrt-v4).
  s = LoadLight(dir, "", "LightSource \"distant\" \"float illuminance\" 7");
  EXPECT_TRUE(NearVec(Xyz(OnlyLight(s).e), Vec3(7.0f), 1e-5f));
  EXPECT_TRUE(NearVec(Xyz(OnlyLight(s).p), Vec3(0, 0, -1), 1e-6f)) << "default: from (0,0,0) to (0,0,1)";
  s = LoadLight(dir, "", "LightSource \"distant\" \"rgb L\" [0.5 1 2] \"float illuminance\" 4");
  EXPECT_TRUE(NearVec(Xyz(OnlyLight(s).e), Vec3(2, 4, 8), 1e-5f));
  // The light a distant light casts: its direction and irradiance at any point, to infinity.
  const DeltaIncidence di = DeltaLightAt<false>(&l, Vec3(5, 6, 7));
  EXPECT_TRUE(di.infinite);
  EXPECT_TRUE(NearVec(di.wi, Vec3(0, -1, 0), 1e-6f));
  EXPECT_TRUE(NearVec(di.li, Vec3(2, 4, 6), 1e-6f));
}

// A plain LookAt keeps the world's handedness: the loader reflects the scene (pbrt_loader.cpp), lights included.
TEST(PbrtLoaderDeltaLights, MirroredWithTheScene) {
  PbrtDir dir;
  const std::string camera = "LookAt 0 0 0  0 0 1  0 1 0\nCamera \"perspective\"\nWorldBegin\n";
  const Scene s = dir.Load(camera + kShape +
                           "LightSource \"point\" \"point3 from\" [1 2 3]\n"
                           "LightSource \"distant\" \"point3 from\" [1 1 0] \"point3 to\" [0 0 0]\n"
                           "LightSource \"spot\" \"point3 from\" [0 0 0] \"point3 to\" [1 0 1] \"float coneangle\" 10 "
                           "\"float conedeltaangle\" 1\n");
  ASSERT_EQ(s.deltaLights.size(), 3u);
  size_t mirrored = 0;
  for (const std::string& n : s.notes) mirrored += n.find("mirrored") != std::string::npos;
  ASSERT_EQ(mirrored, 1u);
  // The mirror is the camera's vertical plane through the eye: x -> -x here.
  EXPECT_TRUE(NearVec(Xyz(s.deltaLights[0].p), Vec3(-1, 2, 3), 1e-6f));
  EXPECT_TRUE(NearVec(Xyz(s.deltaLights[1].p), Normalize(Vec3(-1, 1, 0)), 1e-6f));
  // The spot now points along the reflected axis (-1, 0, 1).
  EXPECT_EQ(SpotFalloff<false>(&s.deltaLights[2], Vec3(-1, 0, 1)), 1.0f);
  EXPECT_EQ(SpotFalloff<false>(&s.deltaLights[2], Vec3(1, 0, 1)), 0.0f);
  // The triangle was reflected the same way: its vertex (1, 0, 5) is at x = -1.
  int reflected = 0;
  for (const Vec3& p : s.positions) reflected += p.x == -1.0f;
  EXPECT_EQ(reflected, 1);
}

TEST(PbrtLoaderDeltaLights, LightsLeftOutWithAWarning) {
  PbrtDir dir;
  const Scene s = dir.LoadLit(std::string(kShape) +
                              "LightSource \"spot\" \"point3 from\" [1 1 1] \"point3 to\" [1 1 1]\n"
                              "LightSource \"spot\" \"float conedeltaangle\" -1\n"
                              "LightSource \"distant\" \"point3 from\" [2 2 2] \"point3 to\" [2 2 2]\n"
                              "LightSource \"point\" \"rgb I\" [0 0 0]\n"
                              "LightSource \"point\" \"float scale\" -1\n"
                              "LightSource \"point\" \"float scale\" 1e39\n");
  EXPECT_TRUE(s.deltaLights.empty());
  for (const char* w :
       {"s.pbrt:3: LightSource \"spot\": \"from\" and \"to\" are the same point; left out",
        "s.pbrt:4: LightSource \"spot\": a negative \"conedeltaangle\"; left out",
        "s.pbrt:5: LightSource \"distant\": \"from\" and \"to\" are the same point; left out",
        "s.pbrt:6: LightSource \"point\" emits nothing", "s.pbrt:7: LightSource \"point\" emits nothing",
        "s.pbrt:8: LightSource \"point\": its intensity or position overflows a float; left out"})
    EXPECT_EQ(test::CountWarnings(s, w), 1u) << w << "\n" << test::AllWarnings(s);
}

}  // namespace
}  // namespace tracer
