// @file cutout_test.cpp: cut-outs (MTL d and map_d, core/scene_view.h's CutoutFilter) on the CPU: holes show an
// emitter behind exactly, in the right corner of the image; shadows have the same holes; a fractional d lets its
// share of light through; map_d reads an image's alpha or, without one, its first channel; scenes without cut-outs
// traverse without the filter. Both BVHs.
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

SceneData Build(const std::string& obj, Vec3 eye, Vec3 at, float fov, int w, int h) {
  return BuildSceneData(LoadScene(obj), Camera::LookAt(eye, at, Vec3(0, 1, 0), fov, w, h), Vec3(0.0f));
}

RenderOptions Options(int w, int h, int spp, int depth, bool binary) {
  RenderOptions o = test::QuietRender(w, h, spp, depth);
  o.binaryBvh = binary;
  return o;
}

// The view through the card is the emitter (radiance 1) where map_d is 0 and black where it is 1: with the mask's
// transparent quadrant at uv u < 0.5, v < 0.5 (OBJ: v = 0 at the image's bottom), the bottom-left quarter of the
// picture. Pixels within two of the quadrant's edges are left out (bilinear filtering blends the 8x8 mask's texels
// there); every other pixel is exact, whichever way round the rows or columns were read.
TEST(Cutout, HolesShowTheEmitterBehindInTheRightCorner) {
  const std::string dir = test::MakeTempDir();
  for (bool withAlpha : {true, false}) {
    ASSERT_TRUE(test::WriteQuadrantOpacity(dir + "/mask.png", 8, withAlpha));
    // -clamp on: repeated, the mask's edge texels would blend with the opposite edge's at the picture's border.
    const std::string obj = test::WriteHolesScene(dir, "map_d -clamp on mask.png");
    const SceneData d = Build(obj, Vec3(0.0f), Vec3(0, 0, -1), 40.0f, 16, 16);
    EXPECT_EQ(d.View().cutouts, 1);
    for (bool binary : {false, true}) {
      const std::vector<float> img = RenderCpu(d, Options(16, 16, 16, 0, binary)).rgb;
      int checked = 0;
      for (int y = 0; y < 16; ++y)
        for (int x = 0; x < 16; ++x) {
          if ((x >= 6 && x <= 9 && y >= 6) || (y >= 6 && y <= 9 && x <= 9)) continue;  // near the quadrant's edges
          const bool hole = x < 8 && y >= 8;
          const float v = img[3 * (static_cast<size_t>(y) * 16 + x)];
          EXPECT_EQ(v, hole ? 1.0f : 0.0f) << "pixel (" << x << ", " << y << ")" << (withAlpha ? ", alpha" : ", grey")
                                           << (binary ? ", binary BVH" : ", wide BVH");
          ++checked;
        }
      EXPECT_GT(checked, 150);
    }
  }
  test::RemoveTree(dir);
}

// d 0.25: a quarter of the rays stop at the black card, so the view reads 0.75 on average (unbiased; the
// per-pixel estimate is a binomial mean: 16 x 16 pixels at 64 spp give a standard error of 0.0034 on the image).
TEST(Cutout, FractionalOpacityLetsItsShareThrough) {
  const std::string dir = test::MakeTempDir();
  const SceneData d = Build(test::WriteHolesScene(dir, "d 0.25"), Vec3(0.0f), Vec3(0, 0, -1), 40.0f, 16, 16);
  for (bool binary : {false, true}) {
    const std::vector<float> img = RenderCpu(d, Options(16, 16, 64, 0, binary)).rgb;
    double sum = 0;
    for (size_t i = 0; i < img.size(); i += 3) sum += img[i];
    const double mean = sum / (img.size() / 3);
    EXPECT_NEAR(mean, 0.75, 4 * std::sqrt(0.75 * 0.25 / (64.0 * 256.0))) << (binary ? "binary" : "wide");
  }
  test::RemoveTree(dir);
}

// Shadow rays test cut-outs too. Seen from above, the floor under the card's transparent quadrant (x < 0, z > 0)
// is lit exactly as with no card at all (same random numbers, and a rejected hit is as if the triangle were not
// there), and under the opaque part it is in shadow (black: depth 1, no environment). A card with d 0 is no card.
TEST(Cutout, ShadowsHaveTheSameHoles) {
  const std::string dir = test::MakeTempDir();
  ASSERT_TRUE(test::WriteQuadrantOpacity(dir + "/mask.png", 8, true));
  const Vec3 eye(0, 6, 0.001f), at(0, 0, 0);
  const int n = 32;
  auto render = [&](const std::string& cutout, bool binary) {
    const SceneData d = Build(test::WriteShadowScene(dir, cutout), eye, at, 70.0f, n, n);
    return RenderCpu(d, Options(n, n, 8, 1, binary)).rgb;
  };
  for (bool binary : {false, true}) {
    const std::vector<float> none = render("d 0", binary), masked = render("map_d -clamp on mask.png", binary);
    EXPECT_EQ(none, render("d 0", binary));
    int lit = 0, shadowed = 0;
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const size_t i = 3 * (static_cast<size_t>(y) * n + x);
        // Pixels over the card's shadow (floor |x|, |z| up to 2.5), leaving out a band of +-1.4 around its axes,
        // where the mask's bilinear blend (one texel, 0.5 on the card, 1 on the floor) and the lamp's penumbra fall.
        const float px = (x + 0.5f) / n - 0.5f, py = (y + 0.5f) / n - 0.5f;  // image offsets from the centre
        if (std::fabs(px) < 0.17f || std::fabs(py) < 0.17f || std::fabs(px) > 0.3f || std::fabs(py) > 0.3f) continue;
        if (none[i] <= 0.0f) continue;
        if (masked[i] == none[i])
          ++lit;
        else if (masked[i] == 0.0f)
          ++shadowed;
        else
          ADD_FAILURE() << "pixel (" << x << ", " << y
                        << ") neither lit as without the card nor in shadow: " << masked[i] << " vs " << none[i];
      }
    // One quadrant of the floor under the card lit, three in shadow.
    EXPECT_NEAR(lit, shadowed / 3.0, 0.15 * shadowed / 3.0) << (binary ? "binary" : "wide");
    EXPECT_GT(lit, 20);
  }
  test::RemoveTree(dir);
}

TEST(Cutout, MapDReadsAlphaOrTheFirstChannelOrImfchansAndOpaqueScenesHaveNoFilter) {
  const std::string dir = test::MakeTempDir();
  const unsigned char rgba[] = {10, 20, 30, 64}, grey[] = {192};
  ASSERT_NE(stbi_write_png((dir + "/a.png").c_str(), 1, 1, 4, rgba, 4), 0);
  ASSERT_NE(stbi_write_png((dir + "/g.png").c_str(), 1, 1, 1, grey, 1), 0);
  const Scene scene = test::LoadOneTrianglePerMaterial(
      dir, "m", "newmtl a\nKd 1 1 1\nmap_d a.png\nnewmtl g\nKd 1 1 1\nmap_d g.png\nnewmtl o\nKd 1 1 1\n");
  ASSERT_EQ(scene.materials.size(), 3u);
  // The first texel of material m's map_d.
  const auto opacityTexel = [](const Scene& sc, int m) {
    const int map = sc.materials[static_cast<size_t>(m)].opacityTexture;
    EXPECT_GE(map, 0);
    return map < 0 ? Float4{}
                   : sc.textures[static_cast<size_t>(sc.textureMaps[static_cast<size_t>(map)].texture)].texels[0];
  };
  const auto texel = [&](int m) { return opacityTexel(scene, m); };
  EXPECT_FLOAT_EQ(texel(0).x, 64.0f / 255.0f) << "the alpha channel, not the colour";
  EXPECT_FLOAT_EQ(texel(1).x, 192.0f / 255.0f) << "no alpha: the first channel";
  EXPECT_EQ(scene.materials[2].opacityTexture, -1);
  // -imfchan picks the channel map_d reads (g, b, m = alpha or 1 without one, l = luminance), each image decoded
  // once per channel.
  const Scene channels = test::LoadOneTrianglePerMaterial(
      dir, "c",
      "newmtl g\nmap_d -imfchan g a.png\nnewmtl b\nmap_d -imfchan b a.png\nnewmtl m\nmap_d -imfchan m a.png\n"
      "newmtl l\nmap_d -imfchan l a.png\nnewmtl mg\nmap_d -imfchan m g.png\n");
  ASSERT_EQ(channels.materials.size(), 5u);
  const auto channelTexel = [&](int m) { return opacityTexel(channels, m); };
  EXPECT_FLOAT_EQ(channelTexel(0).x, 20.0f / 255.0f);
  EXPECT_FLOAT_EQ(channelTexel(1).w, 30.0f / 255.0f);
  EXPECT_FLOAT_EQ(channelTexel(2).x, 64.0f / 255.0f);
  EXPECT_NEAR(channelTexel(3).x, (0.2126f * 10 + 0.7152f * 20 + 0.0722f * 30) / 255.0f, 1e-6f);
  EXPECT_FLOAT_EQ(channelTexel(4).x, 1.0f);
  EXPECT_EQ(channels.textures.size(), 5u);
  for (const std::string& w : scene.warnings) EXPECT_EQ(w.find("opacity"), std::string::npos) << w;
  EXPECT_EQ(BuildSceneData(LoadScene(test::ProjectScenesDir() + "/cornell.obj"),
                           Camera::LookAt(Vec3(0, 0, 1), Vec3(0.0f), Vec3(0, 1, 0), 40.0f, 8, 8), Vec3(0.0f))
                .View()
                .cutouts,
            0);
  test::RemoveTree(dir);
}

}  // namespace
