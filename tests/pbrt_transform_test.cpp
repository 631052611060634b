// @file pbrt_transform_test.cpp: the pbrt parser's transforms against hand-computed matrices (Translate, Scale,
// Rotate, LookAt, Transform, ConcatTransform), the camera transform, named coordinate systems, animated transforms,
// and object instancing flattened to world space.
#include <gtest/gtest.h>

#include <cmath>

#include "pbrt_test_util.h"

namespace tracer {
namespace {

using test::Contains;
using test::Near;
using test::ParsePbrt;
using test::ParseWorld;
using test::PbrtErrorOf;
using test::Rows;

TEST(PbrtTransform, TranslateScaleCompose) {
  PbrtScene s = ParseWorld("Translate 1 2 3\nScale 2 4 8\nShape \"sphere\"\n");
  const PbrtTransform& t = s.shapes[0].objectToWorld;
  // pbrt appends on the right: the CTM is T * S, so the point is scaled first.
  EXPECT_TRUE(Near(t, Rows({{{2, 0, 0, 1}, {0, 4, 0, 2}, {0, 0, 8, 3}, {0, 0, 0, 1}}})));
  EXPECT_TRUE(Near(t.ApplyPoint({1, 1, 1}), {3, 6, 11}));
  EXPECT_TRUE(Near(t.ApplyVector({1, 1, 1}), {2, 4, 8}));
}

TEST(PbrtTransform, RotateInDegreesByTheRightHandRule) {
  PbrtScene s = ParseWorld(
      "Rotate 90 0 0 1\nShape \"a\"\nIdentity\nRotate 120 1 1 1\nShape \"b\"\n"
      "Identity\nRotate 30 2 0 0\nShape \"c\"\n");
  EXPECT_TRUE(Near(s.shapes[0].objectToWorld, Rows({{{0, -1, 0, 0}, {1, 0, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}})));
  EXPECT_TRUE(Near(s.shapes[0].objectToWorld.ApplyPoint({1, 0, 0}), {0, 1, 0}));
  // 120 degrees about (1, 1, 1) carries x to y, y to z, z to x.
  EXPECT_TRUE(Near(s.shapes[1].objectToWorld, Rows({{{0, 0, 1, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 0, 1}}})));
  // The axis is normalised: 30 degrees about x.
  const double c = std::cos(M_PI / 6), sn = std::sin(M_PI / 6);
  EXPECT_TRUE(Near(s.shapes[2].objectToWorld, Rows({{{1, 0, 0, 0}, {0, c, -sn, 0}, {0, sn, c, 0}, {0, 0, 0, 1}}})));
  EXPECT_EQ(PbrtErrorOf("Rotate 10 0 0 0"), "s.pbrt:1: Rotate: the rotation axis is zero");
}

TEST(PbrtTransform, TransformListsColumnsAndConcatMultipliesOnTheRight) {
  PbrtScene s = ParseWorld(
      "Transform [ 1 0 0 0  0 1 0 0  0 0 1 0  5 6 7 1 ]\nShape \"a\"\n"
      "ConcatTransform [ 2 0 0 0  0 2 0 0  0 0 2 0  0 0 0 1 ]\nShape \"b\"\n"
      "Transform [ 0 1 0 0  -1 0 0 0  0 0 1 0  0 0 0 1 ]\nShape \"c\"\n");
  EXPECT_TRUE(Near(s.shapes[0].objectToWorld, PbrtTransform::Translate(5, 6, 7)));
  EXPECT_TRUE(Near(s.shapes[1].objectToWorld, Rows({{{2, 0, 0, 5}, {0, 2, 0, 6}, {0, 0, 2, 7}, {0, 0, 0, 1}}})));
  // The first four numbers are the first column: x goes to (0, 1, 0).
  EXPECT_TRUE(Near(s.shapes[2].objectToWorld.ApplyVector({1, 0, 0}), {0, 1, 0}));
  EXPECT_EQ(PbrtErrorOf("Transform [ 1 0 0 0 1 ]"), "s.pbrt:1: Transform: expected a number, found ']'");
}

TEST(PbrtTransform, LookAtBuildsWorldToCamera) {
  PbrtScene s = ParsePbrt("LookAt 0 0 -5  0 0 0  0 1 0\nCamera \"perspective\" \"float fov\" 45\nWorldBegin\n");
  // Looking down +z from z = -5: camera space is world space moved by 5 along z.
  EXPECT_TRUE(Near(s.camera.cameraFromWorld, PbrtTransform::Translate(0, 0, 5)));
  EXPECT_TRUE(Near(s.camera.worldFromCamera, PbrtTransform::Translate(0, 0, -5)));

  // Looking along +x with +z up: the camera's +x (right) is up x dir = y, its +y is z, its +z is x. Left-handed.
  PbrtScene t = ParsePbrt("LookAt 1 2 3  2 2 3  0 0 1\nCamera \"perspective\"\nWorldBegin\n");
  EXPECT_TRUE(Near(t.camera.cameraFromWorld, Rows({{{0, 1, 0, -2}, {0, 0, 1, -3}, {1, 0, 0, -1}, {0, 0, 0, 1}}})));
  EXPECT_TRUE(Near(t.camera.cameraFromWorld.ApplyPoint({2, 2, 3}), {0, 0, 1}));
  EXPECT_TRUE(Near(t.camera.worldFromCamera.ApplyPoint({0, 0, 0}), {1, 2, 3}));
  EXPECT_GT(t.camera.cameraFromWorld.Determinant3(), 0.0);

  EXPECT_EQ(PbrtErrorOf("LookAt 0 0 0  0 0 1  0 0 2"),
            "s.pbrt:1: LookAt: the up vector is parallel to the viewing direction");
  EXPECT_EQ(PbrtErrorOf("\nLookAt 1 1 1  1 1 1  0 1 0"),
            "s.pbrt:2: LookAt: the eye and the look-at point are the same");
}

TEST(PbrtTransform, CameraTransformAndTheCameraCoordinateSystem) {
  PbrtScene s = ParsePbrt(
      "Scale -1 1 1\n"
      "Translate 0 0 10\n"
      "Camera \"perspective\"\n"
      "WorldBegin\n"
      "Shape \"a\"\n"
      "CoordSysTransform \"camera\"\n"
      "Shape \"b\"\n");
  const PbrtTransform cameraFromWorld = PbrtTransform::Scale(-1, 1, 1) * PbrtTransform::Translate(0, 0, 10);
  EXPECT_TRUE(Near(s.camera.cameraFromWorld, cameraFromWorld));
  EXPECT_TRUE(Near(s.camera.worldFromCamera * cameraFromWorld, PbrtTransform()));
  EXPECT_TRUE(s.camera.cameraFromWorld.SwapsHandedness());
  // WorldBegin resets the CTM; CoordSysTransform "camera" puts what follows in the camera's frame.
  EXPECT_TRUE(s.shapes[0].objectToWorld.IsIdentity());
  EXPECT_TRUE(Near(s.shapes[1].objectToWorld, s.camera.worldFromCamera));
  EXPECT_TRUE(Near(s.shapes[1].objectToWorld.ApplyPoint({0, 0, 0}), {0, 0, -10}));
  EXPECT_TRUE(Near(s.coordinateSystems.at("camera"), s.camera.worldFromCamera));
  EXPECT_TRUE(s.coordinateSystems.at("world").IsIdentity());
  EXPECT_EQ(PbrtErrorOf("Scale 0 1 1\nCamera \"perspective\""),
            "s.pbrt:2: the transform at Camera (world to camera) is singular");
}

TEST(PbrtTransform, NamedCoordinateSystems) {
  PbrtScene s = ParseWorld(
      "Translate 1 0 0\n"
      "CoordinateSystem \"here\"\n"
      "Identity\n"
      "Scale 3 3 3\n"
      "Shape \"a\"\n"
      "CoordSysTransform \"here\"\n"
      "Shape \"b\"\n"
      "CoordSysTransform \"nowhere\"\n"
      "Shape \"c\"\n");
  EXPECT_TRUE(Near(s.shapes[0].objectToWorld, PbrtTransform::Scale(3, 3, 3)));
  EXPECT_TRUE(Near(s.shapes[1].objectToWorld, PbrtTransform::Translate(1, 0, 0)));
  EXPECT_TRUE(Near(s.shapes[2].objectToWorld, PbrtTransform::Translate(1, 0, 0)));  // unknown: unchanged
  EXPECT_TRUE(Near(s.coordinateSystems.at("here"), PbrtTransform::Translate(1, 0, 0)));
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_TRUE(Contains(s.warnings[0], "s.pbrt:9: CoordSysTransform: no coordinate system named \"nowhere\""));
}

TEST(PbrtTransform, AnimatedTransformsAreFlattenedToTheStart) {
  PbrtScene s = ParsePbrt(
      "TransformTimes 0 1\n"
      "WorldBegin\n"
      "ActiveTransform EndTime\n"
      "Translate 0 0 4\n"
      "ActiveTransform All\n"
      "Shape \"a\"\n"
      "ActiveTransform StartTime\n"
      "Translate 0 0 4\n"
      "ActiveTransform All\n"
      "Scale 2 2 2\n"
      "Shape \"b\"\n");
  EXPECT_TRUE(s.shapes[0].animated);
  EXPECT_TRUE(s.shapes[0].objectToWorld.IsIdentity());  // the start: no translation
  EXPECT_FALSE(s.shapes[1].animated);                   // both times now have the translation
  EXPECT_TRUE(Near(s.shapes[1].objectToWorld, PbrtTransform::Translate(0, 0, 4) * PbrtTransform::Scale(2, 2, 2)));
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_TRUE(Contains(s.warnings[0], "s.pbrt:6: animated transforms are not supported"));
}

TEST(PbrtTransform, NormalsInverseAndHandedness) {
  const PbrtTransform t = PbrtTransform::Scale(2, 1, 1) * PbrtTransform::Rotate(45, 0, 0, 1);
  // A surface's tangent and normal stay perpendicular after a non-uniform scale.
  const PbrtVec3 tangent = t.ApplyVector({1, -1, 0}), normal = t.ApplyNormal({1, 1, 0});
  EXPECT_NEAR(tangent[0] * normal[0] + tangent[1] * normal[1] + tangent[2] * normal[2], 0.0, 1e-12);
  EXPECT_TRUE(Near(t * t.Inverse(), PbrtTransform(), 1e-12));
  EXPECT_TRUE(PbrtTransform::Scale(1, -1, 1).SwapsHandedness());
  EXPECT_FALSE(t.SwapsHandedness());
  EXPECT_THROW(PbrtTransform::Scale(1, 0, 1).Inverse(), std::domain_error);
}

TEST(PbrtTransform, ObjectInstancesFlatten) {
  PbrtScene s = ParseWorld(
      "Material \"conductor\"\n"
      "AttributeBegin\n"
      "  Translate 0 1 0\n"  // the CTM at ObjectBegin is part of the object's shapes
      "  ObjectBegin \"pair\"\n"
      "    Material \"dielectric\"\n"
      "    Shape \"sphere\" \"float radius\" 0.5\n"
      "    Translate 2 0 0\n"
      "    Shape \"trianglemesh\" \"point3 P\" [ 0 0 0 1 0 0 0 1 0 ] \"integer indices\" [ 0 1 2 ]\n"
      "  ObjectEnd\n"
      "AttributeEnd\n"
      "Shape \"disk\"\n"
      "Translate 10 0 0\n"
      "ObjectInstance \"pair\"\n"
      "Identity\n"
      "Scale 2 2 2\n"
      "ObjectInstance \"pair\"\n");
  ASSERT_EQ(s.objects.size(), 1u);
  const PbrtObject& pair = s.objects[0];
  EXPECT_EQ(pair.name, "pair");
  EXPECT_EQ(pair.loc.line, 5);
  ASSERT_EQ(pair.shapes.size(), 2u);
  EXPECT_TRUE(Near(pair.shapes[1].objectToWorld, PbrtTransform::Translate(2, 1, 0)));
  EXPECT_EQ(s.materials[pair.shapes[0].material].type, "dielectric");
  ASSERT_EQ(s.shapes.size(), 1u);                                  // the object's shapes are not the world's
  EXPECT_EQ(s.materials[s.shapes[0].material].type, "conductor");  // ObjectEnd restored the material
  ASSERT_EQ(s.instances.size(), 2u);
  EXPECT_EQ(s.instances[0].object, 0);
  EXPECT_EQ(s.instances[1].loc.line, 17);

  PbrtFlatShapes flat = FlattenShapes(s);
  ASSERT_EQ(flat.shapes.size(), 5u);
  EXPECT_EQ(flat.instanceCopies, 4u);
  EXPECT_EQ(flat.shapes[0].shape, &s.shapes[0]);
  EXPECT_EQ(flat.shapes[0].instance, -1);
  EXPECT_EQ(flat.shapes[2].shape, &pair.shapes[1]);
  EXPECT_EQ(flat.shapes[2].instance, 0);
  EXPECT_TRUE(Near(flat.shapes[2].objectToWorld.ApplyPoint({0, 0, 0}), {12, 1, 0}));
  EXPECT_TRUE(Near(flat.shapes[4].objectToWorld.ApplyPoint({0, 0, 0}), {4, 2, 0}));
  EXPECT_TRUE(Near(flat.shapes[3].objectToWorld.ApplyPoint({1, 0, 0}), {2, 2, 0}));
  // Each copy of the mesh duplicates its 9 floats and 3 ints, the sphere its radius.
  const size_t perInstance = (9 + 1) * sizeof(double) + 3 * sizeof(int32_t);
  EXPECT_EQ(flat.bytes, 5 * sizeof(PbrtWorldShape) + 2 * perInstance);
  try {
    FlattenShapes(s, flat.bytes - 1);
    FAIL() << "no error";
  } catch (const PbrtError& e) {
    EXPECT_EQ(e.line, 17);  // the second instance crosses the limit
    EXPECT_TRUE(Contains(e.what(), "ObjectInstance \"pair\""));
  }
}

TEST(PbrtTransform, InstancingErrors) {
  const std::string w = "WorldBegin\n";
  const std::pair<std::string, std::string> kCases[] = {
      {w + "ObjectInstance \"ghost\"", "s.pbrt:2: ObjectInstance \"ghost\": no ObjectBegin defines it"},
      {w + "ObjectBegin \"a\"\nObjectBegin \"b\"", "s.pbrt:3: ObjectBegin \"b\" inside the definition of object \"a\""},
      {w + "ObjectBegin \"a\"\nObjectInstance \"a\"",
       "s.pbrt:3: ObjectInstance \"a\" inside the definition of object \"a\""},
      {w + "ObjectBegin \"a\"\nObjectEnd\nObjectBegin \"a\"\nObjectEnd",
       "s.pbrt:4: ObjectBegin: object \"a\" is already defined at s.pbrt:2"},
      {w + "ObjectEnd", "s.pbrt:2: ObjectEnd without a matching ObjectBegin"},
      {w + "ObjectBegin \"a\"\nAttributeBegin\nObjectEnd", "s.pbrt:4: ObjectEnd closes the AttributeBegin at s.pbrt:3"},
      {w + "AttributeBegin\nObjectBegin \"a\"\nAttributeEnd",
       "s.pbrt:4: AttributeEnd closes the ObjectBegin at s.pbrt:3"},
      {w + "ObjectBegin \"a\"\n", "s.pbrt:2: ObjectBegin is not closed before the end of the scene"},
  };
  for (const auto& [text, message] : kCases) EXPECT_EQ(PbrtErrorOf(text), message) << text;
  // An instance may come before its object's definition (pbrt-v4 resolves them at the end).
  PbrtScene s = ParseWorld("ObjectInstance \"late\"\nObjectBegin \"late\"\nShape \"sphere\"\nObjectEnd\n");
  EXPECT_EQ(s.instances[0].object, 0);
  PbrtScene lit = ParseWorld("AreaLightSource \"diffuse\"\nObjectBegin \"l\"\nShape \"sphere\"\nObjectEnd\n");
  ASSERT_EQ(lit.warnings.size(), 1u);
  EXPECT_TRUE(Contains(lit.warnings[0], "s.pbrt:4: area lights in object instances"));
}

}  // namespace
}  // namespace tracer
