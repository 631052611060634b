// @file loader_obj_test.cpp: OBJ lines: malformed ones fail with file:line, odd legal ones load; degenerate triangles.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "loader_test_util.h"

namespace tracer::test {
namespace {

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

}  // namespace
}  // namespace tracer::test
