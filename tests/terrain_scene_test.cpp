// @file terrain_scene_test.cpp: src/scripts/make_terrain.py, the generated benchmark scene, at a small size: it
// writes exactly the triangles asked for, none degenerate, deterministically, with emitters, relief and a spread of
// triangle sizes, and the tracer renders it lit.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "test_util.h"
#include "tracer/core/light.h"
#include "tracer/host/scene_loader.h"

namespace tracer {
namespace {

bool HavePython() { return test::RunCommand("python3 -c pass").exitCode == 0; }

// Runs the generator into dir; its output on failure.
test::CommandResult MakeTerrain(const std::string& dir, int triangles, int seed) {
  return test::RunCommand("python3 '" + test::TestDir() + "/../src/scripts/make_terrain.py' --triangles " +
                          std::to_string(triangles) + " --seed " + std::to_string(seed) + " --out '" + dir + "'");
}

TEST(TerrainScene, HasExactlyTheTrianglesAskedForWithLightsReliefAndVariedSizes) {
  if (!HavePython()) GTEST_SKIP() << "python3 not found";
  const std::string dir = test::MakeTempDir();
  for (int triangles : {1001, 6000}) {  // 1001: the terrain's last row ends in a lone triangle
    const test::CommandResult made = MakeTerrain(dir, triangles, 3);
    ASSERT_EQ(made.exitCode, 0) << made.output;
    const Scene scene = LoadScene(dir + "/terrain.obj");
    EXPECT_EQ(scene.NumTriangles(), static_cast<size_t>(triangles));
    EXPECT_EQ(scene.droppedTriangles, 0u);
    EXPECT_TRUE(scene.warnings.empty()) << scene.warnings.front();
    EXPECT_TRUE(scene.camera.valid) << "terrain.camera";

    size_t emitters = 0;
    float minArea = 1e30f, maxArea = 0.0f;
    for (size_t t = 0; t < scene.NumTriangles(); ++t) {
      if (scene.materials[static_cast<size_t>(scene.triMaterial[t])].IsEmissive()) {
        emitters++;
        continue;  // the sky panel alone is far bigger than the rest
      }
      const Vec3* p = &scene.positions[3 * t];
      const float area = TriangleArea(p[0], p[1], p[2]);
      minArea = std::min(minArea, area);
      maxArea = std::max(maxArea, area);
    }
    EXPECT_GT(emitters, 0u);
    // Not one plane: the relief is a sizeable fraction of the terrain's width.
    const Vec3 extent = scene.boundsMax - scene.boundsMin;
    EXPECT_GT(extent.y, 0.2f * extent.x);
    // Rocks from 0.3 to 30 units across, cut into 20 to 5120 triangles, beside the terrain's cells (emitters aside).
    EXPECT_GT(maxArea / minArea, 1e3f) << minArea << " .. " << maxArea;
  }
  test::RemoveTree(dir);
}

TEST(TerrainScene, SameSeedSameFileOtherSeedAnotherFile) {
  if (!HavePython()) GTEST_SKIP() << "python3 not found";
  const std::string a = test::MakeTempDir(), b = test::MakeTempDir(), c = test::MakeTempDir();
  ASSERT_EQ(MakeTerrain(a, 3000, 7).exitCode, 0);
  ASSERT_EQ(MakeTerrain(b, 3000, 7).exitCode, 0);
  ASSERT_EQ(MakeTerrain(c, 3000, 8).exitCode, 0);
  const std::string fileA = test::ReadFile(a + "/terrain.obj");
  EXPECT_EQ(fileA, test::ReadFile(b + "/terrain.obj"));
  EXPECT_NE(fileA, test::ReadFile(c + "/terrain.obj"));
  for (const std::string& dir : {a, b, c}) test::RemoveTree(dir);
}

TEST(TerrainScene, RendersLitWithItsCamera) {
  if (!HavePython()) GTEST_SKIP() << "python3 not found";
  const std::string dir = test::MakeTempDir();
  ASSERT_EQ(MakeTerrain(dir, 4000, 1).exitCode, 0);
  const test::CommandResult r = test::RunTracer(
      "'" + dir + "/terrain.obj' --verbose --backend cpu --spp 4 --width 48 --height 32 -o '" + dir + "/terrain.pfm'");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("scene: 4000 triangles"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the scene's .camera file"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("entirely black"), std::string::npos) << r.output;
  EXPECT_TRUE(test::FileExists(dir + "/terrain.pfm"));
  test::RemoveTree(dir);
}

}  // namespace
}  // namespace tracer
