// @file loader_texture_options_test.cpp: MTL texture statements: options, -colorspace, sharing, failures reported once.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <utility>
#include <vector>

#include "loader_test_util.h"

namespace tracer::test {
namespace {

// ---- texture statements: options, sharing -------------------------------------------------------------

TEST_F(LoaderTest, TextureOptionsAreReadBeforeTheFileName) {
  WriteGreyPng(dir_ + "/wall.png", 10);
  WriteGreyPng(dir_ + "/my wall.png", 20);
  Scene scene = LoadWithMtl(
      "newmtl a\nmap_Kd -s 2 3 1 -o 0.25 0.5 0 -clamp on -mm 0.1 0.8 wall.png\n"
      "newmtl b\nmap_Kd -s 4 -o 0.5 -bm 2.5 -imfchan l my wall.png  \n"
      "newmtl c\nmap_Kd -blendu off -blendv on -clamp off wall.png\n",
      "a");
  // The one warning: -imfchan picks a channel of scalar maps only.
  const std::vector<std::string>& warnings = scene.warnings;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("-imfchan applies to scalar maps"), std::string::npos) << warnings[0];
  ASSERT_EQ(scene.materials.size(), 3u);
  ASSERT_EQ(scene.textures.size(), 2u);
  ASSERT_EQ(scene.textureMaps.size(), 3u);
  const TextureMap& a = scene.textureMaps[size_t(scene.materials[0].texture)];
  EXPECT_EQ(scene.textures[size_t(a.texture)].path, dir_ + "/wall.png");
  EXPECT_EQ(a.options.scale[0], 2.0f);
  EXPECT_EQ(a.options.scale[1], 3.0f);
  EXPECT_EQ(a.options.offset[0], 0.25f);
  EXPECT_EQ(a.options.offset[1], 0.5f);
  EXPECT_TRUE(a.options.clamp);
  EXPECT_EQ(a.options.base, 0.1f);
  EXPECT_EQ(a.options.gain, 0.8f);
  EXPECT_EQ(a.options.bumpMultiplier, 1.0f);
  const TextureMap& b = scene.textureMaps[size_t(scene.materials[1].texture)];
  EXPECT_EQ(scene.textures[size_t(b.texture)].path, dir_ + "/my wall.png") << "the rest of the line is the name";
  EXPECT_EQ(b.options.scale[0], 4.0f);
  EXPECT_EQ(b.options.scale[1], 1.0f) << "-s u alone leaves v at the format's default 1";
  EXPECT_EQ(b.options.offset[0], 0.5f);
  EXPECT_EQ(b.options.offset[1], 0.0f);
  EXPECT_EQ(b.options.bumpMultiplier, 2.5f) << "-bm is kept for the bump-map work";
  EXPECT_EQ(b.options.channel, 'l');
  EXPECT_FALSE(b.options.clamp);
  const TextureMap& c = scene.textureMaps[size_t(scene.materials[2].texture)];
  EXPECT_EQ(c.texture, a.texture) << "one image for both statements naming wall.png";
  EXPECT_FALSE(c.options.clamp);
  EXPECT_EQ(c.options.scale[0], 1.0f);
  EXPECT_EQ(c.options.gain, 1.0f);
}

// -colorspace (tinyobjloader's extension): a colour map read as linear values (grey 128 -> 128/255 instead of the
// sRGB decode's 0.2158), a data map sRGB-decoded (bump, map_Ks), either spelling of sRGB; the same file decoded both
// ways is two images; an opacity map ignores it with a warning; an unknown value is an error naming file and line.
TEST_F(LoaderTest, ColorspaceChoosesHowTexelsAreDecoded) {
  WriteGreyPng(dir_ + "/g.png", 128);
  Scene scene = LoadWithMtl(
      "newmtl a\nmap_Kd -colorspace linear g.png\nmap_Ke -colorspace sRGB g.png\nKe 1 1 1\n"
      "newmtl b\nKs 0.5 0.5 0.5\nNs 100\nmap_Kd g.png\nbump -colorspace srgb g.png\nmap_Ks -colorspace linear g.png\n"
      "newmtl c\nmap_d -colorspace linear g.png\n",
      "a");
  const std::vector<std::string>& warnings = scene.warnings;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(Contains(warnings[0], "m.mtl:12: material 'c': map_d -colorspace: an opacity is read as data; ignored"))
      << warnings[0];
  auto texel = [&](int map) { return scene.textures[size_t(scene.textureMaps[size_t(map)].texture)].texels[0].x; };
  const float linear = 128.0f / 255.0f, srgb = 0.21586050f;
  EXPECT_FLOAT_EQ(texel(scene.materials[0].texture), linear);          // map_Kd -colorspace linear
  EXPECT_FLOAT_EQ(texel(scene.materials[0].emissionTexture), srgb);    // map_Ke -colorspace sRGB (its default)
  EXPECT_FLOAT_EQ(texel(scene.materials[1].texture), srgb);            // map_Kd
  EXPECT_FLOAT_EQ(texel(scene.materials[1].bumpTexture), srgb);        // bump -colorspace srgb
  EXPECT_FLOAT_EQ(texel(scene.materials[1].specularTexture), linear);  // map_Ks (data; linear is its default)
  EXPECT_EQ(scene.textures.size(), 3u);                                // g.png as sRGB colour, as data, as opacity

  Write("bad.mtl", "newmtl a\nKd 1 1 1\n\nmap_Kd -colorspace rec2020 g.png\n");
  const std::string error =
      LoadError(Write("bad.obj", "mtllib bad.mtl\n" + std::string(kTriangle) + "usemtl a\nf 1 2 3\n"));
  EXPECT_TRUE(Contains(error, "bad.mtl:4:")) << error;
  EXPECT_TRUE(Contains(error, "-colorspace 'rec2020': expected linear or sRGB")) << error;
}

TEST_F(LoaderTest, ATextureSharedByMaterialsIsLoadedOnce) {
  WriteGreyPng(dir_ + "/shared.png", 10);
  ASSERT_EQ(mkdir((dir_ + "/t").c_str(), 0700), 0);
  WriteGreyPng(dir_ + "/t/other.png", 20);
  Scene scene = LoadWithMtl(
      "newmtl a\nmap_Kd shared.png\nnewmtl b\nmap_Kd shared.png\nnewmtl c\nmap_Kd .\\shared.png\n"
      "newmtl d\nmap_Kd -s 2 2 shared.png\nnewmtl e\nmap_Kd t/other.png\nnewmtl f\nmap_Kd -s 2 2 shared.png\n",
      "a");
  const std::vector<std::string>& warnings = scene.warnings;
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  ASSERT_EQ(scene.textures.size(), 2u) << "shared.png decoded once, under either of its names";
  ASSERT_EQ(scene.textureMaps.size(), 3u) << "shared.png as it is, shared.png at -s 2 2, other.png";
  const auto map = [&](size_t m) { return scene.materials[m].texture; };
  EXPECT_EQ(map(0), map(1));
  EXPECT_EQ(map(0), map(2));
  EXPECT_EQ(map(3), map(5));
  EXPECT_NE(map(0), map(3));
  EXPECT_EQ(scene.textureMaps[size_t(map(0))].texture, scene.textureMaps[size_t(map(3))].texture);
  EXPECT_NE(scene.textureMaps[size_t(map(4))].texture, scene.textureMaps[size_t(map(0))].texture);
}

TEST_F(LoaderTest, AMissingTextureIsReportedOnceWithTheNumberOfStatementsNamingIt) {
  Scene scene = LoadWithMtl(
      "newmtl a\nmap_Kd gone.png\nnewmtl b\nmap_Kd gone.png\nnewmtl c\nmap_Kd -s 2 2 gone.png\n"
      "newmtl d\nmap_Kd other.png\n",
      "a");
  const std::vector<std::string>& warnings = scene.warnings;
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0], dir_ +
                             "/m.mtl:2: material 'a': map_Kd 'gone.png' not found (No such file or directory; "
                             "--texture-path DIR adds a folder to search); using Kd without a texture (2 more "
                             "statements name it)");
  EXPECT_TRUE(Contains(warnings[1], "m.mtl:8: material 'd': map_Kd 'other.png' not found")) << warnings[1];
  for (const HostMaterial& m : scene.materials) EXPECT_EQ(m.texture, -1);
}

TEST_F(LoaderTest, UnknownAndUnsupportedTextureOptionsWarnOncePerOption) {
  WriteGreyPng(dir_ + "/wall.png", 10);
  Scene scene = LoadWithMtl(
      "newmtl a\nmap_Kd -foo 1 2 -t 0.1 0.2 wall.png\nnewmtl b\nmap_Kd -foo 3 -s 2 2 wall.png\n"
      "newmtl c\nmap_Kd -t 1 -bar on wall.png\n",
      "a");
  const std::vector<std::string>& warnings = scene.warnings;
  ASSERT_EQ(warnings.size(), 3u) << ::testing::PrintToString(warnings);
  EXPECT_EQ(warnings[0], dir_ +
                             "/m.mtl:2: map_Kd: texture option '-foo' is not a texture option of the MTL "
                             "format; it and the numbers after it are ignored (reported once)");
  EXPECT_EQ(warnings[1], dir_ + "/m.mtl:2: map_Kd: texture option '-t' is not supported; ignored (reported once)");
  EXPECT_TRUE(Contains(warnings[2], "m.mtl:6: map_Kd: texture option '-bar' is not a texture option")) << warnings[2];
  // Each statement still found its file, and -s after an unknown option was read.
  ASSERT_EQ(scene.textures.size(), 1u);
  for (const HostMaterial& m : scene.materials) EXPECT_GE(m.texture, 0);
  EXPECT_EQ(scene.textureMaps[size_t(scene.materials[1].texture)].options.scale[0], 2.0f);
}

TEST_F(LoaderTest, MalformedTextureOptionsFailWithFileAndLine) {
  WriteGreyPng(dir_ + "/wall.png", 10);
  const std::pair<std::string, std::string> cases[] = {
      {"map_Kd -s wall.png", "m.mtl:2: map_Kd -s needs 1 to 3 numbers before the file name"},
      {"map_Kd -clamp yes wall.png", "m.mtl:2: map_Kd -clamp needs on or off, not 'yes'"},
      {"map_Kd -mm 1e39 1 wall.png", "m.mtl:2: map_Kd -mm: '1e39' is not finite"},
      {"map_Kd -imfchan q wall.png", "m.mtl:2: map_Kd -imfchan 'q': expected one of r, g, b, m, l, z"},
      {"map_Kd -bm wall.png", "m.mtl:2: map_Kd -bm needs 1 number before the file name"},
  };
  for (const auto& [line, message] : cases) {
    Write("m.mtl", "newmtl a\n" + line + "\n");
    std::string error = LoadError(Write("m.obj", "mtllib m.mtl\n" + std::string(kTriangle) + "usemtl a\nf 1 2 3\n"));
    EXPECT_EQ(error, dir_ + "/" + message) << line;
  }
  // Options and no file: a warning, no texture.
  Scene scene = LoadWithMtl("newmtl a\nmap_Kd -clamp on\n", "a");
  const std::vector<std::string>& warnings = scene.warnings;
  EXPECT_EQ(scene.materials[0].texture, -1);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], dir_ + "/m.mtl:2: map_Kd names no file; ignored");
}

}  // namespace
}  // namespace tracer::test
