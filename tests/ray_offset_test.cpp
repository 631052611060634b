// @file ray_offset_test.cpp: the offset of spawned rays off their surface (OffsetRayOrigin, RayOffsetFloor in
// core/math.h): a surface 20 um behind a glass pane, in a CPU render of a scene one unit across, is seen (a fixed
// offset floor of 1e-4 units started the refracted rays behind it), and rays leaving a plane through the origin of a
// small scene do not hit it again (the floor still keeps them off their own triangle there).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "pbrt_loader_test_util.h"
#include "tracer/core/math.h"
#include "tracer/host/backends.h"
#include "tracer/host/scene_data.h"

namespace tracer {
namespace {

using test::PbrtDir;

// The image's mean of the first channel, at 16 x 16 pixels.
double RenderMean(const Scene& s, Vec3 environment, int spp, int maxDepth) {
  return test::RenderMean(s, environment, spp, maxDepth, 16).mean;
}

std::string Square(double s, double d) { return test::PbrtSquare(s, d); }

TEST(RayOffset, FloorIsOnePercentOfASmallSceneAndOneUnitPastAHundred) {
  EXPECT_FLOAT_EQ(RayOffsetFloor(Vec3(-0.5f, 0.0f, -0.25f), Vec3(0.25f, 0.3f, 0.1f)), 0.005f);
  EXPECT_FLOAT_EQ(RayOffsetFloor(Vec3(0.0f), Vec3(556.0f, 548.8f, 559.2f)), 1.0f);  // the Cornell box: as before
  EXPECT_FLOAT_EQ(RayOffsetFloor(Vec3(0.0f), Vec3(0.0f)), 1.0f);                    // nothing to scale by
  // 1e-4 of the larger of the floor and the position's largest coordinate, along the normal turned to the ray.
  const Vec3 o = OffsetRayOrigin(Vec3(0.0f, 0.0f, 0.07f), Vec3(0.0f, 0.0f, 1.0f), Vec3(0.0f, 0.0f, -1.0f), 0.005f);
  EXPECT_FLOAT_EQ(o.z, 0.07f - 7e-6f);
  EXPECT_FLOAT_EQ(OffsetRayOrigin(Vec3(0.0f), Vec3(1.0f, 0.0f, 0.0f), Vec3(1.0f, 0.0f, 0.0f), 0.005f).x, 5e-7f);
}

TEST(RayOffset, ASurfaceJustBehindGlassIsSeen) {
  // A scene 1 unit across (pbrt units read as metres): a smooth glass pane at z = 0.05, its outside towards the
  // camera, with a black diffuse square 20 um behind it, and behind both an emitter of radiance 1 filling the view.
  // The glass reflects R = 0.04 towards the black sky and refracts the rest onto the black square: the image is
  // black. An offset of 1e-4 units (the old fixed floor) starts the refracted rays behind the square, and they find
  // the emitter: (1 - R) / eta^2 = 0.43.
  PbrtDir dir;
  const Scene s = dir.Load(
      "Scale -1 1 1 Camera \"perspective\" \"float fov\" 5 WorldBegin\n"
      "AttributeBegin Material \"dielectric\" \"float eta\" 1.5 ReverseOrientation\n" +
      Square(0.02, 0.05) +
      "AttributeEnd\n"
      "AttributeBegin Material \"diffuse\" \"rgb reflectance\" [0 0 0]\n" +
      Square(0.02, 0.05002) +
      "AttributeEnd\n"
      "AttributeBegin AreaLightSource \"diffuse\" \"rgb L\" [1 1 1] ReverseOrientation\n"
      "Material \"diffuse\" \"rgb reflectance\" [0 0 0]\n" +
      Square(0.5, 1.0) + "AttributeEnd\n");
  EXPECT_LT(RenderMean(s, Vec3(0.0f), 16, 4), 1e-3) << "the refracted rays passed the surface 20 um behind the glass";
}

TEST(RayOffset, RaysLeavingAPlaneNearTheOriginDoNotHitIt) {
  // A square of half-side 1 through the origin, tilted, alone in a scene 2 units across: where it meets the origin a
  // hit point is near 0 but its rounding error is that of vertices 1 away, which the floor (0.01 here) stands for.
  // From the hits of camera rays within 0.02 of the origin, rays offset by OffsetRayOrigin in directions over the
  // whole hemisphere (down to 0.1 degree from grazing) must leave the plane: any hit is the plane hitting itself.
  PbrtDir dir;
  const Scene scene = dir.Load(
      "Scale -1 1 1 LookAt 0 0 -0.5  0 0 0  0 1 0 Camera \"perspective\" \"float fov\" 4\n"
      "WorldBegin\nRotate 37 1 0.3 0\nMaterial \"diffuse\"\n" +
      Square(1.0, 0.0));
  const int w = 64, h = 64;
  const SceneData data = test::BuildWithSceneCamera(scene, w, h, BvhBuildOptions{}, Vec3(1.0f));
  const SceneView s = data.View();
  EXPECT_FLOAT_EQ(s.offsetFloor, RayOffsetFloor(data.boundsMin, data.boundsMax));
  int selfHits = 0, rays = 0;
  for (int py = 0; py < h; ++py)
    for (int px = 0; px < w; ++px) {
      const HitRecord hit = BinaryBvhTraversal::Trace<false, false>(s, s.camera.Generate(px, py, 0.5f, 0.5f));
      ASSERT_GE(hit.tri, 0) << "the view is all plane";
      const Surface sf = GetSurface<false>(s, hit);
      const Vec3 n = Dot(sf.ng, s.camera.Generate(px, py, 0.5f, 0.5f).d) > 0.0f ? -sf.ng : sf.ng;
      const Frame f = Frame::FromNormal(n);
      for (int k = 0; k < 64; ++k) {
        const float phi = 6.2831853f * float(k) / 64.0f, z = std::max(0.00175f, float((k * 37) % 64) / 64.0f);
        const float r = std::sqrt(1.0f - z * z);
        Ray q;
        q.d = f.ToWorld(Vec3(r * std::cos(phi), r * std::sin(phi), z));
        q.o = OffsetRayOrigin(sf.p, n, q.d, s.offsetFloor);
        q.tmax = kInf;
        q.index = 0;
        selfHits += BinaryBvhTraversal::Trace<true, false>(s, q).tri >= 0 ? 1 : 0;
        ++rays;
      }
    }
  EXPECT_EQ(selfHits, 0) << "of " << rays << " rays leaving the plane near the origin";
}

}  // namespace
}  // namespace tracer
