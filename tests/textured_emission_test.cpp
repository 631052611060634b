// @file textured_emission_test.cpp: map_Ke on the CPU: seen directly, an emitter shows Ke times its texture, the
// right way round, averaging to the texture's mean; as a light, it lights a floor as the untextured emitter at
// that mean does (next-event estimation reads the texel at the sampled point, and light selection by power uses
// the mean).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cutout_scenes.h"
#include "test_util.h"
#include "tracer/host/backends.h"
#include "tracer/host/scene_loader.h"

using namespace tracer;

namespace {

double Mean(const std::vector<float>& rgb) {
  double s = 0;
  for (size_t i = 0; i < rgb.size(); i += 3) s += rgb[i];
  return s / (rgb.size() / 3);
}

// An emitter filling a 40-degree view from the origin (z = -1, |x|, |y| <= tan 20 degrees, uv (0, 0) at its
// bottom-left) with Ke 2 and map_Ke of an 8x8 image that is black in its bottom-left quadrant and white elsewhere:
// those pixels read 0, the others 2 (away from the quadrant's edges, where bilinear filtering blends), and the
// picture's mean is 2 x 0.75 (a repeated bilinear image integrates to its texels' mean over a period).
TEST(TexturedEmission, SeenDirectlyItIsKeTimesTheTextureTheRightWayRound) {
  const std::string dir = test::MakeTempDir();
  ASSERT_TRUE(test::WriteQuadrantOpacity(dir + "/glow.png", 8, false));
  const double t = std::tan(20.0 * 3.14159265358979323846 / 180.0);
  test::WriteFile(dir + "/e.mtl", "newmtl screen\nKd 0 0 0\nKe 2 2 2\nmap_Ke glow.png\n");
  char obj[512];
  std::snprintf(obj, sizeof obj,
                "mtllib e.mtl\nusemtl screen\nv %.9g %.9g -1\nv %.9g %.9g -1\nv %.9g %.9g -1\nv %.9g %.9g -1\n"
                "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nf 1/1 2/2 3/3 4/4\n",
                -t, -t, t, -t, t, t, -t, t);
  test::WriteFile(dir + "/e.obj", obj);
  const Scene scene = LoadScene(dir + "/e.obj");
  ASSERT_GE(scene.materials.at(0).emissionTexture, 0);
  const SceneData d =
      BuildSceneData(scene, Camera::LookAt(Vec3(0.0f), Vec3(0, 0, -1), Vec3(0, 1, 0), 40.0f, 16, 16), Vec3(0.0f));
  const std::vector<float> img = RenderCpu(d, test::QuietRender(16, 16, 64, 0)).rgb;
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 16; ++x) {
      if ((x >= 6 && x <= 9) || (y >= 6 && y <= 9) || x == 0 || x == 15 || y == 0 || y == 15) continue;
      const bool dark = x < 8 && y >= 8;
      EXPECT_EQ(img[3 * (static_cast<size_t>(y) * 16 + x)], dark ? 0.0f : 2.0f) << "pixel (" << x << ", " << y << ")";
    }
  EXPECT_NEAR(Mean(img), 1.5, 0.015);
  test::RemoveTree(dir);
}

// A 0.5 x 0.5 emitter 3 above a diffuse floor, with Ke 4 and the same map_Ke (mean 0.75), against the untextured
// Ke 3: the floor's mean radiance agrees within 1% (the texture's uneven spread over so small a source changes the
// floor's irradiance by far less; ignoring the texture in next-event estimation would make it 33% brighter).
TEST(TexturedEmission, LightsAFloorAsTheUntexturedEmitterAtItsMean) {
  const std::string dir = test::MakeTempDir();
  ASSERT_TRUE(test::WriteQuadrantOpacity(dir + "/glow.png", 8, false));
  auto render = [&](const std::string& lamp) {
    test::WriteFile(dir + "/f.mtl", "newmtl floor\nKd 0.5 0.5 0.5\nnewmtl lamp\nKd 0 0 0\n" + lamp + "\n");
    test::WriteFile(dir + "/f.obj",
                    "mtllib f.mtl\nusemtl floor\nv -4 0 -4\nv -4 0 4\nv 4 0 4\nv 4 0 -4\nf 1 2 3 4\n"
                    "usemtl lamp\nv -0.25 3 -0.25\nv 0.25 3 -0.25\nv 0.25 3 0.25\nv -0.25 3 0.25\n"
                    "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nf 5/1 6/2 7/3 8/4\n");
    const SceneData d =
        BuildSceneData(LoadScene(dir + "/f.obj"),
                       Camera::LookAt(Vec3(0, 2, 0.001f), Vec3(0.0f), Vec3(0, 1, 0), 60.0f, 32, 32), Vec3(0.0f));
    return Mean(RenderCpu(d, test::QuietRender(32, 32, 256, 1)).rgb);
  };
  const double textured = render("Ke 4 4 4\nmap_Ke glow.png"), plain = render("Ke 3 3 3");
  std::printf("floor under a map_Ke emitter: %.5f, under Ke at the texture's mean: %.5f\n", textured, plain);
  EXPECT_GT(plain, 0.0);
  EXPECT_NEAR(textured, plain, 0.01 * plain);
  test::RemoveTree(dir);
}

// map_Ke without a Ke line emits the texture itself (Blender's reading); with Ke it multiplies Ke.
TEST(TexturedEmission, MapKeWithoutKeEmitsTheTexture) {
  const std::string dir = test::MakeTempDir();
  ASSERT_TRUE(test::WriteQuadrantOpacity(dir + "/glow.png", 8, false));
  const Scene scene = test::LoadOneTrianglePerMaterial(
      dir, "m", "newmtl a\nmap_Ke glow.png\nnewmtl b\nKe 0.5 0.5 0.5\nmap_Ke glow.png\n");
  ASSERT_EQ(scene.materials.size(), 2u);
  EXPECT_EQ(scene.materials[0].ke, Vec3(1.0f));
  EXPECT_EQ(scene.materials[1].ke, Vec3(0.5f));
  EXPECT_EQ(scene.materials[0].emissionTexture, scene.materials[1].emissionTexture);
  test::RemoveTree(dir);
}

}  // namespace
