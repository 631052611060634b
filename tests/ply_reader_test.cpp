// @file ply_reader_test.cpp: the PLY reader on meshes the test writes itself: ASCII, binary little- and big-endian,
// gzip-compressed; every property type; quads split as pbrt splits them; face_indices; the uv spellings; other
// elements skipped; and the errors for bad headers (with their line), truncated data and indices out of range.
#include "tracer/host/ply_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "test_util.h"
#include "tracer/host/gzip_file.h"

namespace tracer {
namespace {

// Binary values in either byte order (the test machine is little-endian, as every machine the project runs on).
struct Bytes {
  bool big = false;
  std::string data;
  template <typename T>
  Bytes& Put(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    if (big) std::reverse(b, b + sizeof(T));
    data.append(b, sizeof(T));
    return *this;
  }
};

std::string ErrorOf(const std::string& bytes) {
  try {
    ParsePly(bytes, "m.ply");
  } catch (const PlyError& e) {
    return e.what();
  }
  return "";
}

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// A unit square (a quad) and a triangle on top, with normals, uvs and face indices.
const char* const kAsciiMesh =
    "ply\n"
    "format ascii 1.0\n"
    "comment made by the test\n"
    "element vertex 5\n"
    "property float x\nproperty float y\nproperty float z\n"
    "property float nx\nproperty float ny\nproperty float nz\n"
    "property float u\nproperty float v\n"
    "element face 2\n"
    "property list uchar int vertex_indices\n"
    "property int face_indices\n"
    "end_header\n"
    "0 0 0  0 0 1  0 0\n"
    "1 0 0  0 0 1  1 0\n"
    "1 1 0  0 0 1  1 1\n"
    "0 1 0  0 0 1  0 1\n"
    "0.5 2 -0.25  0 0 1  0.5 1\n"
    "4 0 1 2 3 7\n"
    "3 3 2 4 9\n";

void ExpectTheMesh(const PlyMesh& m) {
  ASSERT_EQ(m.NumVertices(), 5u);
  EXPECT_EQ(m.positions[12], 0.5f);
  EXPECT_EQ(m.positions[13], 2.0f);
  EXPECT_EQ(m.positions[14], -0.25f);
  ASSERT_EQ(m.normals.size(), 15u);
  EXPECT_EQ(m.normals[5], 1.0f);
  ASSERT_EQ(m.uvs.size(), 10u);
  EXPECT_EQ(m.uvs[4], 1.0f);
  EXPECT_EQ(m.uvs[5], 1.0f);
  // The quad (0 1 2 3) becomes (0 1 2) and (0 2 3), as pbrt-v4 splits it.
  EXPECT_EQ(m.indices, (std::vector<int32_t>{0, 1, 2, 0, 2, 3, 3, 2, 4}));
  EXPECT_EQ(m.faceIndices, (std::vector<int32_t>{7, 7, 9}));
  EXPECT_EQ(m.skippedFaces, 0u);
}

// The same mesh in binary: positions as `posType`, list counts as uchar or int.
std::string BinaryMesh(bool big, bool doublePositions, bool intCounts) {
  std::string header =
      std::string("ply\nformat ") + (big ? "binary_big_endian" : "binary_little_endian") + " 1.0\nelement vertex 5\n";
  const char* pt = doublePositions ? "double" : "float";
  header += std::string("property ") + pt + " x\nproperty " + pt + " y\nproperty " + pt + " z\n";
  header += "property float nx\nproperty float ny\nproperty float nz\nproperty float u\nproperty float v\n";
  header += std::string("element face 2\nproperty list ") + (intCounts ? "int" : "uchar") +
            " uint vertex_indices\nproperty int face_indices\nend_header\n";
  const float p[5][8] = {{0, 0, 0, 0, 0, 1, 0, 0},
                         {1, 0, 0, 0, 0, 1, 1, 0},
                         {1, 1, 0, 0, 0, 1, 1, 1},
                         {0, 1, 0, 0, 0, 1, 0, 1},
                         {0.5f, 2, -0.25f, 0, 0, 1, 0.5f, 1}};
  Bytes b{big, header};
  for (const auto& v : p)
    for (int i = 0; i < 8; ++i) {
      if (i < 3 && doublePositions)
        b.Put<double>(v[i]);
      else
        b.Put<float>(v[i]);
    }
  auto count = [&](int n) {
    if (intCounts)
      b.Put<int32_t>(n);
    else
      b.Put<uint8_t>(static_cast<uint8_t>(n));
  };
  count(4);
  for (uint32_t i : {0u, 1u, 2u, 3u}) b.Put(i);
  b.Put<int32_t>(7);
  count(3);
  for (uint32_t i : {3u, 2u, 4u}) b.Put(i);
  b.Put<int32_t>(9);
  return b.data;
}

TEST(PlyReader, Ascii) { ExpectTheMesh(ParsePly(kAsciiMesh, "m.ply")); }

TEST(PlyReader, BinaryLittleEndian) { ExpectTheMesh(ParsePly(BinaryMesh(false, false, false), "m.ply")); }

TEST(PlyReader, BinaryBigEndian) { ExpectTheMesh(ParsePly(BinaryMesh(true, false, false), "m.ply")); }

TEST(PlyReader, BinaryDoublesAndIntCounts) {
  ExpectTheMesh(ParsePly(BinaryMesh(false, true, true), "m.ply"));
  ExpectTheMesh(ParsePly(BinaryMesh(true, true, true), "m.ply"));
}

TEST(PlyReader, EveryPropertyTypeAndSkippedOnes) {
  // x..z of three types, extra scalar and list properties in the vertex, an element that is not a mesh's, faces
  // before vertices, counts and indices of other integer types.
  Bytes b{true,
          "ply\nformat binary_big_endian 1.0\n"
          "element face 1\nproperty uchar flags\nproperty list ushort short vertex_index\n"
          "property list uint8 float texcoord\n"
          "element edge 1\nproperty int vertex1\nproperty int vertex2\n"
          "element vertex 3\nproperty char x\nproperty int16 y\nproperty uint z\n"
          "property list uchar uchar junk\nproperty double red\nproperty int8 a\nproperty uint16 b\n"
          "property int32 c\nproperty float64 d\nend_header\n"};
  b.Put<uint8_t>(1).Put<uint16_t>(3).Put<int16_t>(2).Put<int16_t>(0).Put<int16_t>(1);
  b.Put<uint8_t>(2).Put<float>(0.5f).Put<float>(0.25f);
  b.Put<int32_t>(0).Put<int32_t>(1);
  const int8_t xs[3] = {-1, 2, 3};
  for (int i = 0; i < 3; ++i) {
    b.Put<int8_t>(xs[i]).Put<int16_t>(static_cast<int16_t>(-300 * i)).Put<uint32_t>(4000000000u);
    b.Put<uint8_t>(2).Put<uint8_t>(9).Put<uint8_t>(9).Put<double>(0.5).Put<int8_t>(1).Put<uint16_t>(2);
    b.Put<int32_t>(3).Put<double>(4);
  }
  PlyMesh m = ParsePly(b.data, "m.ply");
  ASSERT_EQ(m.NumVertices(), 3u);
  EXPECT_EQ(m.positions, (std::vector<float>{-1, 0, 4e9f, 2, -300, 4e9f, 3, -600, 4e9f}));
  EXPECT_TRUE(m.normals.empty());
  EXPECT_TRUE(m.uvs.empty());
  EXPECT_EQ(m.indices, (std::vector<int32_t>{2, 0, 1}));
  EXPECT_TRUE(m.faceIndices.empty());
}

TEST(PlyReader, UvSpellings) {
  for (const char* names : {"s t", "texture_u texture_v", "texture_s texture_t"}) {
    std::string n(names);
    const std::string u = n.substr(0, n.find(' ')), v = n.substr(n.find(' ') + 1);
    PlyMesh m = ParsePly(
        "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
        "property float z\nproperty float " +
            u + "\nproperty float " + v +
            "\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n"
            "0 0 0 0.1 0.2\n1 0 0 0.3 0.4\n0 1 0 0.5 0.6\n3 0 1 2\n",
        "m.ply");
    EXPECT_EQ(m.uvs, (std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f})) << names;
  }
  // A u without its v is no uv.
  PlyMesh m = ParsePly(
      "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
      "property float z\nproperty float u\nelement face 1\nproperty list uchar int vertex_indices\n"
      "end_header\n0 0 0 1\n1 0 0 1\n0 1 0 1\n3 0 1 2\n",
      "m.ply");
  EXPECT_TRUE(m.uvs.empty());
}

TEST(PlyReader, PolygonsOfOtherSizesAreSkipped) {
  PlyMesh m = ParsePly(
      "ply\r\nformat ascii 1.0\r\nelement vertex 5\r\nproperty float x\r\nproperty float y\r\n"
      "property float z\r\nelement face 3\r\nproperty list uchar int vertex_indices\r\nend_header\r\n"
      "0 0 0\r\n1 0 0\r\n1 1 0\r\n0 1 0\r\n0 2 0\r\n5 0 1 2 3 4\r\n2 0 1\r\n3 0 1 2\r\n",
      "m.ply");
  EXPECT_EQ(m.skippedFaces, 2u);
  EXPECT_EQ(m.indices, (std::vector<int32_t>{0, 1, 2}));
}

TEST(PlyReader, HeaderErrorsNameTheLine) {
  const std::pair<std::string, std::string> kCases[] = {
      {"PLY\n", "m.ply:1: not a PLY file (it does not start with \"ply\")"},
      {"ply\nformat binary 1.0\n", "m.ply:2: unknown format \"binary\""},
      {"ply\nformat ascii 2.0\n", "m.ply:2: unknown format version \"2.0\" (1.0 is the one there is)"},
      {"ply\nformat ascii 1.0\nproperty float x\n", "m.ply:3: a property before any element"},
      {"ply\nformat ascii 1.0\nelement vertex 3\nproperty float3 x\n",
       "m.ply:4: unknown property type in \"property float3 ...\""},
      {"ply\nformat ascii 1.0\nelement vertex 3\nproperty list float int vertex_indices\n",
       "m.ply:4: list count type \"float\" is not an integer type"},
      {"ply\nformat ascii 1.0\nelement vertex -3\n", "m.ply:3: element count \"-3\" is not a whole number"},
      {"ply\nformat ascii 1.0\nelement vertex 0\n", "m.ply:3: the file ends before end_header"},
      {"ply\nelement vertex 0\nend_header\n", "m.ply:3: no format line before end_header"},
      {"ply\nformat ascii 1.0\nbogus\n", "m.ply:3: unknown header line \"bogus\""},
      {"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nelement face 0\n"
       "property list uchar int vertex_indices\nend_header\n",
       "m.ply:3: no x, y and z properties in the vertex element"},
      {"ply\nformat ascii 1.0\nelement vertex 0\nproperty float x\nproperty float y\nproperty float z\n"
       "element face 0\nproperty list uchar int indices\nend_header\n",
       "m.ply:7: no vertex_indices (or vertex_index) list in the face element"},
      {"ply\nformat ascii 1.0\nelement vertex 0\nproperty float x\nend_header\n",
       "m.ply: no vertex or no face element: not a mesh"},
  };
  for (const auto& [text, message] : kCases) EXPECT_EQ(ErrorOf(text), message) << text;
}

TEST(PlyReader, DataErrors) {
  const std::string good = BinaryMesh(false, false, false);
  EXPECT_EQ(ErrorOf(good.substr(0, good.size() - 3)), "m.ply: truncated: the data ends in element \"face\" 1 of 2");
  std::string past = good;
  past[past.size() - 8] = 7;  // the low byte of the triangle's last index, 4 -> 7
  EXPECT_EQ(ErrorOf(past), "m.ply: face 1: vertex index 7 is out of range (the file has 5 vertices)");
  std::string ascii = kAsciiMesh;
  ascii.replace(ascii.find("3 3 2 4 9"), 9, "3 3 2 -1 9");
  EXPECT_EQ(ErrorOf(ascii), "m.ply:23: face 1: vertex index -1 is out of range (the file has 5 vertices)");
  ascii = kAsciiMesh;
  ascii.replace(ascii.find("1 1 0  0 0 1"), 1, "1.2.3");
  EXPECT_EQ(ErrorOf(ascii), "m.ply:19: \"1.2.3\" is not a number (element \"vertex\" 2 of 5)");
  ascii = kAsciiMesh;
  ascii.replace(ascii.find("3 3 2 4 9"), 1, "2.5");
  EXPECT_EQ(ErrorOf(ascii), "m.ply:23: \"2.5\" is not an integer (element \"face\" 1 of 2)");
  ascii = kAsciiMesh;
  EXPECT_EQ(ErrorOf(ascii.substr(0, ascii.find("3 3 2 4 9"))),
            "m.ply:23: truncated: the data ends in element \"face\" 1 of 2");
}

class PlyFiles : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::MakeTempDir(); }
  void TearDown() override { test::RemoveTree(dir_); }
  // The message of ReadPly's PlyError for the file, or "" when it reads.
  std::string ReadError(const std::string& name) {
    try {
      ReadPly(dir_ + "/" + name);
    } catch (const PlyError& e) {
      return e.what();
    }
    return "";
  }
  std::string dir_;
};

TEST_F(PlyFiles, ReadsFilesAndGzip) {
  test::WriteFile(dir_ + "/m.ply", BinaryMesh(false, false, false));
  ExpectTheMesh(ReadPly(dir_ + "/m.ply"));
  if (std::system(("gzip -k '" + dir_ + "/m.ply' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "the gzip tool is not installed: cannot make a .ply.gz";
  if (!GzipSupported()) {
    EXPECT_TRUE(Contains(ReadError("m.ply.gz"), "no zlib"));
    return;
  }
  ExpectTheMesh(ReadPly(dir_ + "/m.ply.gz"));
  // A cut-off gzip stream is an error, not a short mesh.
  const std::string gz = test::ReadFile(dir_ + "/m.ply.gz");
  test::WriteFile(dir_ + "/cut.ply.gz", gz.substr(0, gz.size() / 2));
  EXPECT_TRUE(Contains(ReadError("cut.ply.gz"), dir_ + "/cut.ply.gz: "));
}

TEST_F(PlyFiles, MissingFileIsNamed) { EXPECT_TRUE(Contains(ReadError("none.ply"), dir_ + "/none.ply: cannot open")); }

TEST(PlyReader, LargeGrid) {
  // A 300 x 300 grid of quads in binary: every vertex and index where it belongs.
  const int n = 300;
  Bytes b{false, "ply\nformat binary_little_endian 1.0\nelement vertex " + std::to_string(n * n) +
                     "\nproperty float x\nproperty float y\nproperty float z\nelement face " +
                     std::to_string((n - 1) * (n - 1)) + "\nproperty list uchar int vertex_indices\nend_header\n"};
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) b.Put<float>(static_cast<float>(i)).Put<float>(static_cast<float>(j)).Put<float>(0);
  for (int j = 0; j + 1 < n; ++j)
    for (int i = 0; i + 1 < n; ++i)
      b.Put<uint8_t>(4)
          .Put<int32_t>(j * n + i)
          .Put<int32_t>(j * n + i + 1)
          .Put<int32_t>((j + 1) * n + i + 1)
          .Put<int32_t>((j + 1) * n + i);
  PlyMesh m = ParsePly(b.data, "grid.ply");
  ASSERT_EQ(m.NumVertices(), static_cast<size_t>(n * n));
  ASSERT_EQ(m.NumTriangles(), static_cast<size_t>(2 * (n - 1) * (n - 1)));
  const size_t last = m.NumVertices() - 1;
  EXPECT_EQ(m.positions[3 * last], n - 1.0f);
  EXPECT_EQ(m.positions[3 * last + 1], n - 1.0f);
  const size_t t = m.NumTriangles() - 1;  // the last quad's second triangle: (a, c, d)
  EXPECT_EQ(m.indices[3 * t], (n - 2) * n + n - 2);
  EXPECT_EQ(m.indices[3 * t + 1], (n - 1) * n + n - 1);
  EXPECT_EQ(m.indices[3 * t + 2], (n - 1) * n + n - 2);
}

}  // namespace
}  // namespace tracer
