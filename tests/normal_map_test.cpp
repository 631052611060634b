// @file normal_map_test.cpp: shading normals on the CPU: normal maps (norm) and bump maps (bump -bm) tilt a flat
// quad's normal by the angle their texels give, toward the side they give (analytic radiance under a constant and
// a half-bright environment); vertex normals tilted away from the view are bent so the quad is not black, and no
// light leaks through from under the surface; the loader reads the statements, and a normal map written as a bump
// map is recognised.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "normal_map_scenes.h"
#include "test_util.h"
#include "tracer/core/integrator.h"
#include "tracer/host/backends.h"
#include "tracer/host/env_map.h"
#include "tracer/host/scene_loader.h"

using namespace tracer;

namespace {

constexpr double kDegree = 3.14159265358979323846 / 180.0;

double MeanRed(const std::vector<float>& rgb) {
  double s = 0;
  for (size_t i = 0; i < rgb.size(); i += 3) s += rgb[i];
  return s / static_cast<double>(rgb.size() / 3);
}

// The environment "bright where x > 0": 1 in the map's columns u > 1/2 (core/environment.h: x = sin(theta)
// sin(2 pi (u - 1/2))), 0 elsewhere; lookups take the nearest texel, so the edge lies exactly on the plane x = 0.
EnvImage HalfBrightMap() {
  EnvImage img;
  img.width = 64;
  img.height = 32;
  img.rgb.assign(64 * 32 * 3, 0.0f);
  for (int y = 0; y < 32; ++y)
    for (int x = 32; x < 64; ++x)
      for (int c = 0; c < 3; ++c) img.rgb[(static_cast<size_t>(y) * 64 + x) * 3 + c] = 1.0f;
  return img;
}

// The mean radiance of the quad seen from `eye` (looking at the origin through a 6-degree view that the quad
// fills from up to 12 away, or 8 at 40 degrees' elevation), under the constant environment 1 or the half-bright map,
// with direct light only (depth 1).
double QuadRadiance(const std::string& obj, Vec3 eye, bool halfX) {
  SceneData d = BuildSceneData(LoadScene(obj), Camera::LookAt(eye, Vec3(0.0f), Vec3(0, 1, 0), 6.0f, 24, 24),
                               Vec3(halfX ? 0.0f : 1.0f));
  if (halfX) SetEnvironmentMap(d, HalfBrightMap(), 1.0f, 0.0f);
  return MeanRed(RenderCpu(d, test::QuietRender(24, 24, 256, 1)).rgb);
}

// Normal maps: texels tilting the normal 40 degrees along +T, -T and +B (and a little along the other tangent by
// 8-bit rounding of 0.5), on the quad with uv along (x, y), turned (u along y, v along -x) and mirrored (u along y,
// v along x, where the bitangent must be turned to dp/dv's side), seen from straight
// above. Under the constant environment each reads albedo times (1 + cos tilt) / 2 (0.4415 against 0.5
// untilted); under the half-bright map a tilt toward +x is brighter than the flat quad and one toward -x darker,
// each by the analytic amount. A frame turned the wrong way or mirrored, or the map read as sRGB colour, misses by
// several percent.
TEST(NormalMap, TiltsTheNormalByTheTexelTowardItsSide) {
  const std::string dir = test::MakeTempDir();
  const unsigned char a = static_cast<unsigned char>(std::lround((std::sin(40.0 * kDegree) + 1.0) * 0.5 * 255.0));
  const unsigned char b = static_cast<unsigned char>(std::lround((-std::sin(40.0 * kDegree) + 1.0) * 0.5 * 255.0));
  const unsigned char z = static_cast<unsigned char>(std::lround((std::cos(40.0 * kDegree) + 1.0) * 0.5 * 255.0));
  struct Case {
    unsigned char texel[3];
    test::UvLayout layout;
  };
  for (const Case& c :
       {Case{{a, 128, z}, test::kPlainUv}, Case{{b, 128, z}, test::kPlainUv}, Case{{128, a, z}, test::kTurnedUv},
        Case{{a, 128, z}, test::kTurnedUv}, Case{{128, a, z}, test::kMirroredUv}}) {
    ASSERT_TRUE(test::WriteUniformNormalMap(dir + "/n.png", 4, c.texel));
    const std::string obj = test::WriteShadingQuad(dir, "Kd 0.5 0.5 0.5\nnorm n.png", Vec3(0.0f), c.layout);
    const Vec3 t = test::NormalOfTexel(c.texel);  // in (T, B, n)
    // Turned: T = +y, B = -x; mirrored: T = +y, B = +x.
    const Vec3 n = c.layout == test::kTurnedUv     ? Vec3(-t.y, t.x, t.z)
                   : c.layout == test::kMirroredUv ? Vec3(t.y, t.x, t.z)
                                                   : t;
    for (bool halfX : {false, true}) {
      const double expected = 0.5 * test::CosineFractionAbove(n, halfX);
      const double got = QuadRadiance(obj, Vec3(0, 0, 12), halfX);
      std::printf("normal map texel (%d, %d, %d), uv layout %d, %s: %.5f, expected %.5f\n", c.texel[0], c.texel[1],
                  c.texel[2], static_cast<int>(c.layout), halfX ? "half-bright map" : "constant environment", got,
                  expected);
      EXPECT_NEAR(got, expected, 0.006 * expected);
    }
  }
  test::RemoveTree(dir);
}

// Bump maps: the height ramp (rising 256/255 per unit u) at -bm 1.5 on a quad 2 units per unit of u tilts the
// normal by atan(0.75 x 256/255) (37.0 degrees) toward -x, away from the rise: analytic radiance under both
// environments, and darker than the flat quad under the half-bright one. Without -bm (1) the tilt is
// atan(128/255). (Past 45 degrees the view from above would be bent, BendShadingNormal: not what this measures.)
TEST(BumpMap, TiltsTheNormalAwayFromTheRise) {
  const std::string dir = test::MakeTempDir();
  ASSERT_TRUE(test::WriteHeightRamp(dir + "/h.png"));
  for (float bm : {1.5f, 1.0f}) {
    const std::string options = bm == 1.0f ? "" : "-bm 1.5 ";
    const std::string obj = test::WriteShadingQuad(dir, "Kd 0.5 0.5 0.5\nbump " + options + "h.png");
    const double slope = bm * (256.0 / 255.0) / 2.0;  // height per unit of x
    const Vec3 n = Normalize(Vec3(static_cast<float>(-slope), 0.0f, 1.0f));
    for (bool halfX : {false, true}) {
      const double expected = 0.5 * test::CosineFractionAbove(n, halfX);
      const double got = QuadRadiance(obj, Vec3(0, 0, 12), halfX);
      std::printf("bump -bm %g, %s: %.5f, expected %.5f\n", bm, halfX ? "half-bright map" : "constant environment", got,
                  expected);
      EXPECT_NEAR(got, expected, 0.006 * expected);
      if (halfX) {
        EXPECT_LT(got, 0.5 * 0.5 * 0.97);
      }
    }
  }
  test::RemoveTree(dir);
}

// The height's other derivative and the texture's -s scale, which the linear u-ramp above does not see: (a) a ramp
// rising along v on the turned quad (v along -x) rises toward -x, so the normal tilts toward +x, and the half-bright
// map reads brighter than the flat quad (a sign error in dh/dv, or dh/dv taken along u, reads darker or flat);
// (b) the u-ramp at -bm 0.75 -s 2 1 1 -clamp on: over x < 0 the scaled ramp rises twice as fast per unit of u, so the
// slope is bm 1.5's (37.0 degrees), and over x > 0 the clamped height is flat; the image is the mean of the two
// halves (a derivative taken per unit of the scaled coordinate instead of the surface's u would halve the slope on
// the left). Measured: 0.44902 / 0.34977 against 0.44972 / 0.35009 along v (a flipped dh/dv would read 0.0996
// under the half-bright map), 0.47513 / 0.17476 against 0.47486 / 0.17481 scaled.
TEST(BumpMap, RampAlongVAndScaledUvTiltAsTheirSlopes) {
  const std::string dir = test::MakeTempDir();
  const double slope = 1.5 * (256.0 / 255.0) / 2.0;  // height per unit of x, both cases
  const Vec3 tiltedPlusX = Normalize(Vec3(static_cast<float>(slope), 0.0f, 1.0f));
  const Vec3 tiltedMinusX = Normalize(Vec3(static_cast<float>(-slope), 0.0f, 1.0f));
  ASSERT_TRUE(test::WriteHeightRamp(dir + "/hv.png", true));
  const std::string alongV =
      test::WriteShadingQuad(dir, "Kd 0.5 0.5 0.5\nbump -bm 1.5 hv.png", Vec3(0.0f), test::kTurnedUv);
  for (bool halfX : {false, true}) {
    const double expected = 0.5 * test::CosineFractionAbove(tiltedPlusX, halfX);
    const double got = QuadRadiance(alongV, Vec3(0, 0, 12), halfX);
    std::printf("bump along v, turned uv, %s: %.5f, expected %.5f\n",
                halfX ? "half-bright map" : "constant environment", got, expected);
    EXPECT_NEAR(got, expected, 0.006 * expected);
    if (halfX) {
      EXPECT_GT(got, 0.5 * 0.5 * 1.03);
    }
  }
  ASSERT_TRUE(test::WriteHeightRamp(dir + "/h.png"));
  const std::string scaled = test::WriteShadingQuad(dir, "Kd 0.5 0.5 0.5\nbump -bm 0.75 -s 2 1 1 -clamp on h.png");
  for (bool halfX : {false, true}) {
    const double expected =
        0.5 * 0.5 * (test::CosineFractionAbove(tiltedMinusX, halfX) + test::CosineFractionAbove(Vec3(0, 0, 1), halfX));
    const double got = QuadRadiance(scaled, Vec3(0, 0, 12), halfX);
    std::printf("bump -bm 0.75 -s 2 1 1 -clamp on, %s: %.5f, expected %.5f\n",
                halfX ? "half-bright map" : "constant environment", got, expected);
    EXPECT_NEAR(got, expected, 0.006 * expected);
  }
  test::RemoveTree(dir);
}

// Vertex normals tilted 60 degrees toward +x, seen from 50 degrees toward -x: the view is under the shading
// normal's horizon, where the BSDF is zero, so without bending the quad renders black. Bent (BendShadingNormal),
// it reads albedo times (1 + cos) / 2 of the bent normal's angle with the surface. Lit instead from below by an
// emitter under the quad (a black environment above), it stays exactly black: nothing leaks through.
TEST(ShadingNormal, TiltedVertexNormalsAreBentNotBlackAndDoNotLeak) {
  const std::string dir = test::MakeTempDir();
  const Vec3 vn(std::sin(60.0f * static_cast<float>(kDegree)), 0.0f, std::cos(60.0f * static_cast<float>(kDegree)));
  const std::string obj = test::WriteShadingQuad(dir, "Kd 0.5 0.5 0.5", vn);
  const Vec3 wo(-std::sin(50.0f * static_cast<float>(kDegree)), 0.0f, std::cos(50.0f * static_cast<float>(kDegree)));
  const Vec3 bent = BendShadingNormal(Normalize(vn), Vec3(0, 0, 1), wo);
  EXPECT_GT(Dot(bent, wo), 0.0f);
  const double expected = 0.5 * test::CosineFractionAbove(bent, false);
  const double got = QuadRadiance(obj, wo * 8.0f, false);
  std::printf("vn tilted 60 degrees, seen from 50 degrees the other way: %.5f, expected %.5f (bent %.1f degrees)\n",
              got, expected, std::acos(bent.z) / kDegree);
  EXPECT_GT(got, 0.3);
  EXPECT_NEAR(got, expected, 0.015 * expected);

  // The same quad over an emitter facing up at z = -1 (Ke 5), no environment.
  std::string quad = test::ReadFile(obj);
  test::WriteFile(dir + "/quad.mtl", "newmtl m\nKs 0 0 0\nKd 0.5 0.5 0.5\nnewmtl lamp\nKd 0 0 0\nKe 5 5 5\n");
  quad += "usemtl lamp\nv -9 -9 -1\nv 9 -9 -1\nv 9 9 -1\nv -9 9 -1\nf 5 6 7 8\n";
  test::WriteFile(dir + "/leak.obj", quad);
  // A 3-degree view from 20 away sees only the quad (down to 40 degrees' elevation).
  for (Vec3 eye : {wo * 20.0f, Vec3(0, 0, 20), Normalize(Vec3(0.5f, 0.0f, 0.8f)) * 20.0f}) {
    const SceneData d = BuildSceneData(LoadScene(dir + "/leak.obj"),
                                       Camera::LookAt(eye, Vec3(0.0f), Vec3(0, 1, 0), 3.0f, 16, 16), Vec3(0.0f));
    const std::vector<float> img = RenderCpu(d, test::QuietRender(16, 16, 64, 4)).rgb;
    for (size_t i = 0; i < img.size(); ++i) ASSERT_EQ(img[i], 0.0f) << "light leaked at value " << i;
  }
  test::RemoveTree(dir);
}

// A closed, lossless glass object under a constant environment of 1 reads 1 everywhere: every path that enters
// leaves, each crossing scales radiance by 1/eta^2 one way and eta^2 the other, and reflection loses nothing. Here a
// low-poly sphere (12 x 6 facets) with smooth vertex normals, whose shading normals differ from the facets' by up to
// about 20 degrees, seen at 48x48 through paths of up to 64 bounces, without Russian roulette, so that every path
// that neither exceeds the depth nor crosses wrongly reads exactly 1. A crossing judged by the shading normal against
// the facet (entering where the ray leaves, so scaled by 2.25 instead of 0.44) shows as a pixel off 1.
TEST(ShadingNormal, SmoothGlassSphereUnderAConstantSkyReadsOne) {
  const std::string dir = test::MakeTempDir();
  test::WriteFile(dir + "/g.mtl", "newmtl glass\nKd 0 0 0\nKs 1 1 1\nTf 1 1 1\nNi 1.5\nillum 7\n");
  const int seg = 12, rings = 6;
  std::string obj = "mtllib g.mtl\nusemtl glass\n";
  for (int r = 0; r <= rings; ++r)
    for (int k = 0; k < seg; ++k) {
      const double th = kDegree * 180.0 * r / rings, ph = kDegree * 360.0 * k / seg;
      char v[160];
      std::snprintf(v, sizeof v, "v %.9f %.9f %.9f\nvn %.9f %.9f %.9f\n", std::sin(th) * std::cos(ph), std::cos(th),
                    std::sin(th) * std::sin(ph), std::sin(th) * std::cos(ph), std::cos(th),
                    std::sin(th) * std::sin(ph));
      obj += v;
    }
  auto id = [&](int r, int k) { return std::to_string(r * seg + (k % seg) + 1); };
  auto vert = [&](int r, int k) { return id(r, k) + "//" + id(r, k); };
  for (int r = 0; r < rings; ++r)
    for (int k = 0; k < seg; ++k) {
      if (r > 0) obj += "f " + vert(r, k) + " " + vert(r, k + 1) + " " + vert(r + 1, k + 1) + "\n";
      if (r < rings - 1) obj += "f " + vert(r, k) + " " + vert(r + 1, k + 1) + " " + vert(r + 1, k) + "\n";
    }
  test::WriteFile(dir + "/g.obj", obj);
  const int w = 48;
  const SceneData d =
      BuildSceneData(LoadScene(dir + "/g.obj"),
                     Camera::LookAt(Vec3(0.3f, 0.5f, 4.0f), Vec3(0.0f), Vec3(0, 1, 0), 32.0f, w, w), Vec3(1.0f));
  RenderOptions opt = test::QuietRender(w, w, 64, 64);
  opt.rouletteDepth = 1000;  // no Russian roulette: a path's value is then the product of its crossings' factors
  const std::vector<float> img = RenderCpu(d, opt).rgb;
  double sum = 0.0, worst = 0.0;
  int off = 0;
  for (size_t i = 0; i < img.size(); i += 3) {
    sum += img[i];
    worst = std::max(worst, std::fabs(img[i] - 1.0));
    off += std::fabs(img[i] - 1.0) > 1e-3;
  }
  const double mean = sum / (img.size() / 3);
  std::printf("glass sphere under a sky of 1: mean %.5f, worst pixel off by %.3f, %d of %d pixels off by > 1e-3\n",
              mean, worst, off, w * w);
  // Measured: mean 0.99983, 20 pixels off (worst by 0.031: paths cut at 64 bounces or a rare crossing judged
  // wrongly). Bending the glass's shading normal as reflective surfaces' are (BendShadingNormal about the side wo is
  // on) made it mean 0.990 with 189 pixels off, worst by 0.55, so glass keeps its interpolated normal.
  EXPECT_NEAR(mean, 1.0, 0.002);
  EXPECT_LT(off, w * w / 50);
  test::RemoveTree(dir);
}

// BendShadingNormal on random inputs, grazing views included: the mirror direction of wo about the result never
// leaves under the surface (away from grazing views, it leaves at the threshold's cosine when bent), wo is not under
// the result's horizon, the result is a unit vector, and a normal that needs no bending comes back unchanged.
TEST(ShadingNormal, BendingKeepsTheMirrorDirectionAboveTheSurface) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto randomUnit = [&](float minZ) {
    for (;;) {
      Vec3 v(u(rng), u(rng), u(rng));
      const float l = Length(v);
      if (l > 0.1f && l <= 1.0f && v.z / l >= minZ) return v / l;
    }
  };
  // Views at grazing angles too (wo.ng in [0, 1e-3], a tenth of them exactly 0), where wo and the lifted mirror
  // direction nearly cancel.
  std::uniform_real_distribution<float> graze(0.0f, 1e-3f);
  auto grazingUnit = [&](int i) {
    const Vec3 v = randomUnit(0.0f);
    const float z = i % 10 == 0 ? 0.0f : graze(rng), xy = std::sqrt(v.x * v.x + v.y * v.y);
    const float k = std::sqrt(1.0f - z * z) / xy;
    return xy > 1e-3f ? Vec3(v.x * k, v.y * k, z) : Vec3(1.0f, 0.0f, 0.0f);
  };
  const Vec3 ng(0, 0, 1);
  int bent = 0;
  for (int i = 0; i < 40000; ++i) {
    const Vec3 ns = randomUnit(0.0f), wo = i < 20000 ? randomUnit(0.0f) : grazingUnit(i);
    const Vec3 n = BendShadingNormal(ns, ng, wo);
    const float threshold = std::fmin(0.01f, 0.9f * wo.z);
    const float mirror = 2.0f * Dot(n, wo) * n.z - wo.z;
    ASSERT_NEAR(Length(n), 1.0f, 1e-5f);
    ASSERT_GE(mirror, -1e-6f) << "ns " << ns.x << " " << ns.y << " " << ns.z;
    ASSERT_GE(Dot(n, wo), -1e-6f);
    if (2.0f * Dot(ns, wo) * ns.z - wo.z >= threshold) {
      ASSERT_EQ(n.x, ns.x);
      ASSERT_EQ(n.z, ns.z);
    } else if (wo.z > 1e-2f) {  // away from grazing, lifted just to the threshold, no further
      ++bent;
      ASSERT_NEAR(mirror, threshold, 1e-4f);
    }
  }
  EXPECT_GT(bent, 1000);  // the random inputs do exercise the bending
}

// The loader: norm and map_Kn are normal maps, bump and map_Bump height maps with their -bm; both read as data,
// the normal map winning when a material has both; a bluish image behind a bump statement is read as a normal map
// with one warning naming it.
TEST(NormalMap, LoaderReadsTheStatements) {
  const std::string dir = test::MakeTempDir();
  const unsigned char blue[3] = {128, 128, 255};
  ASSERT_TRUE(test::WriteUniformNormalMap(dir + "/n.png", 4, blue));
  ASSERT_TRUE(test::WriteHeightRamp(dir + "/h.png"));
  const Scene scene = test::LoadOneTrianglePerMaterial(
      dir, "m",
      "newmtl a\nnorm n.png\nnewmtl b\nbump -bm 0.25 h.png\nnewmtl c\nmap_Bump h.png\nmap_Kn n.png\n"
      "newmtl d\nmap_Bump n.png\nnewmtl e\nKd 1 1 1\n");
  ASSERT_EQ(scene.materials.size(), 5u);
  const std::vector<HostMaterial>& m = scene.materials;
  EXPECT_GE(m[0].bumpTexture, 0);
  EXPECT_TRUE(m[0].bumpIsNormalMap);
  EXPECT_GE(m[1].bumpTexture, 0);
  EXPECT_FALSE(m[1].bumpIsNormalMap);
  EXPECT_EQ(scene.textureMaps[static_cast<size_t>(m[1].bumpTexture)].options.bumpMultiplier, 0.25f);
  EXPECT_EQ(m[2].bumpTexture, m[0].bumpTexture);  // map_Kn wins over map_Bump, and shares a's map
  EXPECT_TRUE(m[2].bumpIsNormalMap);
  EXPECT_TRUE(m[3].bumpIsNormalMap);
  EXPECT_EQ(m[4].bumpTexture, -1);
  // Read as data: 128 is 128/255, not sRGB-decoded (0.216).
  const Texture& t =
      scene.textures[static_cast<size_t>(scene.textureMaps[static_cast<size_t>(m[0].bumpTexture)].texture)];
  EXPECT_FLOAT_EQ(t.texels[0].x, 128.0f / 255.0f);
  int warned = 0;
  for (const std::string& w : scene.warnings)
    if (w.find("looks like a tangent-space normal map") != std::string::npos) {
      ++warned;
      EXPECT_NE(w.find("m.mtl:9"), std::string::npos) << w;
    }
  EXPECT_EQ(warned, 1);
  test::RemoveTree(dir);
}

}  // namespace
