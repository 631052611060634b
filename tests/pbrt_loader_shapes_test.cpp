// @file pbrt_loader_shapes_test.cpp: pbrt-v4 shapes as the loader turns them into world-space triangles: counts,
// positions and normals through transforms, the surface normal's side (ReverseOrientation, handedness, "N"), the
// tessellated sphere and disk, PLY meshes, instances, alpha cut-outs, and the error for a missing mesh.
#include <gtest/gtest.h>

#include <cmath>

#include "pbrt_loader_test_util.h"

namespace tracer {
namespace {

using test::NearVec;
using test::PbrtDir;
using test::WindingNormal;

constexpr const char* kTriangle =
    "Shape \"trianglemesh\" \"point3 P\" [0 0 0 1 0 0 0 1 0] \"integer indices\" [0 1 2]\n";

TEST(PbrtLoaderShapes, TriangleMeshInWorldSpace) {
  PbrtDir dir;
  const Scene s = dir.LoadLit(
      "AttributeBegin\nTranslate 1 2 3\nScale 2 2 2\n"
      "Shape \"trianglemesh\" \"point3 P\" [0 0 0 1 0 0 1 1 0 0 1 0] \"integer indices\" [0 1 2 0 2 3]\n"
      "AttributeEnd\n");
  ASSERT_EQ(s.NumTriangles(), 3u);
  EXPECT_TRUE(NearVec(s.positions[0], Vec3(1, 2, 3), 1e-6f));
  EXPECT_TRUE(NearVec(s.positions[1], Vec3(3, 2, 3), 1e-6f));
  EXPECT_TRUE(NearVec(s.positions[2], Vec3(3, 4, 3), 1e-6f));
  EXPECT_TRUE(NearVec(s.positions[5], Vec3(1, 4, 3), 1e-6f));
  // Without "N": the face normal, on the winding's side (+z), and pbrt's default uvs (0,0) (1,0) (1,1).
  for (int c = 0; c < 3; ++c) EXPECT_TRUE(NearVec(s.normals[size_t(c)], Vec3(0, 0, 1), 1e-6f));
  const float uv[6] = {0, 0, 1, 0, 1, 1};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(s.uvs[size_t(i)], uv[i]);
  EXPECT_TRUE(NearVec(s.boundsMin, Vec3(0, 2, 0), 1e-6f));  // the light's corner at x = 0 and the mesh
  EXPECT_TRUE(NearVec(s.boundsMax, Vec3(3, 5, 3), 1e-6f));
}

TEST(PbrtLoaderShapes, NormalsThroughTheInverseTranspose) {
  PbrtDir dir;
  // Scale 2 1 1 turns the normal (1, 1, 0)/sqrt2 of the plane x + y = 1 into (1/2, 1, 0) normalised.
  const Scene s = dir.LoadLit(
      "Scale 2 1 1\n"
      "Shape \"trianglemesh\" \"point3 P\" [1 0 0 0 1 0 1 0 1] \"integer indices\" [0 1 2]"
      " \"normal N\" [0.7071068 0.7071068 0 0.7071068 0.7071068 0 0.7071068 0.7071068 0]\n");
  const Vec3 expected = Normalize(Vec3(0.5f, 1.0f, 0.0f));
  for (int c = 0; c < 3; ++c) EXPECT_TRUE(NearVec(s.normals[size_t(c)], expected, 1e-6f));
  EXPECT_TRUE(NearVec(WindingNormal(s, 0), expected, 1e-6f)) << "the geometric normal agrees with the plane";
}

// The surface normal's side (what an area light emits to): the winding's, flipped by ReverseOrientation xor a
// handedness-swapping transform (pbrt-v4's Triangle), or turned to the side of "N" where the mesh has normals.
TEST(PbrtLoaderShapes, OrientationOfTriangles) {
  PbrtDir dir;
  struct Case {
    const char* state;
    float z;
  } cases[] = {{"", 1.0f},
               {"ReverseOrientation\n", -1.0f},
               // Handedness swapped: the world winding is flipped, which gives the object's normal transformed
               {"Scale 1 1 -1\n", -1.0f},  // the winding stays +z in the world: flipped to -z
               {"Scale -1 1 1\n", 1.0f},   // the winding turns to -z in the world: flipped back to +z
               {"ReverseOrientation\nScale -1 1 1\n", -1.0f}};
  for (const Case& c : cases) {
    const Scene s = dir.LoadLit(std::string("AttributeBegin\n") + c.state + kTriangle + "AttributeEnd\n");
    EXPECT_NEAR(WindingNormal(s, 0).z, c.z, 1e-6f) << c.state;
    EXPECT_NEAR(s.normals[0].z, c.z, 1e-6f) << c.state;
  }
  // With N, the normal follows N (the winding in the file is clockwise here), and ReverseOrientation negates N.
  const std::string withN =
      "Shape \"trianglemesh\" \"point3 P\" [0 0 0 0 1 0 1 0 0] \"integer indices\" [0 1 2] \"normal N\" [0 0 1 0 0 1 0 "
      "0 1]\n";
  Scene s = dir.LoadLit(withN);
  EXPECT_NEAR(WindingNormal(s, 0).z, 1.0f, 1e-6f);
  EXPECT_NEAR(s.normals[0].z, 1.0f, 1e-6f);
  EXPECT_EQ(s.uvs[2], 1.0f) << "the uvs move with their vertices: (1,0) goes with the second vertex, now third";
  s = dir.LoadLit("AttributeBegin\nReverseOrientation\n" + withN + "AttributeEnd\n");
  EXPECT_NEAR(WindingNormal(s, 0).z, -1.0f, 1e-6f);
  EXPECT_NEAR(s.normals[0].z, -1.0f, 1e-6f);
}

TEST(PbrtLoaderShapes, BilinearPatchIsTwoTriangles) {
  PbrtDir dir;
  const Scene s =
      dir.LoadLit("Shape \"bilinearmesh\" \"point3 P\" [0 0 0 2 0 0 0 3 0 2 3 0] \"integer indices\" [0 1 2 3]\n");
  ASSERT_EQ(s.NumTriangles(), 3u);
  for (size_t t = 0; t < 2; ++t) EXPECT_TRUE(NearVec(WindingNormal(s, t), Vec3(0, 0, 1), 1e-6f)) << "dp/du x dp/dv";
  double area = 0.0;
  for (size_t t = 0; t < 2; ++t)
    area +=
        0.5 * Length(Cross(s.positions[3 * t + 1] - s.positions[3 * t], s.positions[3 * t + 2] - s.positions[3 * t]));
  EXPECT_NEAR(area, 6.0, 1e-6);
  // Each corner keeps its default uv: p00 (0,0), p10 (1,0), p11 (1,1), p01 (0,1).
  for (size_t v = 0; v < 6; ++v) {
    const Vec3 p = s.positions[v];
    EXPECT_EQ(s.uvs[2 * v], p.x / 2.0f);
    EXPECT_EQ(s.uvs[2 * v + 1], p.y / 3.0f);
  }
}

TEST(PbrtLoaderShapes, SphereIsTessellatedOutwards) {
  PbrtDir dir;
  const Scene s = dir.LoadLit(
      "AttributeBegin\nTranslate 1 2 3\nShape \"sphere\" \"float radius\" 0.5\n"
      "AttributeEnd\n");
  ASSERT_GT(s.NumTriangles(), 100u);
  const Vec3 centre(1, 2, 3);
  double maxError = 0.0;
  for (size_t t = 1; t < s.NumTriangles(); ++t) {  // triangle 0 is the light: spheres are tessellated last
    for (int c = 0; c < 3; ++c) {
      const Vec3 p = s.positions[3 * t + size_t(c)];
      EXPECT_NEAR(Length(p - centre), 0.5f, 1e-5f);
      EXPECT_GT(Dot(s.normals[3 * t + size_t(c)], Normalize(p - centre)), 0.999f) << "the analytic normal";
    }
    const Vec3 mid = (s.positions[3 * t] + s.positions[3 * t + 1] + s.positions[3 * t + 2]) / 3.0f;
    EXPECT_GT(Dot(WindingNormal(s, t), mid - centre), 0.0f) << "outwards, as pbrt's dp/du x dp/dv";
    maxError = std::max(maxError, 0.5 - double(Length(mid - centre)));
  }
  // The tessellation follows the sphere to a small fraction of the scene's size (its sagitta bound is 1e-4 of the
  // diagonal; a triangle's centroid lies a little further in than its edges' midpoints).
  EXPECT_LT(maxError, 3e-4 * double(Length(s.boundsMax - s.boundsMin)));
}

TEST(PbrtLoaderShapes, SphereOrientationFollowsReverseOrientationOnly) {
  PbrtDir dir;
  // pbrt-v4's quadrics take the normal dp/du x dp/dv in world space, flipped under ReverseOrientation: a
  // handedness-swapping transform turns it inwards.
  const char* cases[] = {"ReverseOrientation\n", "Scale -1 1 1\n"};
  for (const char* state : cases) {
    const Scene s = dir.LoadLit(std::string("AttributeBegin\n") + state + "Shape \"sphere\"\nAttributeEnd\n");
    for (size_t t = 1; t < s.NumTriangles(); ++t) {  // triangle 0 is the light
      const Vec3 mid = (s.positions[3 * t] + s.positions[3 * t + 1] + s.positions[3 * t + 2]) / 3.0f;
      ASSERT_LT(Dot(WindingNormal(s, t), mid), 0.0f) << state << " triangle " << t;
      ASSERT_LT(Dot(s.normals[3 * t], mid), 0.0f) << state << " triangle " << t;
    }
  }
}

TEST(PbrtLoaderShapes, PartialSphereAndDisk) {
  PbrtDir dir;
  Scene s = dir.LoadLit("Shape \"sphere\" \"float radius\" 2 \"float zmin\" 0 \"float phimax\" 90\n");
  for (size_t v = 3; v < s.positions.size(); ++v) {  // after the light
    EXPECT_GE(s.positions[v].z, -1e-6f);
    EXPECT_GE(s.positions[v].x, -1e-6f);
    EXPECT_GE(s.positions[v].y, -1e-6f);
  }
  s = dir.LoadLit("Shape \"disk\" \"float radius\" 2 \"float innerradius\" 1 \"float height\" 0.5\n");
  for (size_t t = 1; t < s.NumTriangles(); ++t) {
    EXPECT_TRUE(NearVec(WindingNormal(s, t), Vec3(0, 0, 1), 1e-5f)) << "a disk faces +z";
    for (int c = 0; c < 3; ++c) {
      const Vec3 p = s.positions[3 * t + size_t(c)];
      EXPECT_NEAR(p.z, 0.5f, 1e-6f);
      const float r = std::hypot(p.x, p.y);
      EXPECT_TRUE(std::fabs(r - 2.0f) < 1e-5f || std::fabs(r - 1.0f) < 1e-5f) << r;
    }
  }
}

TEST(PbrtLoaderShapes, PlyMesh) {
  PbrtDir dir;
  test::WriteFile(dir.File("quad.ply"),
                  "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n"
                  "element face 1\nproperty list uchar int vertex_indices\nend_header\n"
                  "0 0 0\n1 0 0\n1 1 0\n0 1 0\n4 0 1 2 3\n");
  const Scene s = dir.LoadLit("Translate 0 0 2\nShape \"plymesh\" \"string filename\" \"quad.ply\"\n");
  ASSERT_EQ(s.NumTriangles(), 3u);
  EXPECT_TRUE(NearVec(s.positions[2], Vec3(1, 1, 2), 1e-6f));
}

TEST(PbrtLoaderShapes, MissingPlyIsAnErrorNamingTheMeshAndTheLine) {
  PbrtDir dir;
  const std::string message = dir.ErrorOf("WorldBegin\n\nShape \"plymesh\" \"string filename\" \"models/gone.ply\"\n");
  EXPECT_NE(message.find("s.pbrt:3: plymesh \"models/gone.ply\""), std::string::npos) << message;
  EXPECT_NE(message.find("not found"), std::string::npos) << message;
}

TEST(PbrtLoaderShapes, InstancesAreFlattenedWithANote) {
  PbrtDir dir;
  const Scene s = dir.LoadLit(std::string("ObjectBegin \"tri\"\n") + kTriangle +
                              "ObjectEnd\n"
                              "ObjectInstance \"tri\"\nTranslate 5 0 0\nObjectInstance \"tri\"\nTranslate 5 0 0\n"
                              "ObjectInstance \"tri\"\n");
  EXPECT_EQ(s.NumTriangles(), 4u);
  EXPECT_TRUE(NearVec(s.positions[3 * 3 + 1], Vec3(11, 0, 0), 1e-6f)) << "the scene's own shapes come first";
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("3 object instances flattened into 3 shape copies"), std::string::npos) << s.notes[0];
}

TEST(PbrtLoaderShapes, AlphaIsACutout) {
  PbrtDir dir;
  const Scene s = dir.LoadLit(
      "Shape \"trianglemesh\" \"point3 P\" [0 0 0 1 0 0 0 1 0] \"integer indices\" [0 1 2] \"float alpha\" 0.25\n" +
      std::string(kTriangle));
  EXPECT_EQ(test::MaterialOf(s, 0).opacity, 0.25f);
  EXPECT_EQ(test::MaterialOf(s, 1).opacity, 1.0f) << "the same material without alpha is a material of its own";
  EXPECT_NE(s.triMaterial[0], s.triMaterial[1]);
}

TEST(PbrtLoaderShapes, InterfaceShapesAreLeftOutWithAWarning) {
  PbrtDir dir;
  const Scene s = dir.LoadLit(std::string("AttributeBegin\nMaterial \"interface\"\n") + kTriangle + "AttributeEnd\n");
  EXPECT_EQ(s.NumTriangles(), 1u);
  EXPECT_EQ(test::CountWarnings(s, "s.pbrt:3: material (interface)"), 1u) << test::AllWarnings(s);
}

TEST(PbrtLoaderShapes, UnsupportedShapesWarnOncePerKind) {
  PbrtDir dir;
  const Scene s =
      dir.LoadLit("Shape \"cylinder\"\nShape \"cylinder\"\nShape \"curve\" \"point3 P\" [0 0 0 1 0 0 1 1 0 0 1 0]\n");
  EXPECT_EQ(test::CountWarnings(s, "s.pbrt:2: shape \"cylinder\" is not rendered yet"), 1u) << test::AllWarnings(s);
  EXPECT_EQ(test::CountWarnings(s, "(1 more like it)"), 1u) << test::AllWarnings(s);
  EXPECT_EQ(test::CountWarnings(s, "s.pbrt:4: shape \"curve\""), 1u) << test::AllWarnings(s);
}

}  // namespace
}  // namespace tracer
