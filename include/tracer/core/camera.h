// @file camera.h: the camera (a pinhole, or a thin lens for depth of field) and primary-ray generation.
#pragma once
#include "tracer/core/ray.h"
#include "tracer/core/sampling.h"

namespace tracer {

// The thin lens (Kolb, Mitchell and Hanrahan 1995; Pharr, Jakob and Humphreys, "Physically Based Rendering",
// section 5.2.3): rays start on a disk of radius lensRadius around the eye, perpendicular to the view, and pass
// through the point that the pinhole ray of the same image position reaches on the plane at focusDistance along
// the view. Points on that plane are sharp; a point at depth z (along the view) images as a disk whose radius, on
// the focus plane, is lensRadius * |1 - focusDistance / z|, which is
//   lensRadius * |1 - focusDistance / z| * height / (2 * focusDistance * tan(fovY / 2))   pixels.
// lensRadius 0 is the pinhole, exactly (the same rays, bit for bit).
struct Camera {
  Vec3 eye;
  Vec3 u, v, w;  // right, up, forward (unit), scaled below
  float tanHalfFovY;
  float aspect;
  int32_t width, height;
  float lensRadius = 0.0f;     // 0: pinhole
  float focusDistance = 1.0f;  // along w

  // vertical field of view in degrees; focusDistance <= 0: the distance from eye to target
  static Camera LookAt(Vec3 eye, Vec3 target, Vec3 up, float fovYDeg, int width, int height, float lensRadius = 0.0f,
                       float focusDistance = 0.0f) {
    Camera c;
    c.lensRadius = lensRadius;
    c.focusDistance = focusDistance > 0.0f ? focusDistance : Length(target - eye);
    c.eye = eye;
    c.w = Normalize(target - eye);
    c.u = Normalize(Cross(c.w, up));
    c.v = Cross(c.u, c.w);
    c.tanHalfFovY = tanf(0.5f * fovYDeg * kPi / 180.0f);
    c.aspect = static_cast<float>(width) / static_cast<float>(height);
    c.width = width;
    c.height = height;
    return c;
  }

  // Ray through pixel (px, py) + (jx, jy) with jitter in [0,1); y grows downwards in the image. (lu, lv) in [0,1)
  // pick the point on the lens (unused by the pinhole).
  TRACER_HD Ray Generate(int px, int py, float jx, float jy, float lu = 0.5f, float lv = 0.5f) const {
    float sx = (2.0f * (static_cast<float>(px) + jx) / static_cast<float>(width) - 1.0f) * tanHalfFovY * aspect;
    float sy = (1.0f - 2.0f * (static_cast<float>(py) + jy) / static_cast<float>(height)) * tanHalfFovY;
    Ray r;
    r.o = eye;
    r.d = Normalize(w + u * sx + v * sy);
    if (lensRadius > 0.0f) {
      float x, y;
      SampleConcentricDisk(lu, lv, x, y);
      const Vec3 focus = eye + (w + u * sx + v * sy) * focusDistance;
      r.o = eye + (u * x + v * y) * lensRadius;
      r.d = Normalize(focus - r.o);
    }
    r.tmax = kInf;
    r.index = 0;
    return r;
  }
};

}  // namespace tracer
