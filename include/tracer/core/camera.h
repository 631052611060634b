// @file camera.h: the pinhole camera and primary-ray generation.
#pragma once
#include "tracer/core/ray.h"

namespace tracer {

struct Camera {
  Vec3 eye;
  Vec3 u, v, w;  // right, up, forward (unit), scaled below
  float tanHalfFovY;
  float aspect;
  int32_t width, height;

  // vertical field of view in degrees
  static Camera LookAt(Vec3 eye, Vec3 target, Vec3 up, float fovYDeg, int width, int height) {
    Camera c;
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

  // Ray through pixel (px, py) + (jx, jy) with jitter in [0,1); y grows downwards in the image.
  TRACER_HD Ray Generate(int px, int py, float jx, float jy) const {
    float sx = (2.0f * (static_cast<float>(px) + jx) / static_cast<float>(width) - 1.0f) * tanHalfFovY * aspect;
    float sy = (1.0f - 2.0f * (static_cast<float>(py) + jy) / static_cast<float>(height)) * tanHalfFovY;
    Ray r;
    r.o = eye;
    r.d = Normalize(w + u * sx + v * sy);
    r.tmax = kInf;
    r.index = 0;
    return r;
  }
};

}  // namespace tracer
