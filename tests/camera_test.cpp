// @file camera_test.cpp: the pinhole camera's geometry on non-square images: vertical field of view, aspect and
// orientation. Square images alone cannot tell a swapped aspect or a horizontal fov from the right one.
#include "tracer/core/camera.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tracer;

namespace {

constexpr double kDeg = 3.14159265358979323846 / 180.0;

double AngleDeg(Vec3 a, Vec3 b) {
  const double c = Dot(a, b) / (Length(a) * Length(b));
  return std::acos(std::fmax(-1.0, std::fmin(1.0, c))) / kDeg;
}

// Edge rays of a width x height image whose camera looks along +z with up +y: the ray through the middle of
// the top edge is fov/2 from forward (and tilts up), the one through the middle of the right edge is
// atan(aspect * tan(fov/2)) (and points right, -x for a right-handed frame looking along +z with up +y).
void CheckEdges(int width, int height, float fovDeg) {
  const Vec3 forward(0, 0, 1);
  Camera c = Camera::LookAt(Vec3(0, 0, 0), forward, Vec3(0, 1, 0), fovDeg, width, height);
  const double aspect = static_cast<double>(width) / height;
  const double half = 0.5 * fovDeg;
  const double halfH = std::atan(aspect * std::tan(half * kDeg)) / kDeg;
  SCOPED_TRACE(::testing::Message() << width << "x" << height << " fov " << fovDeg);
  // Pixel corners: (px + jx) / width = 0.5 and (py + jy) / height = 0 is the middle of the top edge.
  const Ray top = c.Generate(width / 2, 0, width % 2 ? 0.5f : 0.0f, 0.0f);
  EXPECT_NEAR(AngleDeg(top.d, forward), half, 1e-3);
  EXPECT_GT(top.d.y, 0.0f) << "row 0 is the top of the image";
  EXPECT_NEAR(top.d.x, 0.0f, 1e-6f);
  const Ray bottom = c.Generate(width / 2, height - 1, width % 2 ? 0.5f : 0.0f, 1.0f);
  EXPECT_NEAR(AngleDeg(bottom.d, forward), half, 1e-3);
  EXPECT_LT(bottom.d.y, 0.0f);
  const Ray right = c.Generate(width - 1, height / 2, 1.0f, height % 2 ? 0.5f : 0.0f);
  EXPECT_NEAR(AngleDeg(right.d, forward), halfH, 1e-3) << "horizontal half-angle from the aspect";
  EXPECT_NEAR(right.d.y, 0.0f, 1e-6f);
  const Ray left = c.Generate(0, height / 2, 0.0f, height % 2 ? 0.5f : 0.0f);
  EXPECT_NEAR(AngleDeg(left.d, forward), halfH, 1e-3);
  EXPECT_LT(left.d.x * right.d.x, 0.0f) << "left and right edges point to opposite sides";
  // The camera's right vector: a ray through the right half of the image leans toward it.
  EXPECT_GT(Dot(right.d, c.u), 0.0f);
}

}  // namespace

TEST(Camera, EdgeRaysOfWideImages) {
  CheckEdges(640, 360, 45.0f);
  CheckEdges(1920, 1080, 39.3f);
  CheckEdges(301, 101, 60.0f);  // odd sizes: the edge middles fall inside pixels
}

TEST(Camera, EdgeRaysOfTallImages) {
  CheckEdges(360, 640, 45.0f);
  CheckEdges(99, 257, 20.0f);
}

TEST(Camera, CentreRayIsForward) {
  Camera c = Camera::LookAt(Vec3(1, 2, 3), Vec3(4, 2, 3), Vec3(0, 1, 0), 50.0f, 200, 100);
  const Ray r = c.Generate(100, 50, 0.0f, 0.0f);
  EXPECT_NEAR(AngleDeg(r.d, Vec3(1, 0, 0)), 0.0, 1e-3);
  EXPECT_EQ(r.o.x, 1.0f);
}
