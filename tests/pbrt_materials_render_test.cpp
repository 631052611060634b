// @file pbrt_materials_render_test.cpp: pbrt-v4 materials in CPU renders of small scenes whose images are known by
// hand: a thin dielectric sheet passes light straight through, a diffuse transmitter lets the light behind it through,
// a mix shows each of its materials in proportion to its amount. Each would fail under the mappings these lobes
// replaced (the thin sheet refracted as a solid's surface, the transmitter was opaque, the mix took one material).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "pbrt_loader_test_util.h"
#include "tracer/host/backends.h"
#include "tracer/host/scene_data.h"

namespace tracer {
namespace {

using test::PbrtDir;

using test::ImageMean;

std::string Square(float s, float z) { return test::PbrtSquare(s, z); }

// The image's mean at 24 x 24 pixels and its standard error.
ImageMean RenderMean(const Scene& s, Vec3 environment, int spp, int maxDepth) {
  return test::RenderMean(s, environment, spp, maxDepth, 24);
}

TEST(PbrtMaterialsRender, ThinDielectricPassesLightStraightThrough) {
  // A thin sheet (eta 1.5) in front of a black emitter of radiance 1 that fills the view (fov 10): seen straight
  // through, T' = 1 - 2R / (1 + R) = (1 - R) / (1 + R) with R = 0.04 at normal incidence, 0.923077; within the view's 5
  // degrees R changes by under 1e-4. Each sample passes (weight 1) with probability T' or reflects into the dark:
  // tolerance 4 standard errors of the image mean.
  PbrtDir dir;
  const Scene s = dir.Load(
      "Scale -1 1 1 Camera \"perspective\" \"float fov\" 10 WorldBegin\n"
      "AttributeBegin Material \"thindielectric\"\n" +
      Square(2.0f, 3.0f) +
      "AttributeEnd\n"
      "AttributeBegin AreaLightSource \"diffuse\" \"rgb L\" [1 1 1] ReverseOrientation\n"
      "Material \"diffuse\" \"rgb reflectance\" [0 0 0]\n" +
      Square(50.0f, 10.0f) + "AttributeEnd\n");
  const ImageMean m = RenderMean(s, Vec3(0.0f), 64, 4);
  EXPECT_NEAR(m.mean, 0.96 / 1.04, 4.0 * m.se) << "a solid's surface would give (1 - R) / eta^2 = 0.43";
  EXPECT_LT(m.se, 0.003);
}

TEST(PbrtMaterialsRender, DiffuseTransmitterLetsTheLightBehindThrough) {
  // A sheet that reflects nothing and transmits 0.5, under a uniform environment of radiance 1: from the front it
  // shows 0.5 of the light behind it (the integral of 0.5 / pi cos over the far hemisphere), by light sampling through
  // the sheet and by transmitted BSDF samples. Tolerance: 4 standard errors of the image mean.
  PbrtDir dir;
  const Scene s = dir.Load(
      "Scale -1 1 1 Camera \"perspective\" \"float fov\" 20 WorldBegin\n"
      "Material \"diffusetransmission\" \"rgb reflectance\" [0 0 0] \"rgb transmittance\" [0.5 0.5 0.5]\n" +
      Square(2.0f, 3.0f));
  const ImageMean m = RenderMean(s, Vec3(1.0f), 64, 2);
  EXPECT_NEAR(m.mean, 0.5, 4.0 * m.se + 1e-4) << "an opaque sheet would be black";
  EXPECT_LT(m.se, 0.01);
}

TEST(PbrtMaterialsRender, MixShowsEachMaterialInProportion) {
  // A mix of a white and a black diffuse (amount 0.3: the black one at 30% of the points) under a uniform
  // environment of radiance 1: 0.7 on average, each point all white or all black (the choice is a hash of the hit
  // point, so the intersect step's queue and the shade step agree). Tolerance: 4 standard errors of the image mean.
  PbrtDir dir;
  const Scene s = dir.Load(
      "Scale -1 1 1 Camera \"perspective\" \"float fov\" 20 WorldBegin\n"
      "MakeNamedMaterial \"white\" \"string type\" \"diffuse\" \"rgb reflectance\" [1 1 1]\n"
      "MakeNamedMaterial \"black\" \"string type\" \"diffuse\" \"rgb reflectance\" [0 0 0]\n"
      "MakeNamedMaterial \"m\" \"string type\" \"mix\" \"string materials\" [\"white\" \"black\"] \"float amount\" "
      "0.3\n"
      "NamedMaterial \"m\"\n" +
      Square(2.0f, 3.0f));
  const ImageMean m = RenderMean(s, Vec3(1.0f), 64, 1);
  EXPECT_NEAR(m.mean, 0.7, 4.0 * m.se + 1e-4) << "taking the likelier material would give 1";
}

}  // namespace
}  // namespace tracer
