// @file loader_test.cpp: OBJ/MTL/camera loading: malformed input fails with file:line, odd but legal input loads.
#include <dirent.h>
#include <gtest/gtest.h>
#include <stb/stb_image_write.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"
#include "tracer/host/scene_loader.h"

namespace tracer {
namespace {

using test::MakeTempDir;
using test::WriteFile;

constexpr char kTriangle[] = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

bool HasWarning(const Scene& scene, const std::string& part) {
  for (const std::string& w : scene.warnings)
    if (Contains(w, part)) return true;
  return false;
}

std::string LoadError(const std::string& path, const LoadOptions& options = {}) {
  try {
    LoadScene(path, options);
  } catch (const SceneError& e) {
    return e.what();
  }
  return "(loaded without error)";
}

float SrgbToLinearReference(float c) { return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f); }

class LoaderTest : public ::testing::Test {
 protected:
  // Writes a file into this test's temporary folder and returns its path.
  std::string Write(const std::string& name, const std::string& contents) {
    std::string path = dir_ + "/" + name;
    WriteFile(path, contents);
    return path;
  }
  // One triangle using material `material` from `mtl` (both written here).
  Scene LoadWithMtl(const std::string& mtl, const std::string& material) {
    Write("m.mtl", mtl);
    return LoadScene(Write("m.obj", "mtllib m.mtl\n" + std::string(kTriangle) + "usemtl " + material + "\nf 1 2 3\n"));
  }
  std::string dir_ = MakeTempDir();
};

// ---- OBJ syntax errors name file and line -------------------------------------------------------------

TEST_F(LoaderTest, BadFaceIndicesFailWithFileAndLine) {
  const char* faces[] = {
      "f 1 2 4",                           // positive, past the 3 vertices
      "f -1 -2 -4",                        // relative, before the first vertex (CVE-2020-28589)
      "f 1 2 -2147483648",                 // INT_MIN
      "f 1 2 99999999999999999999999999",  // overflows any integer type
      "f 0 1 2",                           // indices start at 1
      "f 1/2 2/1 3/1",                     // texture coordinate out of range
      "f 1//-2 2//1 3//1",                 // normal out of range (relative)
      "f 1 2 3x",                          // not an index
      "f 1/ 2 3",                          // malformed vertex
      "f 1 2",                             // too few vertices
  };
  for (const char* face : faces) {
    SCOPED_TRACE(face);
    std::string path = Write("bad.obj", std::string(kTriangle) + "vt 0 0\nvn 0 0 1\n" + face + "\n");
    std::string error = LoadError(path);
    EXPECT_TRUE(Contains(error, "bad.obj:6:")) << error;
  }
}

TEST_F(LoaderTest, RelativeIndicesCountOnlyPrecedingVertices) {
  // -1 refers to the vertex just before the face, not the last one in the file.
  Scene scene = LoadScene(Write("rel.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\nv 5 5 5\n"));
  ASSERT_EQ(scene.NumTriangles(), 1u);
  EXPECT_EQ(scene.positions[2].y, 1.0f);
  EXPECT_TRUE(Contains(LoadError(Write("rel2.obj", "v 0 0 0\nv 1 0 0\nf -3 -2 -1\nv 0 1 0\n")), "rel2.obj:3:"));
}

TEST_F(LoaderTest, NonFiniteNumbersFailWithLine) {
  const char* lines[] = {"v nan 0 0",  "v 0 inf 0",     "v 0 0 -inf", "v 1e400 0 0",     "v 0 1e39 0",
                         "vn 0 NaN 1", "vt 0 infinity", "v 0 0",      "v 0 1e-123456 0", "v 0 0 1.5E+99999x"};
  for (const char* line : lines) {
    SCOPED_TRACE(line);
    std::string path = Write("nan.obj", std::string(kTriangle) + line + "\nf 1 2 3\n");
    std::string error = LoadError(path);
    EXPECT_TRUE(Contains(error, "nan.obj:4:")) << error;
  }
}

TEST_F(LoaderTest, HugeFiniteCoordinatesLoad) {
  // The second triangle's float cross product would be inf - inf = NaN.
  Scene scene = LoadScene(Write("big.obj",
                                "v 0 0 0\nv 1e30 0 0\nv 0 -1e30 0\nv 1e30 1e30 0\nv 1e30 1e30 1\n"
                                "f 1 2 3\nf 1 4 5\n"));
  ASSERT_EQ(scene.NumTriangles(), 2u);
  EXPECT_EQ(scene.droppedTriangles, 0u);
  EXPECT_EQ(scene.boundsMax.x, 1e30f);
  EXPECT_EQ(scene.boundsMin.y, -1e30f);
  EXPECT_FLOAT_EQ(scene.normals[0].z, -1.0f);  // the face normal, computed without overflow
}

TEST_F(LoaderTest, LargePolygonIsTriangulated) {
  std::string obj;
  const int n = 300;
  for (int i = 0; i < n; ++i) {
    double a = 2.0 * M_PI * i / n;
    obj += "v " + std::to_string(std::cos(a)) + " " + std::to_string(std::sin(a)) + " 0\n";
  }
  obj += "f";
  for (int i = 1; i <= n; ++i) obj += " " + std::to_string(i);
  Scene scene = LoadScene(Write("poly.obj", obj + "\n"));
  EXPECT_EQ(scene.NumTriangles(), 298u);
  double area = 0.0;
  for (size_t t = 0; t < scene.NumTriangles(); ++t)
    area += 0.5 * Length(Cross(scene.positions[3 * t + 1] - scene.positions[3 * t],
                               scene.positions[3 * t + 2] - scene.positions[3 * t]));
  EXPECT_NEAR(area, 0.5 * n * std::sin(2.0 * M_PI / n), 1e-3);  // the triangles cover the polygon
}

TEST_F(LoaderTest, HugeFaceFailsFast) {
  const int n = 40000;
  std::string obj;
  for (int i = 0; i < n; ++i) obj += "v " + std::to_string(i) + " " + std::to_string(i % 7) + " 0\n";
  obj += "f";
  for (int i = 1; i <= n; ++i) obj += " " + std::to_string(i);
  std::string path = Write("huge.obj", obj + "\n");
  auto start = std::chrono::steady_clock::now();
  std::string error = LoadError(path);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(Contains(error, "huge.obj:40001:") && Contains(error, "40000 vertices")) << error;
  EXPECT_LT(seconds, 5.0);
}

TEST_F(LoaderTest, MaxFaceVerticesOptionIsTheLimit) {
  std::string obj = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n";
  LoadOptions options;
  options.maxFaceVertices = 4;
  EXPECT_EQ(LoadScene(Write("quad.obj", obj), options).NumTriangles(), 2u);
  options.maxFaceVertices = 3;
  EXPECT_TRUE(Contains(LoadError(Write("quad.obj", obj), options), "quad.obj:5:"));
}

TEST_F(LoaderTest, CrlfTabsLeadingSpacesAndNoFinalNewline) {
  Write("crlf.mtl", "newmtl lamp\r\n\tKd 0.5 0.5 0.5\r\n\tKe 1\t2 3\r\n");
  std::string obj = "mtllib crlf.mtl\r\n  v\t0 0 0\r\nv 1\t0  0\r\n\t v 0 1 0 \r\nusemtl lamp\r\nf 1\t2 3";
  Scene scene = LoadScene(Write("crlf.obj", obj));
  ASSERT_EQ(scene.NumTriangles(), 1u);
  EXPECT_EQ(scene.positions[2].y, 1.0f);
  EXPECT_EQ(scene.materials[size_t(scene.triMaterial[0])].ke.z, 3.0f);
  // Line numbers count CRLF lines and lone CR lines (as tinyobjloader splits them) once each.
  EXPECT_TRUE(Contains(LoadError(Write("crlf2.obj", "v 0 0 0\r\nv 1 0 0\rv 0 1 0\r\nf 1 2 9")), "crlf2.obj:4:"));
}

// ---- degenerate geometry, normals and UVs -------------------------------------------------------------

TEST_F(LoaderTest, DegenerateTrianglesAreDropped) {
  std::string obj = std::string(kTriangle) + "v 2 0 0\nf 1 2 3\nf 1 2 4\nf 1 1 3\n";
  Scene scene = LoadScene(Write("degen.obj", obj));
  EXPECT_EQ(scene.NumTriangles(), 1u);
  EXPECT_EQ(scene.droppedTriangles, 2u);
  EXPECT_EQ(scene.positions.size(), 3u);
  EXPECT_TRUE(HasWarning(scene, "dropped 2"));
  EXPECT_EQ(scene.boundsMax.x, 1.0f);  // the dropped triangle's vertex 4 is not in the bounds
}

TEST_F(LoaderTest, OnlyDegenerateTrianglesMeansNoTriangles) {
  EXPECT_TRUE(Contains(LoadError(Write("line.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n")), "no triangles"));
}

TEST_F(LoaderTest, NormalsAndUvsFromFileOrFaceNormalAndZero) {
  std::string obj = std::string(kTriangle) + "vn 0 0 2\nvn 0 0 0\nvt 0.25 0.75\nf 1/1/1 2//2 3\n";
  Scene scene = LoadScene(Write("n.obj", obj));
  ASSERT_EQ(scene.NumTriangles(), 1u);
  EXPECT_FLOAT_EQ(scene.normals[0].z, 1.0f);  // normalized from (0, 0, 2)
  EXPECT_FLOAT_EQ(scene.normals[1].z, 1.0f);  // zero normal: the face normal
  EXPECT_FLOAT_EQ(scene.normals[2].z, 1.0f);  // none: the face normal
  EXPECT_EQ(scene.uvs, (std::vector<float>{0.25f, 0.75f, 0, 0, 0, 0}));
  EXPECT_TRUE(HasWarning(scene, "1 vertex normals are zero"));

  Scene flipped = LoadScene(Write("n2.obj", std::string(kTriangle) + "f 1 3 2\n"));
  EXPECT_FLOAT_EQ(flipped.normals[0].z, -1.0f);
}

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

// A 1x1 PNG of one grey level, so that a test can tell which of two files was loaded.
void WriteGreyPng(const std::string& path, unsigned char level) {
  const unsigned char pixel[] = {level, level, level};
  ASSERT_NE(stbi_write_png(path.c_str(), 1, 1, 3, pixel, 3), 0) << path;
}

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

// ---- texture statements: options, sharing -------------------------------------------------------------

// The scene's warnings but the one about a scene without emitters (these scenes have none).
std::vector<std::string> WarningsButNoEmitters(const Scene& scene) {
  std::vector<std::string> out;
  for (const std::string& w : scene.warnings)
    if (!Contains(w, "no emitters")) out.push_back(w);
  return out;
}

TEST_F(LoaderTest, TextureOptionsAreReadBeforeTheFileName) {
  WriteGreyPng(dir_ + "/wall.png", 10);
  WriteGreyPng(dir_ + "/my wall.png", 20);
  Scene scene = LoadWithMtl(
      "newmtl a\nmap_Kd -s 2 3 1 -o 0.25 0.5 0 -clamp on -mm 0.1 0.8 wall.png\n"
      "newmtl b\nmap_Kd -s 4 -o 0.5 -bm 2.5 -imfchan l my wall.png  \n"
      "newmtl c\nmap_Kd -blendu off -blendv on -clamp off wall.png\n",
      "a");
  // The one warning: -imfchan picks a channel of scalar maps only.
  const std::vector<std::string> warnings = WarningsButNoEmitters(scene);
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
  const std::vector<std::string> warnings = WarningsButNoEmitters(scene);
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
  const std::vector<std::string> warnings = WarningsButNoEmitters(scene);
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
  const std::vector<std::string> warnings = WarningsButNoEmitters(scene);
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
  const std::vector<std::string> warnings = WarningsButNoEmitters(scene);
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
  const std::vector<std::string> warnings = WarningsButNoEmitters(scene);
  EXPECT_EQ(scene.materials[0].texture, -1);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], dir_ + "/m.mtl:2: map_Kd names no file; ignored");
}

// ---- MTL to material class ----------------------------------------------------------------------------

TEST(ClassifyMaterialTest, Rules) {
  const Vec3 black(0.0f), white(1.0f), grey(0.5f);
  const float rough = 0.25f, smooth = 0.0f;  // GGX alpha (Ns 250, Ns 1000)
  // illum, kd, ks, alpha, tf
  EXPECT_EQ(ClassifyMaterial(2, grey, black, rough, white), kDiffuse);
  for (int illum : {4, 6, 7, 9}) EXPECT_EQ(ClassifyMaterial(illum, grey, black, rough, white), kDielectric);
  EXPECT_EQ(ClassifyMaterial(9, grey, black, rough, black), kDiffuse);           // a black Tf transmits nothing
  EXPECT_EQ(ClassifyMaterial(7, grey, Vec3(0.9f), smooth, black), kMirror);      // ... and illum 7 reflects
  EXPECT_EQ(ClassifyMaterial(2, grey, black, rough, Vec3(0.9f)), kDiffuse);      // Tf without glass illum
  EXPECT_EQ(ClassifyMaterial(7, grey, Vec3(0.9f), smooth, white), kDielectric);  // glass before mirror
  EXPECT_EQ(ClassifyMaterial(5, black, Vec3(0.9f), smooth, white), kMirror);
  for (int illum : {3, 8}) EXPECT_EQ(ClassifyMaterial(illum, black, Vec3(0.6f, 0, 0), smooth, white), kMirror);
  EXPECT_EQ(ClassifyMaterial(5, grey, Vec3(0.9f), rough, white), kGlossy);   // rough conductor
  EXPECT_EQ(ClassifyMaterial(5, grey, Vec3(0.1f), smooth, white), kGlossy);  // weak Ks: a layer, no mirror
  EXPECT_EQ(ClassifyMaterial(2, black, Vec3(0.9f, 0.6f, 0.2f), rough, white), kGlossy);
  EXPECT_EQ(ClassifyMaterial(2, black, Vec3(0.9f, 0.6f, 0.2f), smooth, white), kMirror);
  EXPECT_EQ(ClassifyMaterial(2, grey, Vec3(0.0f, 0.0f, 0.01f), rough, white), kGlossy);
  // Metal-like: a reflection illum with Ks >= 0.5, or black Kd under non-black Ks.
  EXPECT_TRUE(IsConductor(3, grey, Vec3(0.5f)));
  EXPECT_TRUE(IsConductor(2, black, Vec3(0.1f)));
  EXPECT_FALSE(IsConductor(2, grey, Vec3(0.9f)));
  EXPECT_FALSE(IsConductor(5, grey, Vec3(0.4f)));
  EXPECT_FALSE(IsConductor(2, black, black));
}

TEST(ClassifyMaterialTest, NsToAlphaAsBlenderReadsIt) {
  // r = 1 - sqrt(Ns / 1000), alpha = r^2; without Ns: smooth for the highlight and reflection illums.
  EXPECT_FLOAT_EQ(MtlAlpha(2, true, 250.0f), 0.25f);
  EXPECT_FLOAT_EQ(MtlAlpha(2, true, 90.0f), (1.0f - 0.3f) * (1.0f - 0.3f));
  EXPECT_FLOAT_EQ(MtlAlpha(2, true, 1000.0f), 0.0f);
  EXPECT_FLOAT_EQ(MtlAlpha(2, true, 1e6f), 0.0f);
  EXPECT_FLOAT_EQ(MtlAlpha(2, true, 0.0f), 1.0f);
  EXPECT_FLOAT_EQ(MtlAlpha(2, true, -5.0f), 1.0f);
  EXPECT_FLOAT_EQ(MtlAlpha(2, false, 1.0f), 0.0f);
  EXPECT_FLOAT_EQ(MtlAlpha(5, false, 1.0f), 0.0f);
  EXPECT_FLOAT_EQ(MtlAlpha(1, false, 1.0f), 1.0f);
  EXPECT_FLOAT_EQ(MtlAlpha(0, false, 1.0f), 1.0f);
}

TEST_F(LoaderTest, MtlKeysBecomeTheRightMaterial) {
  Write("c.mtl",
        "newmtl wall\nKd 0.5 0.5 0.5\nNi 1.5\n"      // no Tf: tinyobjloader's default 0 0 0 is no tint
        "newmtl tr\nKd 0.5 0.5 0.5\nNi 1.5\nTr 1\n"  // Tr is not read as opacity
        "newmtl glass\nillum 7\nNi 1.33\nTf 0.9 0.8 0.7\n"
        "newmtl glassNoNi\nillum 7\n"
        "newmtl mirror\nillum 5\nKs 0.9 0.9 0.9\n"
        "newmtl plastic\nKd 0.25 0.25 0.25\nKs 0.5 0.5 0.5\nNs 98\n"
        "newmtl sharp\nKd 0.5 0.5 0.5\nKs 0.5 0.5 0.5\nNs 1e6\n"
        "newmtl hot\nKd 0.8 0.6 0.4\nKs 0.5 0.2 0.1\n"
        "newmtl metal\nKd 0 0 0\nKs 0.9 0.6 0.2\nNs 250\n"
        "newmtl noNi\nKd 0.5 0.5 0.5\nKs 0.5 0.5 0.5\nNi 1.0\nNs 250\n"
        "newmtl veil\nKd 0.8 0 0\nd 0.5\nNi 1.5\n"
        "newmtl tinted\nillum 2\nKd 0.5 0.5 0.5\nTf 0.9 0.9 0.9\nNi 1.5\n"
        "newmtl blender\nNs 250\nKa 1 1 1\nKd 0.8 0.8 0.8\nKs 0.5 0.5 0.5\nKe 0 0 0\nNi 1.45\nd 1\nillum 2\n");
  std::string obj = "mtllib c.mtl\n" + std::string(kTriangle);
  const char* names[] = {"wall", "tr",    "glass", "glassNoNi", "mirror", "plastic", "sharp",
                         "hot",  "metal", "noNi",  "veil",      "tinted", "blender"};
  for (const char* name : names) obj += std::string("usemtl ") + name + "\nf 1 2 3\n";
  Scene scene = LoadScene(Write("c.obj", obj));
  ASSERT_EQ(scene.materials.size(), 13u);
  auto byName = [&](const std::string& name) -> const HostMaterial& {
    for (const HostMaterial& m : scene.materials)
      if (m.name == name) return m;
    throw std::runtime_error("no material " + name);
  };
  EXPECT_EQ(byName("wall").cls, kDiffuse);
  EXPECT_EQ(byName("tr").cls, kDiffuse);
  const HostMaterial& glass = byName("glass");
  EXPECT_EQ(glass.cls, kDielectric);
  EXPECT_FLOAT_EQ(glass.ior, 1.33f);
  EXPECT_FLOAT_EQ(glass.kd.x, 0.9f);  // kd holds Tf
  EXPECT_FLOAT_EQ(glass.kd.z, 0.7f);
  EXPECT_EQ(byName("glassNoNi").cls, kDielectric);
  EXPECT_EQ(byName("glassNoNi").ior, 1.5f);   // Blender's IOR where the file names none
  EXPECT_EQ(byName("glassNoNi").kd.x, 1.0f);  // no Tf: no tint
  EXPECT_EQ(byName("mirror").cls, kMirror);
  EXPECT_FLOAT_EQ(byName("mirror").ks.y, 0.9f);
  // A dielectric layer: f0 = 2 mean(Ks) ((Ni - 1) / (Ni + 1))^2 (Ni 1.5 where absent: 0.04), f90 = min(1, 2 mean(Ks)).
  const HostMaterial& plastic = byName("plastic");
  EXPECT_EQ(plastic.cls, kGlossy);
  EXPECT_NEAR(plastic.alpha, std::pow(1.0f - std::sqrt(0.098f), 2.0f), 1e-6f);
  EXPECT_NEAR(plastic.ks.x, 0.04f, 1e-6f);
  EXPECT_FLOAT_EQ(plastic.f90, 1.0f);
  EXPECT_FLOAT_EQ(plastic.kd.x, 0.25f);  // the base keeps Kd: no rescaling
  EXPECT_EQ(byName("sharp").alpha, kMinGlossyAlpha);
  const HostMaterial& hot = byName("hot");  // coloured Ks: its mean is the level, as in Blender
  EXPECT_EQ(hot.cls, kGlossy);
  EXPECT_NEAR(hot.ks.x, 2.0f * 0.04f * (0.8f / 3.0f), 1e-6f);
  EXPECT_NEAR(hot.ks.z, hot.ks.x, 1e-7f);
  EXPECT_NEAR(hot.f90, 1.6f / 3.0f, 1e-6f);
  EXPECT_FLOAT_EQ(hot.kd.x, 0.8f);
  EXPECT_FLOAT_EQ(hot.kd.y, 0.6f);
  EXPECT_FLOAT_EQ(hot.alpha, 1.0f);  // no Ns, no illum: rough (Blender)
  EXPECT_FALSE(HasWarning(scene, "Kd + Ks"));
  const HostMaterial& metal = byName("metal");  // black Kd: a conductor with f0 = Ks
  EXPECT_EQ(metal.cls, kGlossy);
  EXPECT_EQ(metal.kd, Vec3(0.0f));
  EXPECT_FLOAT_EQ(metal.ks.y, 0.6f);
  EXPECT_FLOAT_EQ(metal.alpha, 0.25f);
  EXPECT_EQ(byName("noNi").cls, kDiffuse);    // Ni 1 reflects nothing
  const HostMaterial& veil = byName("veil");  // d is opacity, not glass
  EXPECT_EQ(veil.cls, kDiffuse);
  EXPECT_FLOAT_EQ(veil.opacity, 0.5f);
  EXPECT_FLOAT_EQ(veil.kd.x, 0.8f);
  EXPECT_FALSE(HasWarning(scene, "veil")) << "d < 1 is a cut-out (Cutout.*), nothing to warn about";
  EXPECT_EQ(byName("tinted").cls, kDiffuse);
  // Blender's default exported material: f0 = 2 * 0.5 * (0.45 / 2.45)^2 = 0.0337, alpha = (1 - sqrt(0.25))^2.
  const HostMaterial& blender = byName("blender");
  EXPECT_EQ(blender.cls, kGlossy);
  EXPECT_NEAR(blender.ks.x, (0.45f / 2.45f) * (0.45f / 2.45f), 1e-6f);
  EXPECT_FLOAT_EQ(blender.f90, 1.0f);
  EXPECT_FLOAT_EQ(blender.alpha, 0.25f);
  EXPECT_FLOAT_EQ(blender.opacity, 1.0f);
}

TEST_F(LoaderTest, SpecularAndRoughnessMapsLoadAsData) {
  // map_Ks and map_Ns are data (no sRGB decoding): 128 reads as 128 / 255.
  const unsigned char pixel[3] = {128, 64, 255};
  ASSERT_NE(stbi_write_png((dir_ + "/spec.png").c_str(), 1, 1, 3, pixel, 3), 0);
  Scene scene = LoadWithMtl(
      "newmtl t\nKd 0.5 0.5 0.5\nKs 0.5 0.5 0.5\nmap_Kd spec.png\nmap_Ks spec.png\nmap_Ns spec.png\n"
      "newmtl d\nKd 0.5 0.5 0.5\nmap_Ks spec.png\n",
      "t");
  const HostMaterial& m = scene.materials[0];
  ASSERT_EQ(m.cls, kGlossy);
  ASSERT_GE(m.specularTexture, 0);
  ASSERT_GE(m.roughnessTexture, 0);
  EXPECT_EQ(m.specularTexture, m.roughnessTexture);  // one data texture, loaded once
  ASSERT_GE(m.texture, 0);
  EXPECT_NE(m.texture, m.specularTexture);  // the colour reading of the same file is another
  const auto image = [&](int map) -> const Texture& {
    return scene.textures[size_t(scene.textureMaps[size_t(map)].texture)];
  };
  EXPECT_EQ(scene.textures.size(), 2u) << "spec.png as colour and as data";
  EXPECT_FLOAT_EQ(image(m.specularTexture).texels[0].x, 128.0f / 255.0f);
  EXPECT_NEAR(image(m.texture).texels[0].x, SrgbToLinearReference(128.0f / 255.0f), 1e-6f);
  EXPECT_NEAR(m.specularScale, 2.0f * 0.04f, 1e-7f);
  EXPECT_EQ(scene.materials[1].cls, kDiffuse);  // map_Ks without Ks: no layer (Blender: level from Ks)
}

TEST_F(LoaderTest, OutOfRangeKdIsClampedWithWarning) {
  Scene scene = LoadWithMtl("newmtl a\nKd -1 0.5 2\n", "a");
  const HostMaterial& m = scene.materials[0];
  EXPECT_EQ(m.kd.x, 0.0f);
  EXPECT_EQ(m.kd.y, 0.5f);
  EXPECT_EQ(m.kd.z, 1.0f);
  EXPECT_TRUE(HasWarning(scene, "m.mtl:1: material 'a': Kd (-1, 0.5, 2) is out of range"));
}

TEST_F(LoaderTest, NiZeroWarnsAndUsesOnePointFive) {
  Scene scene = LoadWithMtl("newmtl g\nillum 7\nNi 0\n", "g");
  EXPECT_EQ(scene.materials[0].ior, 1.5f);
  EXPECT_TRUE(HasWarning(scene, "material 'g': Ni 0"));
}

TEST_F(LoaderTest, HugeEmissionWarnsNonFiniteEmissionFails) {
  Scene scene = LoadWithMtl("newmtl sun\nKe 1e30 1e30 1e30\n", "sun");
  EXPECT_FLOAT_EQ(scene.materials[0].ke.x, 1e30f);
  EXPECT_TRUE(HasWarning(scene, "material 'sun': Ke (1e+30, 1e+30, 1e+30) is very large"));
  // "1e-21474836481" underflows to a finite 0 in strtod but overflows tinyobjloader's int exponent (UB; a
  // fuzzer finding): exponents of more than four digits are refused before the library sees them.
  for (const char* ke : {"Ke nan 1 1", "Ke 1 inf 1", "Ke 1 1 1e400", "Ke 1e-21474836481 0 0", "Ke 1 1E+99999 1",
                         "Ke 1e-21474836481zz 0 0", "Ke 1e-21474836481\xd7xagon 0 0"}) {
    SCOPED_TRACE(ke);
    Write("bad.mtl", std::string("newmtl x\n") + ke + "\n");
    std::string error =
        LoadError(Write("bad.obj", "mtllib bad.mtl\n" + std::string(kTriangle) + "usemtl x\nf 1 2 3\n"));
    EXPECT_TRUE(Contains(error, "bad.mtl:2:")) << error;
  }
  // "-.e1302" is no number to our line scan, but tinyobjloader reads it as NaN (also a fuzzer finding): the
  // material is refused at its newmtl line.
  Write("bad.mtl", "newmtl x\nKd 0.2 0.2 -.e1302\n");
  std::string error = LoadError(Write("bad.obj", "mtllib bad.mtl\n" + std::string(kTriangle) + "usemtl x\nf 1 2 3\n"));
  EXPECT_TRUE(Contains(error, "bad.mtl:1:") && Contains(error, "Kd is not finite")) << error;
}

TEST_F(LoaderTest, NoEmittersIsAWarningNotAnError) {
  Scene dark = LoadScene(Write("dark.obj", std::string(kTriangle) + "f 1 2 3\n"));
  EXPECT_TRUE(HasWarning(dark, "no emitters"));
  Scene lit = LoadWithMtl("newmtl lamp\nKe 1 1 1\n", "lamp");
  EXPECT_FALSE(HasWarning(lit, "no emitters"));
}

TEST_F(LoaderTest, SummaryCountsClassesAndEmitters) {
  Write("s.mtl",
        "newmtl lamp\nKd 0.5 0.5 0.5\nKe 5 5 5\nnewmtl gloss\nKd 0.2 0.2 0.2\nKs 0.5 0.5 0.5\n"
        "newmtl glass\nillum 7\nNi 1.5\nnewmtl mirror\nillum 3\nKs 1 1 1\n");
  std::string obj = "mtllib s.mtl\n" + std::string(kTriangle) + "v 1 1 0\nf 1 2 3\n";
  for (const char* name : {"lamp", "gloss", "glass", "mirror", "lamp"})
    obj += std::string("usemtl ") + name + "\nf 2 4 3\n";
  Scene scene = LoadScene(Write("s.obj", obj));
  EXPECT_EQ(
      scene.Summary(),
      "scene: 6 triangles, 5 materials (2 diffuse, 1 glossy, 1 mirror, 1 dielectric; 1 emissive), 2 emitter triangles");
  EXPECT_EQ(scene.materials.back().name, "default");  // the first face precedes any usemtl
}

// ---- camera files -------------------------------------------------------------------------------------

TEST_F(LoaderTest, CameraFileParses) {
  CameraSpec cam =
      LoadCameraFile(Write("a.camera", "# a camera\n\neye 278 273 -800\r\n  look_at\t278 273 0 # target\nfov 39.3"));
  EXPECT_TRUE(cam.valid);
  EXPECT_EQ(cam.eye.z, -800.0f);
  EXPECT_EQ(cam.lookAt.x, 278.0f);
  EXPECT_EQ(cam.up.y, 1.0f);  // default
  EXPECT_FLOAT_EQ(cam.fovY, 39.3f);
  EXPECT_EQ(LoadCameraFile(Write("b.camera", "eye 0 0 1\nlook_at 0 0 0\nup 1 0 0\n")).fovY, 45.0f);
}

TEST_F(LoaderTest, CameraFileErrorsNameFileAndLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"eye 0 0 1\nlook_at 0 0 0\nfov 180\n", "c.camera:3:"},
      {"eye 0 0 1\nlook_at 0 0 0\nfov 0\n", "c.camera:3:"},
      {"eye 0 0 1\nlook_at 0 0 nan\n", "c.camera:2:"},
      {"eye 0 0\nlook_at 0 0 0\n", "c.camera:1:"},
      {"eye 0 0 1\nlookat 0 0 0\n", "c.camera:2:"},
      {"eye 0 0 1\neye 0 0 2\nlook_at 0 0 0\n", "c.camera:2:"},
      {"eye 0 0 1\nlook_at 0 0 0\nup 0 0 3\n", "c.camera:3:"},
      {"eye 0 0 1\nlook_at 0 0 1\n", "c.camera:2:"},
      {"look_at 0 0 0\n", "c.camera: 'eye' is required"},
      {"eye 0 0 0\n", "c.camera: 'look_at' is required"},
  };
  for (const auto& [text, expected] : cases) {
    SCOPED_TRACE(text);
    std::string path = Write("c.camera", text);
    try {
      LoadCameraFile(path);
      ADD_FAILURE() << "no error";
    } catch (const SceneError& e) {
      EXPECT_TRUE(Contains(e.what(), expected)) << e.what();
    }
  }
}

TEST_F(LoaderTest, SceneCameraFileIsPickedUpAndChecked) {
  std::string obj = Write("cam.obj", std::string(kTriangle) + "f 1 2 3\n");
  EXPECT_FALSE(LoadScene(obj).camera.valid);
  Write("cam.camera", "eye 0 0 5\nlook_at 0 0 0\nfov 30\n");
  Scene scene = LoadScene(obj);
  EXPECT_TRUE(scene.camera.valid);
  EXPECT_EQ(scene.camera.fovY, 30.0f);
  Write("cam.camera", "eye 0 0 5\n");
  EXPECT_TRUE(Contains(LoadError(obj), "cam.camera: 'look_at' is required"));
}

// ---- the checks before and after tinyobjloader, in parallel -------------------------------------------

// An OBJ of rows x cols quads, lines as a list (line n is element n - 1): rows of v/vt/vn interleaved with faces,
// absolute indices in even rows and relative ones in odd rows, a material per row (every third one undefined),
// every 13th normal zero and a degenerate triangle after every 17th quad, so that each tally of the loader's
// parallel passes (kept and dropped triangles, bad normals, the default material, bounds) has something to count.
std::vector<std::string> GridObjLines(int rows, int cols, int* degenerate) {
  std::vector<std::string> lines = {"mtllib m.mtl"};
  auto number = [](double v) { return std::to_string(v); };
  int vertices = 0, quads = 0;
  *degenerate = 0;
  for (int r = 0; r <= rows; ++r) {
    for (int c = 0; c <= cols; ++c) {
      const double x = c * 0.5, z = r * 0.5, y = std::sin(0.3 * c) * std::cos(0.2 * r);
      lines.push_back("v " + number(x) + " " + number(y) + " " + number(z));
      lines.push_back("vt " + number(c / double(cols)) + " " + number(r / double(rows)));
      lines.push_back(++vertices % 13 ? "vn " + number(-y) + " 1 0.1" : "vn 0 0 0");
    }
    if (r == 0) continue;
    lines.push_back(r % 3 == 2 ? "usemtl undefined" : r % 3 ? "usemtl a" : "usemtl b");
    auto index = [&](int row, int col) {
      const int absolute = row * (cols + 1) + col + 1;
      const int written = r % 2 ? absolute - (vertices + 1) : absolute;  // odd rows: relative to the end
      const std::string i = std::to_string(written);
      return i + "/" + i + "/" + i;
    };
    for (int c = 0; c < cols; ++c) {
      lines.push_back("f " + index(r - 1, c) + " " + index(r, c) + " " + index(r, c + 1) + " " + index(r - 1, c + 1));
      if (++quads % 17 == 0) {
        lines.push_back("f " + index(r, c) + " " + index(r, c) + " " + index(r, c + 1));
        ++*degenerate;
      }
    }
  }
  return lines;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

template <typename T>
bool SameBytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// The two Scenes hold the same bytes: triangles, materials, warnings and bounds.
void ExpectSameScene(const Scene& a, const Scene& b) {
  EXPECT_EQ(a.NumTriangles(), b.NumTriangles());
  EXPECT_TRUE(SameBytes(a.positions, b.positions));
  EXPECT_TRUE(SameBytes(a.normals, b.normals));
  EXPECT_TRUE(SameBytes(a.uvs, b.uvs));
  EXPECT_TRUE(SameBytes(a.triMaterial, b.triMaterial));
  EXPECT_EQ(a.materials.size(), b.materials.size());
  for (size_t i = 0; i < std::min(a.materials.size(), b.materials.size()); ++i)
    EXPECT_EQ(a.materials[i].name, b.materials[i].name);
  EXPECT_EQ(a.droppedTriangles, b.droppedTriangles);
  EXPECT_EQ(a.warnings, b.warnings);
  EXPECT_EQ(std::memcmp(&a.boundsMin, &b.boundsMin, sizeof(Vec3)), 0);
  EXPECT_EQ(std::memcmp(&a.boundsMax, &b.boundsMax, sizeof(Vec3)), 0);
}

TEST_F(LoaderTest, ParallelChecksGiveTheSceneOfOnePass) {
  Write("m.mtl", "newmtl a\nKd 0.5 0.5 0.5\nnewmtl b\nKd 0.2 0.2 0.2\nKe 1 1 1\n");
  int degenerate = 0;
  const std::string path = Write("grid.obj", Join(GridObjLines(120, 90, &degenerate)));
  LoadOptions one, many;
  one.threads = 1;
  many.threads = 5;  // more than the cores of CI: pieces then run in any order
  const Scene a = LoadScene(path, one), b = LoadScene(path, many);
  EXPECT_EQ(a.NumTriangles(), 2u * 120 * 90);
  EXPECT_EQ(a.droppedTriangles, static_cast<size_t>(degenerate));
  EXPECT_EQ(a.materials.size(), 3u) << "a, b and the default for the undefined one";
  EXPECT_TRUE(HasWarning(a, "vertex normals are zero"));
  ExpectSameScene(a, b);
}

// Numbers written as exporters write them, and as they may: signs, no integer or fraction digits, exponents, more
// than 8 fractional digits (tinyobjloader's table ends at 10^-7), and values that are not exactly representable,
// where a parser that rounds differently from tinyobjloader's gives another float.
std::string ObjNumberText(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double x = u(rng) * std::pow(10.0, std::uniform_int_distribution<int>(-3, 3)(rng));
  static const char* const kFormats[] = {"%.6f", "%.9g", "%.17g", "%.4e", "%+.3E", "%.12f"};
  const int kind = std::uniform_int_distribution<int>(0, 7)(rng);
  char text[64];
  if (kind < 6) {
    std::snprintf(text, sizeof text, kFormats[kind], x);
    return text;
  }
  if (kind == 6) return std::to_string(int(x * 10)) + ".";  // "12."
  std::snprintf(text, sizeof text, "%.5f", std::fabs(x) < 1.0 ? x : x / 100.0);
  std::string t = text;  // "0.12345" -> ".12345", "-0.12345" -> "-.12345"
  const size_t zero = t.find("0.");
  if (zero != std::string::npos && (zero == 0 || t[zero - 1] == '-')) t.erase(zero, 1);
  return t;
}

// Everything our parse does in tinyobjloader's place: numbers, the optional parts of v/vt lines, relative indices,
// triangles, quads both ways, convex and concave polygons up to 9 corners, usemtl before, between and after the
// mtllib lines (one of which names a missing file first, another an MTL loaded before), undefined and repeated
// usemtl, one without a blank before its name, groups and objects, comments after the numbers.
std::string TrickyObj(std::mt19937& rng) {
  std::string obj = "# tricky\nusemtl a\n";  // before any mtllib: tinyobjloader's default (-1)
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int vertices = 0, normals = 0, texcoords = 0;
  auto number = [&] { return ObjNumberText(rng); };
  for (int group = 0; group < 40; ++group) {
    if (group == 3) obj += "mtllib missing.mtl m.mtl\n";
    if (group == 9) obj += "mtllib m.mtl n.mtl\n";  // m.mtl again: skipped, n.mtl loaded
    if (group % 7 == 0) obj += std::string(group % 2 ? "g" : "o") + " part" + std::to_string(group) + "\n";
    const char* uses[] = {"a", "b", "c", "undefined", "b"};
    obj += "usemtl " + std::string(uses[group % 5]) + "\n";
    if (group % 11 == 5) obj += "usemtl c\n";  // two in a row: the second counts
    if (group % 13 == 6) obj += "usemtlb\n";   // tinyobjloader reads this as "usemtl b"
    // A polygon of n corners around a centre, every other corner pulled in when concave.
    const int n = 3 + group % 7;
    const bool concave = group % 3 == 1 && n > 4;
    const double cx = u(rng) * 10, cz = u(rng) * 10, tilt = u(rng) - 0.5;
    for (int k = 0; k < n; ++k) {
      const double angle = 6.283185307179586 * k / n + 0.1 * u(rng);
      const double radius = (concave && k % 2) ? 0.4 : 1.0 + 0.2 * u(rng);
      const double x = cx + radius * std::cos(angle), z = cz + radius * std::sin(angle);
      char line[160];
      std::snprintf(line, sizeof line, "v %.7f %.7f %.7f", x, tilt * x + 0.01 * u(rng), z);
      obj += line;
      obj += k % 4 == 0 ? " 0.5 0.5 0.5\n" : k % 4 == 1 ? " # a comment\n" : "\n";
      obj += "vn " + number() + " " + number() + " " + number() + "\n";
      obj += k % 3 == 0   ? "vt " + number() + "\n"
             : k % 3 == 1 ? "vt " + number() + " " + number() + " 0\n"
                          : "vt " + number() + " " + number() + "\n";
    }
    vertices += n, normals += n, texcoords += n;
    obj += "f";
    for (int k = 0; k < n; ++k) {
      const int v = vertices - n + k + 1, t = texcoords - n + k + 1, nn = normals - n + k + 1;
      switch ((group + k) % 4) {
        case 0:
          obj += " " + std::to_string(v);
          break;
        case 1:
          obj += " " + std::to_string(v) + "/" + std::to_string(t);
          break;
        case 2:
          obj += " " + std::to_string(v - vertices - 1) + "//" + std::to_string(nn - normals - 1);
          break;
        default:
          obj += " " + std::to_string(v) + "/" + std::to_string(t) + "/" + std::to_string(nn);
          break;
      }
    }
    obj += "\n";
    // A quad over four random vertices so far, in both diagonal orders over the file.
    auto any = [&] { return std::to_string(1 + std::uniform_int_distribution<int>(0, vertices - 1)(rng)); };
    obj += "f " + any() + " " + any() + " " + any() + " " + any() + "\n";
  }
  // A square: its diagonals are equally long, and tinyobjloader then cuts along 1-3.
  return obj + "usemtl b\nf -1 -2 -3\nv 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nf -4 -3 -2 -1\n";
}

TEST_F(LoaderTest, OurParseGivesTinyobjloadersSceneByteForByte) {
  Write("m.mtl", "newmtl a\nKd 0.5 0.5 0.5\nnewmtl b\nKd 0.2 0.2 0.2\nKe 1 1 1\n");
  Write("n.mtl", "newmtl c\nKd 0.1 0.7 0.1\nnewmtl a\nKd 0.9 0.9 0.9\n");  // a again: the first one counts
  for (unsigned seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    const std::string path = Write("tricky.obj", TrickyObj(rng));
    LoadOptions tinyobj, one, many;
    tinyobj.tinyobjParse = true;
    one.threads = 1;
    many.threads = 5;
    const Scene reference = LoadScene(path, tinyobj);
    EXPECT_GT(reference.NumTriangles(), 200u);
    EXPECT_TRUE(HasWarning(reference, "usemtl 'undefined' names an undefined material"));
    ExpectSameScene(LoadScene(path, one), reference);
    ExpectSameScene(LoadScene(path, many), reference);
  }
}

// mtllib lines at the edges of tinyobjloader's reading (a name ending in a lone backslash, which it drops; a trailing
// blank, after which it asks for a file named ""; "mtllib" with nothing after it, which is no statement), and the
// lines we do not render but tinyobjloader refuses (l and p with a zero index, vw with a joint that is no number):
// the same scene as its parse, or an error naming the line.
TEST_F(LoaderTest, MtllibEdgesAndUnrenderedLinesAsTinyobjloaderReadsThem) {
  Write("m.mtl", "newmtl a\nKd 0.9 0.1 0.1\n");
  LoadOptions tinyobj;
  tinyobj.tinyobjParse = true;
  const std::pair<const char*, const char*> cases[] = {{"mtllib m.mtl\\\n", ""},
                                                       {"mtllib \n", ""},
                                                       {"mtllib missing.mtl m.mtl \n", ""},
                                                       {"mtllib\nmtllib m.mtl\n", ""},
                                                       {"mtllib m.mtl\n", "l 1 2\np 1\nvw 1 0 0.5 2 0.5\n"}};
  for (const auto& [head, tail] : cases) {
    SCOPED_TRACE(std::string(head) + tail);
    const std::string path = Write("edge.obj", std::string(head) + kTriangle + tail + "usemtl a\nf 1 2 3\n");
    const Scene ours = LoadScene(path), reference = LoadScene(path, tinyobj);
    ExpectSameScene(ours, reference);
  }
  const Scene backslash =
      LoadScene(Write("edge.obj", std::string("mtllib m.mtl\\\n") + kTriangle + "usemtl a\nf 1 2 3\n"));
  EXPECT_FALSE(HasWarning(backslash, "undefined material"));
  for (const char* bad : {"l 0 1", "p 0", "l 1 9", "vw 1 x 0.5"}) {
    SCOPED_TRACE(bad);
    const std::string path = Write("bad.obj", std::string(kTriangle) + bad + "\nf 1 2 3\n");
    EXPECT_TRUE(Contains(LoadError(path), "bad.obj:4:")) << LoadError(path);
  }
}

// The number reader against tinyobjloader's on single values that tell rounding apart.
TEST_F(LoaderTest, NumbersAreReadAsTinyobjloaderReadsThem) {
  std::mt19937 rng(7);
  std::string obj;
  for (int i = 0; i < 3000; ++i) obj += "v " + ObjNumberText(rng) + " " + ObjNumberText(rng) + " 0\n";
  // Midpoints between neighbouring floats, with 16 or 17 digits: tinyobjloader's sums of digits times 10^-k round
  // these to the other neighbour than strtof does (found by a search over random midpoints; 6-decimal numbers, as
  // exporters write them, agreed on 10M of 10M).
  const char* midpoints[] = {"77.63354873657227",   "-945.2247619628906", "68.827884674072266", "556.77847290039062",
                             "752.7783508300781",   "756.2849426269531",  "500.2885894775391",  "-793.5479431152344",
                             "-853.27163696289062", "168.77832794189453", "399.5167388916016",  "451.9959869384766"};
  for (const char* m : midpoints) obj += std::string("v ") + m + " " + m + " 1\n";
  obj += "v 0.333333333333 1.00000005960464477539 16777217\nv -0 +.5 5.e-3\nv 1e-40 3.4028234e38 -1.17549435e-38\n";
  obj += "f 1 2 3\n";
  const std::string path = Write("numbers.obj", obj);
  LoadOptions tinyobj;
  tinyobj.tinyobjParse = true;
  // Every vertex reaches the Scene through a triangle: one per vertex, against two fixed corners.
  for (int i = 0; i < 3015; ++i) obj += "f " + std::to_string(i + 1) + " -1 -2\n";
  Write("numbers.obj", obj);
  const Scene ours = LoadScene(path), reference = LoadScene(path, tinyobj);
  EXPECT_GT(ours.NumTriangles(), 2900u);
  ExpectSameScene(ours, reference);
}

TEST_F(LoaderTest, ParallelChecksReportTheFirstErrorWithItsLineAndCount) {
  int degenerate = 0;
  const std::vector<std::string> grid = GridObjLines(100, 80, &degenerate);
  // The vertices defined before line n (1-based), counted here from the lines themselves.
  auto verticesBefore = [&](size_t n) {
    return std::count_if(grid.begin(), grid.begin() + static_cast<long>(n - 1),
                         [](const std::string& l) { return l.rfind("v ", 0) == 0; });
  };
  const size_t early = grid.size() / 4, late = grid.size() * 4 / 5;  // line numbers of the inserted bad lines
  for (bool both : {true, false}) {
    std::vector<std::string> lines = grid;
    lines.insert(lines.begin() + static_cast<long>(late - 1), "f 1 2 999999999");
    if (both) lines.insert(lines.begin() + static_cast<long>(early - 1), "v 1 nan 2");
    const std::string path = Write("bad.obj", Join(lines));
    LoadOptions one, many;
    one.threads = 1;
    many.threads = 5;
    const std::string error = LoadError(path, many);
    EXPECT_EQ(error, LoadError(path, one));
    if (both) {
      EXPECT_TRUE(Contains(error, "bad.obj:" + std::to_string(early) + ":")) << error;
    } else {
      EXPECT_TRUE(Contains(error, "bad.obj:" + std::to_string(late) + ":")) << error;
      EXPECT_TRUE(Contains(error, std::to_string(verticesBefore(late)) + " vertices defined so far")) << error;
    }
  }
}

// ---- the shared third-party scenes --------------------------------------------------------------------

TEST(SharedScenes, TinyobjloaderModelsLoadOrFailCleanly) {
  TRACER_SHARED_SCENE_OR_SKIP(dir, "tinyobjloader_models");
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr);
  int loaded = 0, refused = 0;
  while (dirent* entry = readdir(d)) {
    std::string name = entry->d_name;
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".obj") != 0) continue;
    SCOPED_TRACE(name);
    try {
      Scene scene = LoadScene(dir + "/" + name);
      EXPECT_GT(scene.NumTriangles(), 0u);
      EXPECT_EQ(scene.positions.size(), 3 * scene.NumTriangles());
      loaded++;
    } catch (const SceneError& e) {
      EXPECT_TRUE(Contains(e.what(), name)) << e.what();
      refused++;
    }
  }
  closedir(d);
  EXPECT_GT(loaded, 30);
  EXPECT_GT(refused, 5);

  EXPECT_EQ(LoadScene(dir + "/cornell_box.obj").NumTriangles(), 36u);
  EXPECT_TRUE(Contains(LoadError(dir + "/issue-140-zero-face-idx.obj"), "issue-140-zero-face-idx.obj:16:"));
  EXPECT_TRUE(Contains(LoadError(dir + "/invalid-relative-vertex-index.obj"), "invalid-relative-vertex-index.obj:1:"));
  EXPECT_TRUE(Contains(LoadError(dir + "/test-nan.obj"), "test-nan.obj:"));
  Scene missing = LoadScene(dir + "/missing_material_file.obj");
  EXPECT_TRUE(HasWarning(missing, "usemtl 'white' names an undefined material"));
}

// The .obj files of a folder (sorted), as full paths.
std::vector<std::string> ObjFilesIn(const std::string& dir) {
  std::vector<std::string> files;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* entry = readdir(d)) {
      const std::string name = entry->d_name;
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".obj") == 0) files.push_back(dir + "/" + name);
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Our parse against tinyobjloader's on every OBJ we have: the project's scenes and the shared third-party ones (the
// tinyobjloader test models among them). Where tinyobjloader refuses a file that our checks pass, ours must load it.
TEST(SharedScenes, OurParseGivesTinyobjloadersScene) {
  std::vector<std::string> files = ObjFilesIn(test::ProjectScenesDir());
  const std::string shared = test::SharedScenesDir();
  if (!shared.empty())
    for (const char* dir : {"cornellbox", "holodeck", "mori_knob", "teapot", "tinyobjloader_models"})
      for (const std::string& f : ObjFilesIn(shared + "/" + dir)) files.push_back(f);
  LoadOptions tinyobj;
  tinyobj.tinyobjParse = true;
  int compared = 0, refusedByBoth = 0, refusedByTinyobjOnly = 0;
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    const std::string ours = LoadError(path), reference = LoadError(path, tinyobj);
    if (ours != "(loaded without error)" || reference != "(loaded without error)") {
      if (reference.find("tinyobjloader: ") != std::string::npos && ours == "(loaded without error)") {
        refusedByTinyobjOnly++;
        continue;
      }
      EXPECT_EQ(ours, reference);
      refusedByBoth++;
      continue;
    }
    ExpectSameScene(LoadScene(path), LoadScene(path, tinyobj));
    compared++;
  }
  std::printf("%d OBJ files give the same scene, %d are refused by both, %d only by tinyobjloader\n", compared,
              refusedByBoth, refusedByTinyobjOnly);
  EXPECT_GE(compared, 5);
}

TEST(SharedScenes, CornellBoxOriginal) {
  TRACER_SHARED_SCENE_OR_SKIP(path, "cornellbox/CornellBox-Original.obj");
  Scene scene = LoadScene(path);
  EXPECT_EQ(scene.NumTriangles(), 36u);
  EXPECT_EQ(scene.droppedTriangles, 0u);
  EXPECT_EQ(scene.Summary(),
            "scene: 36 triangles, 8 materials (8 diffuse, 0 glossy, 0 mirror, 0 dielectric; 1 emissive), 2 emitter "
            "triangles");
  EXPECT_TRUE(scene.warnings.empty());
  for (const HostMaterial& m : scene.materials) {
    if (m.name != "light") continue;
    EXPECT_EQ(m.ke.x, 17.0f);
    EXPECT_EQ(m.ke.y, 12.0f);
    EXPECT_EQ(m.ke.z, 4.0f);
  }
  EXPECT_FLOAT_EQ(scene.boundsMin.x, -1.02f);
  EXPECT_FLOAT_EQ(scene.boundsMax.y, 1.99f);
}

TEST(SharedScenes, CornellBoxGlossyWarnsAboutLight) {
  TRACER_SHARED_SCENE_OR_SKIP(path, "cornellbox/CornellBox-Glossy.obj");
  Scene scene = LoadScene(path);
  EXPECT_EQ(scene.NumTriangles(), 1112u);
  EXPECT_TRUE(HasWarning(scene, "usemtl 'light' names an undefined material"));
  EXPECT_TRUE(HasWarning(scene, "no emitters"));
}

TEST(SharedScenes, CornellBoxSphereHasGlassAndMirror) {
  TRACER_SHARED_SCENE_OR_SKIP(path, "cornellbox/CornellBox-Sphere.obj");
  Scene scene = LoadScene(path);
  EXPECT_EQ(scene.NumTriangles(), 2188u);
  bool sawGlass = false, sawMirror = false;
  for (const HostMaterial& m : scene.materials) {
    if (m.name == "rightSphere") {
      sawGlass = true;
      EXPECT_EQ(m.cls, kDielectric);
      EXPECT_EQ(m.ior, 2.5f);
    }
    if (m.name == "leftSphere") {
      sawMirror = true;
      EXPECT_EQ(m.cls, kMirror);
    }
    if (m.name == "floor") {
      EXPECT_EQ(m.cls, kDiffuse);  // Ni 1.5 on a wall
    }
  }
  EXPECT_TRUE(sawGlass && sawMirror);
}

}  // namespace
}  // namespace tracer
