// @file normal_map_scenes.h: what the shading-normal tests (CPU and GPU) share: a flat quad whose normal comes from a
// normal map, a bump map or tilted vertex normals, the images that drive it, and the analytic radiance of a
// Lambertian point with a given shading normal under a constant or a half-bright environment.
#pragma once
#include <stb/stb_image_write.h>

#include <cmath>
#include <string>
#include <vector>

#include "test_util.h"

namespace tracer::test {

// An n x n normal map of one texel value, (r, g, b) in 0..255, as a PNG.
inline bool WriteUniformNormalMap(const std::string& path, int n, const unsigned char rgb[3]) {
  std::vector<unsigned char> px(static_cast<size_t>(n) * n * 3);
  for (size_t i = 0; i < px.size(); ++i) px[i] = rgb[i % 3];
  return stbi_write_png(path.c_str(), n, n, 3, px.data(), n * 3) != 0;
}

// The unit normal a normal-map texel stands for in its tangent frame: (2 c / 255 - 1), normalised.
inline Vec3 NormalOfTexel(const unsigned char rgb[3]) {
  return Normalize(Vec3(2.0f * rgb[0] / 255.0f - 1.0f, 2.0f * rgb[1] / 255.0f - 1.0f, 2.0f * rgb[2] / 255.0f - 1.0f));
}

// A grey height ramp of 256 x 4 texels: column x holds x (x / 255 as data), so between texel centres the bilinear
// height rises by 256 / 255 per unit of u. alongV: 4 x 256 texels, row y (0 at the top, where v = 1) holds 255 - y,
// rising by 256 / 255 per unit of v.
inline bool WriteHeightRamp(const std::string& path, bool alongV = false) {
  std::vector<unsigned char> px(256 * 4);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 256; ++x)
      if (alongV)
        px[static_cast<size_t>(x) * 4 + y] = static_cast<unsigned char>(255 - x);
      else
        px[static_cast<size_t>(y) * 256 + x] = static_cast<unsigned char>(x);
  return alongV ? stbi_write_png(path.c_str(), 4, 256, 1, px.data(), 4) != 0
                : stbi_write_png(path.c_str(), 256, 4, 1, px.data(), 256) != 0;
}

// The square |x|, |y| <= 1 at z = 0, facing +z, uv (0, 0) at (-1, -1) and (1, 1) at (1, 1) (so T = dp/du = (2, 0,
// 0) and dp/dv = (0, 2, 0)), of a diffuse material with the lines `material` (e.g. "Kd 0.5 0.5 0.5\nnorm n.png").
// Other uv layouts: kTurnedUv, u along +y and v along -x (T = (0, 2, 0), dp/dv = (-2, 0, 0)); kMirroredUv, u along +y
// and v along +x (a mirrored parametrisation: T x dp/dv points down, so the frame's B is turned to +x). With `vn`
// (not zero) every corner has that vertex normal. dir/quad.obj, returned.
enum UvLayout { kPlainUv, kTurnedUv, kMirroredUv };
inline std::string WriteShadingQuad(const std::string& dir, const std::string& material, Vec3 vn = Vec3(0.0f),
                                    UvLayout layout = kPlainUv) {
  WriteFile(dir + "/quad.mtl", "newmtl m\nKs 0 0 0\n" + material + "\n");
  const bool normals = vn.x != 0.0f || vn.y != 0.0f || vn.z != 0.0f;
  std::string obj = std::string("mtllib quad.mtl\nusemtl m\nv -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\n") +
                    (layout == kTurnedUv     ? "vt 0 1\nvt 0 0\nvt 1 0\nvt 1 1\n"
                     : layout == kMirroredUv ? "vt 0 0\nvt 0 1\nvt 1 1\nvt 1 0\n"
                                             : "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n");
  if (normals) {
    obj += "vn " + std::to_string(vn.x) + " " + std::to_string(vn.y) + " " + std::to_string(vn.z) + "\n";
    obj += "f 1/1/1 2/2/1 3/3/1 4/4/1\n";
  } else {
    obj += "f 1/1 2/2 3/3 4/4\n";
  }
  WriteFile(dir + "/quad.obj", obj);
  return dir + "/quad.obj";
}

// The cosine-weighted fraction (1/pi) int max(0, n.w) dw of the directions w above the plane z = 0 that a
// Lambertian point with shading normal n sees: under a constant environment of radiance 1 it reflects albedo times
// this. With `halfX`, only directions with x > 0 count (an environment bright on that side). Midpoint quadrature
// over (theta, phi) about +z, good to about 1e-6.
inline double CosineFractionAbove(Vec3 n, bool halfX) {
  const int steps = 1200;
  const double pi = 3.14159265358979323846;
  const double dTheta = 0.5 * pi / steps, dPhi = (halfX ? pi : 2.0 * pi) / (2 * steps);
  double sum = 0.0;
  for (int i = 0; i < steps; ++i) {
    const double theta = (i + 0.5) * dTheta, st = std::sin(theta), ct = std::cos(theta);
    for (int j = 0; j < 2 * steps; ++j) {
      const double phi = (halfX ? -0.5 * pi : 0.0) + (j + 0.5) * dPhi;
      const double c = n.x * st * std::cos(phi) + n.y * st * std::sin(phi) + n.z * ct;
      if (c > 0.0) sum += c * st;
    }
  }
  return sum * dTheta * dPhi / pi;
}

}  // namespace tracer::test
