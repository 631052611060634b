// @file texture_test.cpp: texture lookups as per-ray code makes them (SampleTexture, shared by the CPU and the GPU),
// on textures loaded from MTL statements: OBJ's uv origin at the image's bottom-left, bilinear filtering, repeat
// and -clamp, -s/-o and -mm. Expected values come from the PNG's pixels and the definitions, not from a run.
#include <gtest/gtest.h>
#include <stb/stb_image_write.h>

#include <cmath>
#include <string>

#include "test_util.h"
#include "tracer/core/scene_view.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/scene_loader.h"

namespace tracer {
namespace {

// A 2x2 image, as stored top row first: red, green / blue, white. With OBJ's convention the bottom-left texel
// (blue) has its centre at uv (0.25, 0.25) and the top-right one (green) at (0.75, 0.75). Full-scale sRGB values
// are 0 and 1 in linear RGB too, so every expected value below is exact.
const Vec3 kRed(1, 0, 0), kGreen(0, 1, 0), kBlue(0, 0, 1), kWhite(1, 1, 1);

class TextureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const unsigned char pixels[] = {255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255};
    ASSERT_NE(stbi_write_png((dir_ + "/quad.png").c_str(), 2, 2, 3, pixels, 2 * 3), 0);
  }
  // Loads one triangle whose material has the texture statement `mapKd`, and returns its scene arrays.
  SceneData Load(const std::string& mapKd) {
    test::WriteFile(dir_ + "/t.mtl", "newmtl t\nKd 1 1 1\nKe 1 1 1\n" + mapKd + "\n");
    test::WriteFile(dir_ + "/t.obj", "mtllib t.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl t\nf 1 2 3\n");
    const Scene scene = LoadScene(dir_ + "/t.obj");
    EXPECT_EQ(scene.materials.at(0).texture, 0) << (scene.warnings.empty() ? "" : scene.warnings[0]);
    return BuildSceneData(scene, Camera::LookAt(Vec3(0, 0, 5), Vec3(0), Vec3(0, 1, 0), 45.0f, 8, 8), Vec3(0.0f));
  }
  std::string dir_ = test::MakeTempDir();
};

void ExpectColour(Vec3 got, Vec3 want, const char* where) {
  EXPECT_NEAR(got.x, want.x, 1e-6f) << where;
  EXPECT_NEAR(got.y, want.y, 1e-6f) << where;
  EXPECT_NEAR(got.z, want.z, 1e-6f) << where;
}

TEST_F(TextureTest, UvOriginIsTheImagesBottomLeft) {
  const SceneData d = Load("map_Kd quad.png");
  const SceneView s = d.View();
  ExpectColour(SampleTexture(s, 0, 0.25f, 0.25f), kBlue, "(0.25, 0.25): bottom-left");
  ExpectColour(SampleTexture(s, 0, 0.75f, 0.25f), kWhite, "(0.75, 0.25): bottom-right");
  ExpectColour(SampleTexture(s, 0, 0.25f, 0.75f), kRed, "(0.25, 0.75): top-left");
  ExpectColour(SampleTexture(s, 0, 0.75f, 0.75f), kGreen, "(0.75, 0.75): top-right");
}

TEST_F(TextureTest, BilinearBetweenTexelCentres) {
  const SceneData d = Load("map_Kd quad.png");
  const SceneView s = d.View();
  ExpectColour(SampleTexture(s, 0, 0.5f, 0.25f), (kBlue + kWhite) * 0.5f, "halfway along the bottom row");
  ExpectColour(SampleTexture(s, 0, 0.25f, 0.5f), (kBlue + kRed) * 0.5f, "halfway up the left column");
  ExpectColour(SampleTexture(s, 0, 0.5f, 0.5f), (kRed + kGreen + kBlue + kWhite) * 0.25f, "the centre");
  // A quarter of the way from the bottom-left centre to the bottom-right one: weights 3/4 and 1/4.
  ExpectColour(SampleTexture(s, 0, 0.375f, 0.25f), kBlue * 0.75f + kWhite * 0.25f, "u = 0.375");
  // Nearest-texel lookup would return pure texels everywhere; this is not one.
  const Vec3 t = SampleTexture(s, 0, 0.4f, 0.6f);
  EXPECT_GT(t.x, 0.0f);
  EXPECT_GT(t.y, 0.0f);
  EXPECT_GT(t.z, 0.0f);
}

TEST_F(TextureTest, RepeatsByDefault) {
  const SceneData d = Load("map_Kd quad.png");
  const SceneView s = d.View();
  // u = 0 lies halfway between the left column's centre and the right column's repeated copy.
  ExpectColour(SampleTexture(s, 0, 0.0f, 0.25f), (kBlue + kWhite) * 0.5f, "u = 0 wraps");
  ExpectColour(SampleTexture(s, 0, 1.25f, 0.25f), kBlue, "u = 1.25 is u = 0.25");
  ExpectColour(SampleTexture(s, 0, -0.75f, 2.75f), kRed, "(-0.75, 2.75) is (0.25, 0.75)");
}

TEST_F(TextureTest, ClampExtendsTheEdgeTexels) {
  const SceneData d = Load("map_Kd -clamp on quad.png");
  const SceneView s = d.View();
  ExpectColour(SampleTexture(s, 0, 0.0f, 0.25f), kBlue, "u = 0: the left column only");
  ExpectColour(SampleTexture(s, 0, 1.25f, 0.25f), kWhite, "u = 1.25 clamps to the right edge");
  ExpectColour(SampleTexture(s, 0, -3.0f, 5.0f), kRed, "(-3, 5) clamps to the top-left corner");
}

TEST_F(TextureTest, ScaleAndOffsetMoveTheLookup) {
  // -s 2 1 -o 0.5 0: the lookup is at (2u + 0.5, v).
  const SceneData d = Load("map_Kd -s 2 1 -o 0.5 0 quad.png");
  const SceneView s = d.View();
  ExpectColour(SampleTexture(s, 0, 0.125f, 0.25f), kWhite, "2 * 0.125 + 0.5 = 0.75");
  ExpectColour(SampleTexture(s, 0, 0.375f, 0.75f), kRed, "2 * 0.375 + 0.5 = 1.25, repeated: 0.25");
  const SceneData v = Load("map_Kd -s 1 0.5 -o 0 0.125 quad.png");  // v' = 0.5 v + 0.125
  ExpectColour(SampleTexture(v.View(), 0, 0.75f, 1.25f), kGreen, "0.5 * 1.25 + 0.125 = 0.75");
  ExpectColour(SampleTexture(v.View(), 0, 0.75f, 0.25f), kWhite, "0.5 * 0.25 + 0.125 = 0.25");
}

TEST_F(TextureTest, MmIsBaseAndGain) {
  const SceneData d = Load("map_Kd -mm 0.25 0.5 quad.png");
  ExpectColour(SampleTexture(d.View(), 0, 0.25f, 0.25f), Vec3(0.25f, 0.25f, 0.75f), "0.25 + 0.5 * blue");
}

TEST_F(TextureTest, TheMaterialsColourIsKdTimesTheTexel) {
  test::WriteFile(dir_ + "/t.mtl", "newmtl t\nKd 0.5 0.25 1\nKe 1 1 1\nmap_Kd quad.png\n");
  test::WriteFile(dir_ + "/t.obj",
                  "mtllib t.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0.75 0.75\nvt 0.75 0.75\nvt 0.75 0.75\nusemtl t\n"
                  "f 1/1 2/2 3/3\n");
  const SurfaceBsdf b = test::BsdfAtTriangle(LoadScene(dir_ + "/t.obj"), 0.25f, 0.25f).bsdf;
  ExpectColour(b.kd, Vec3(0.0f, 0.25f, 0.0f), "Kd (0.5, 0.25, 1) times the top-right texel (green)");
}

TEST_F(TextureTest, NonFiniteUvReadsATexelNotWildMemory) {
  const SceneData d = Load("map_Kd quad.png");
  const SceneView s = d.View();
  for (float bad : {NAN, INFINITY, -INFINITY, 1e30f}) {
    const Vec3 t = SampleTexture(s, 0, bad, bad);
    EXPECT_TRUE(std::isfinite(t.x) && std::isfinite(t.y) && std::isfinite(t.z)) << bad;
  }
  const SceneData c = Load("map_Kd -clamp on quad.png");
  const Vec3 t = SampleTexture(c.View(), 0, NAN, INFINITY);
  EXPECT_TRUE(std::isfinite(t.x) && std::isfinite(t.y) && std::isfinite(t.z));
}

}  // namespace
}  // namespace tracer
