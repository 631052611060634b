// @file loader_files_test.cpp: the files a scene names: not OBJ text, missing, outside, Windows paths, --texture-path.
#include <gtest/gtest.h>
#include <stb/stb_image_write.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "loader_test_util.h"

namespace tracer::test {
namespace {

// ---- files that are not OBJ text ----------------------------------------------------------------------

TEST_F(LoaderTest, EmptyAndCommentOnlyFilesHaveNoTriangles) {
  EXPECT_TRUE(Contains(LoadError(Write("empty.obj", "")), "empty.obj: no triangles"));
  EXPECT_TRUE(Contains(LoadError(Write("comments.obj", "# nothing\n   # here\n\n")), "comments.obj: no triangles"));
}

TEST_F(LoaderTest, BinaryJunkIsRefused) {
  std::string junk(
      "v 0 0 0\n\x7f"
      "ELF\x02\x01\x01\0\0\0\xff\xfe",
      20);
  std::string error = LoadError(Write("junk.obj", junk));
  EXPECT_TRUE(Contains(error, "junk.obj:2:") && Contains(error, "NUL")) << error;
}

TEST_F(LoaderTest, MissingDirectoryDevZeroAndFifoAreRefused) {
  std::string missing = dir_ + "/nope.obj";
  std::string error = LoadError(missing);
  EXPECT_TRUE(Contains(error, missing) && Contains(error, "No such file")) << error;
  EXPECT_TRUE(Contains(LoadError(dir_), "directory"));
  EXPECT_TRUE(Contains(LoadError("/dev/zero"), "/dev/zero: is not a regular file"));
  std::string fifo = dir_ + "/pipe.obj";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_TRUE(Contains(LoadError(fifo), "not a regular file"));
}

TEST_F(LoaderTest, FileSizeLimit) {
  LoadOptions options;
  options.maxFileBytes = 10;
  EXPECT_TRUE(Contains(LoadError(Write("small.obj", std::string(kTriangle) + "f 1 2 3\n"), options), "limit is 10"));
}

// ---- MTL and texture paths ----------------------------------------------------------------------------

TEST_F(LoaderTest, MissingMtlWarnsAndUsesDefaultMaterial) {
  Scene scene = LoadScene(Write("a.obj", "mtllib nope.mtl\n" + std::string(kTriangle) + "usemtl red\nf 1 2 3\n"));
  EXPECT_TRUE(HasWarning(scene, "a.obj:1: mtllib 'nope.mtl' not found"));
  EXPECT_TRUE(HasWarning(scene, "a.obj:5: usemtl 'red' names an undefined material"));
  ASSERT_EQ(scene.materials.size(), 1u);
  EXPECT_EQ(scene.materials[0].cls, kDiffuse);
  EXPECT_EQ(scene.materials[0].kd.y, 0.5f);
}

TEST_F(LoaderTest, UndefinedUsemtlWarnsAndUsesGrey) {
  Write("u.mtl", "newmtl red\nKd 1 0 0\n");
  Scene scene = LoadScene(
      Write("u.obj", "mtllib u.mtl\n" + std::string(kTriangle) + "usemtl red\nf 1 2 3\nusemtl blue\nf 3 2 1\n"));
  ASSERT_EQ(scene.NumTriangles(), 2u);
  EXPECT_TRUE(HasWarning(scene, "u.obj:7: usemtl 'blue' names an undefined material"));
  EXPECT_FALSE(HasWarning(scene, "'red'"));
  const HostMaterial& fallback = scene.materials[size_t(scene.triMaterial[1])];
  EXPECT_EQ(fallback.cls, kDiffuse);
  EXPECT_EQ(fallback.kd.x, 0.5f);
  EXPECT_EQ(scene.materials[size_t(scene.triMaterial[0])].kd.x, 1.0f);
}

TEST_F(LoaderTest, FifoDirectoryAndDevZeroMtlWarnInsteadOfHanging) {
  ASSERT_EQ(mkfifo((dir_ + "/pipe.mtl").c_str(), 0600), 0);
  ASSERT_EQ(mkdir((dir_ + "/folder.mtl").c_str(), 0700), 0);
  LoadOptions outside;
  outside.allowOutsidePaths = true;  // so that /dev/zero is refused for what it is, not where it is
  Scene scene = LoadScene(
      Write("p.obj", "mtllib pipe.mtl\nmtllib folder.mtl\nmtllib /dev/zero\n" + std::string(kTriangle) + "f 1 2 3\n"),
      outside);
  EXPECT_TRUE(HasWarning(scene, "p.obj:1: mtllib 'pipe.mtl' is not a regular file"));
  EXPECT_TRUE(HasWarning(scene, "p.obj:2: mtllib 'folder.mtl' is a directory"));
  EXPECT_TRUE(HasWarning(scene, "p.obj:3: mtllib '/dev/zero' is not a regular file"));
  EXPECT_EQ(scene.materials.size(), 1u);
}

TEST_F(LoaderTest, MtlOutsideTheSceneFolderIsRejectedUnlessAllowed) {
  Write("outside.mtl", "newmtl lamp\nKe 1 1 1\n");
  ASSERT_EQ(mkdir((dir_ + "/sub").c_str(), 0700), 0);
  ASSERT_EQ(symlink((dir_ + "/outside.mtl").c_str(), (dir_ + "/sub/link.mtl").c_str()), 0);
  const std::string mtllibs[] = {"../outside.mtl", dir_ + "/outside.mtl", "link.mtl"};
  for (const std::string& mtllib : mtllibs) {
    SCOPED_TRACE(mtllib);
    std::string obj = Write("sub/s.obj", "mtllib " + mtllib + "\n" + kTriangle + "usemtl lamp\nf 1 2 3\n");
    Scene refused = LoadScene(obj);
    EXPECT_TRUE(HasWarning(refused, "outside the scene's folder"));
    EXPECT_FALSE(refused.materials[size_t(refused.triMaterial[0])].IsEmissive());
    LoadOptions options;
    options.allowOutsidePaths = true;
    Scene allowed = LoadScene(obj, options);
    EXPECT_TRUE(allowed.materials[size_t(allowed.triMaterial[0])].IsEmissive());
    EXPECT_FALSE(HasWarning(allowed, "outside"));
  }
  // An absolute path inside the folder is fine.
  Write("sub/in.mtl", "newmtl lamp\nKe 1 1 1\n");
  Scene inside =
      LoadScene(Write("sub/s.obj", "mtllib " + dir_ + "/sub/in.mtl\n" + kTriangle + "usemtl lamp\nf 1 2 3\n"));
  EXPECT_TRUE(inside.materials[size_t(inside.triMaterial[0])].IsEmissive());
}

TEST_F(LoaderTest, MissingOrOutsideTextureWarnsAndKeepsKd) {
  Scene scene = LoadWithMtl("newmtl t\nKd 0.2 0.3 0.4\nmap_Kd missing.png\nnewmtl u\nmap_Kd ../x.png\n", "t");
  const HostMaterial& m = scene.materials[size_t(scene.triMaterial[0])];
  EXPECT_EQ(m.texture, -1);
  EXPECT_EQ(m.kd.y, 0.3f);
  EXPECT_TRUE(HasWarning(scene, "m.mtl:3: material 't': map_Kd 'missing.png' not found"));
  EXPECT_TRUE(HasWarning(scene, "material 'u': map_Kd '../x.png'"));
  EXPECT_TRUE(scene.textures.empty());
}

TEST_F(LoaderTest, TextureLoadsAsLinearRgbTopRowFirst) {
  // 2x2 sRGB: top row red, mid grey; bottom row blue, light grey.
  const unsigned char pixels[] = {255, 0, 0, 128, 128, 128, 0, 0, 255, 188, 188, 188};
  ASSERT_NE(stbi_write_png((dir_ + "/tex.png").c_str(), 2, 2, 3, pixels, 2 * 3), 0);
  Scene scene = LoadWithMtl("newmtl t\nKd 1 1 1\nmap_Kd tex.png\nnewmtl t2\nmap_Kd tex.png\n", "t");
  ASSERT_EQ(scene.textures.size(), 1u);  // loaded once for both materials
  const Texture& tex = scene.textures[0];
  EXPECT_EQ(scene.materials[size_t(scene.triMaterial[0])].texture, 0);
  ASSERT_EQ(tex.width, 2);
  ASSERT_EQ(tex.height, 2);
  EXPECT_EQ(tex.texels[0].x, 1.0f);
  EXPECT_EQ(tex.texels[0].y, 0.0f);
  EXPECT_NEAR(tex.texels[1].y, SrgbToLinearReference(128.0f / 255.0f), 1e-6f);
  EXPECT_NEAR(tex.texels[1].y, 0.2158605f, 1e-6f);  // the exact sRGB curve, not gamma 2.2 (0.2195)
  EXPECT_EQ(tex.texels[2].z, 1.0f);
  EXPECT_NEAR(tex.texels[3].x, SrgbToLinearReference(188.0f / 255.0f), 1e-6f);
  EXPECT_EQ(tex.texels[3].w, 1.0f);
}

TEST_F(LoaderTest, OversizedTextureIsRefused) {
  std::vector<unsigned char> row(16385 * 3, 200);
  ASSERT_NE(stbi_write_png((dir_ + "/wide.png").c_str(), 16385, 1, 3, row.data(), 16385 * 3), 0);
  Scene scene = LoadWithMtl("newmtl t\nmap_Kd wide.png\n", "t");
  EXPECT_TRUE(scene.textures.empty());
  EXPECT_TRUE(HasWarning(scene, "16385x1; the limit is 16384"));
}

// ---- Windows paths, --texture-path, duplicate materials ------------------------------------------------

TEST_F(LoaderTest, BackslashPathsFromWindowsLoad) {
  ASSERT_EQ(mkdir((dir_ + "/textures").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((dir_ + "/mats").c_str(), 0700), 0);
  WriteGreyPng(dir_ + "/textures/wall.png", 10);
  WriteGreyPng(dir_ + "/skin.png", 20);
  Write("mats/m.mtl", "newmtl wall\nKe 1 1 1\nmap_Kd textures\\wall.png\nnewmtl skin\nmap_Kd .\\skin.png\n");
  Scene scene = LoadScene(Write("w.obj", "mtllib mats\\m.mtl\n" + std::string(kTriangle) + "usemtl wall\nf 1 2 3\n"));
  EXPECT_TRUE(scene.warnings.empty()) << scene.warnings[0];
  ASSERT_EQ(scene.materials.size(), 2u);
  EXPECT_EQ(scene.materials[0].texture, 0);
  EXPECT_EQ(scene.materials[1].texture, 1);
  EXPECT_EQ(scene.textures[0].path, dir_ + "/textures/wall.png");
  EXPECT_EQ(scene.textures[1].path, dir_ + "/skin.png");
}

TEST_F(LoaderTest, BackslashIsAFileNameCharacterWhenSuchAFileExists) {
  ASSERT_EQ(mkdir((dir_ + "/a").c_str(), 0700), 0);
  WriteGreyPng(dir_ + "/a\\b.png", 10);  // one file whose name holds a backslash
  WriteGreyPng(dir_ + "/a/b.png", 20);
  Scene scene = LoadWithMtl("newmtl t\nmap_Kd a\\b.png\n", "t");
  ASSERT_EQ(scene.textures.size(), 1u);
  EXPECT_EQ(scene.textures[0].path, dir_ + "/a\\b.png");
}

TEST_F(LoaderTest, TexturePathIsSearchedForTexturesAndMtls) {
  std::string extra = MakeTempDir();
  WriteGreyPng(extra + "/wall.png", 10);
  WriteGreyPng(extra + "/brick.png", 20);
  WriteFile(extra + "/far.mtl", "newmtl far\nKe 1 1 1\n");
  Write("m.mtl", "newmtl t\nmap_Kd wall.png\nnewmtl u\nmap_Kd C:\\art\\brick.png\n");
  std::string obj = Write("t.obj", "mtllib m.mtl\nmtllib far.mtl\n" + std::string(kTriangle) + "usemtl far\nf 1 2 3\n");

  Scene without = LoadScene(obj);
  EXPECT_TRUE(without.textures.empty());
  EXPECT_TRUE(HasWarning(without,
                         "t.obj:2: mtllib 'far.mtl' not found (No such file or directory; --texture-path "
                         "DIR adds a folder to search); using the default material"));
  EXPECT_TRUE(HasWarning(without,
                         "m.mtl:2: material 't': map_Kd 'wall.png' not found (No such file or directory; "
                         "--texture-path DIR adds a folder to search); using Kd without a texture"));

  LoadOptions options;
  options.searchPaths = {dir_ + "/no-such-folder", extra};
  Scene with = LoadScene(obj, options);
  ASSERT_EQ(with.textures.size(), 2u);
  EXPECT_EQ(with.textures[0].path, extra + "/wall.png");
  EXPECT_EQ(with.textures[1].path, extra + "/brick.png");  // "C:\art\brick.png": its last component
  EXPECT_TRUE(with.materials[size_t(with.triMaterial[0])].IsEmissive());
  ASSERT_EQ(with.warnings.size(), 1u);
  EXPECT_TRUE(Contains(with.warnings[0], "--texture-path " + dir_ + "/no-such-folder: not found")) << with.warnings[0];

  // Still no way out of a searched folder through "..".
  ASSERT_EQ(mkdir((extra + "/inner").c_str(), 0700), 0);
  WriteGreyPng(extra + "/outside.png", 30);
  Write("m.mtl", "newmtl t\nmap_Kd ../outside.png\n");
  options.searchPaths = {extra + "/inner"};
  Scene refused = LoadScene(obj, options);
  EXPECT_TRUE(refused.textures.empty());
  EXPECT_TRUE(HasWarning(refused, "resolves to " + extra + "/outside.png, outside the --texture-path folder " + extra +
                                      "/inner (--allow-outside-paths permits it)"));
}

TEST_F(LoaderTest, OutsidePathMessageNamesTheFlag) {
  Scene scene = LoadWithMtl("newmtl t\nmap_Kd /etc/hostname\n", "t");
  EXPECT_TRUE(HasWarning(scene, ", outside the scene's folder " + dir_ + " (--allow-outside-paths permits it)"));
  EXPECT_FALSE(HasWarning(scene, "LoadOptions"));
}

TEST_F(LoaderTest, DuplicateNewmtlIsReportedOnceAndTheFirstIsUsed) {
  Scene scene = LoadWithMtl(
      "newmtl a\nKd 0.1 0.1 0.1\nKe 1 1 1\nnewmtl b\nnewmtl a\nKd 0.2 0.2 0.2\nnewmtl a\nKd 0.3 0.3 0.3\n", "a");
  EXPECT_EQ(scene.materials[size_t(scene.triMaterial[0])].kd.x, 0.1f);
  ASSERT_EQ(scene.warnings.size(), 1u);
  EXPECT_EQ(scene.warnings[0], dir_ +
                                   "/m.mtl:5: material 'a' is defined again (3 definitions in all); the first "
                                   "definition, at " +
                                   dir_ + "/m.mtl:1, is used");
}

}  // namespace
}  // namespace tracer::test
