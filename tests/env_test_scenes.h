// @file env_test_scenes.h: what the environment-light tests (CPU and GPU) share: maps made in code, written as .hdr
// with stb_image_write, small scenes written as OBJ + MTL, and the analytic radiance of a floor under a map.
#pragma once
#include <stb/stb_image_write.h>

#include <cmath>
#include <string>
#include <vector>

#include "test_util.h"
#include "tracer/host/env_map.h"

namespace tracer::test {

// A grey lat-long map of w x h texels: sky radiance `sky` in the upper half, `ground` in the lower, and one texel
// (sunX, sunY) of radiance `sun`: a tiny bright sun.
inline EnvImage SkyWithSun(int w, int h, int sunX, int sunY, float sun, float sky = 0.5f, float ground = 0.1f) {
  EnvImage img;
  img.width = w;
  img.height = h;
  img.rgb.assign(static_cast<size_t>(w) * h * 3, 0.0f);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const float v = (x == sunX && y == sunY) ? sun : (2 * y < h ? sky : ground);
      for (int c = 0; c < 3; ++c) img.rgb[(static_cast<size_t>(y) * w + x) * 3 + c] = v;
    }
  return img;
}

// A map of one radiance everywhere.
inline EnvImage ConstantMap(int w, int h, float radiance) {
  EnvImage img;
  img.width = w;
  img.height = h;
  img.rgb.assign(static_cast<size_t>(w) * h * 3, radiance);
  return img;
}

// Writes img as a Radiance .hdr; false on failure.
inline bool WriteHdrFile(const std::string& path, const EnvImage& img) {
  return stbi_write_hdr(path.c_str(), img.width, img.height, 3, img.rgb.data()) != 0;
}

// A diffuse floor of albedo rho: the square |x|, |z| <= 100 at y = 0, facing +y; dir/floor.obj, returned.
inline std::string WriteFloorScene(const std::string& dir, float rho) {
  WriteFile(dir + "/floor.mtl", "newmtl floor\nKd " + std::to_string(rho) + " " + std::to_string(rho) + " " +
                                    std::to_string(rho) + "\nKs 0 0 0\n");
  WriteFile(dir + "/floor.obj",
            "mtllib floor.mtl\nusemtl floor\nv -100 0 -100\nv -100 0 100\nv 100 0 100\nv 100 0 -100\nf 1 2 3\nf 1 3 "
            "4\n");
  return dir + "/floor.obj";
}

// A cube of half-size 1 at the origin, turned by `angle` radians about the unit `axis`, with flat faces (no vertex
// normals) of diffuse albedo rho, wound outward: a convex object, and `more` OBJ text after it (its vertices are 1 to
// 8). dir/NAME.obj, returned.
inline std::string WriteCubeScene(const std::string& dir, const std::string& name, float rho, Vec3 axis, float angle,
                                  const std::string& more = "") {
  WriteFile(dir + "/" + name + ".mtl", "newmtl cube\nKd " + std::to_string(rho) + " " + std::to_string(rho) + " " +
                                           std::to_string(rho) + "\nKs 0 0 0\n");
  const Vec3 k = Normalize(axis);
  auto turn = [&](Vec3 v) {  // Rodrigues' rotation formula
    return v * std::cos(angle) + Cross(k, v) * std::sin(angle) + k * (Dot(k, v) * (1.0f - std::cos(angle)));
  };
  std::string obj = "mtllib " + name + ".mtl\nusemtl cube\n";
  for (int i = 0; i < 8; ++i) {
    const Vec3 p = turn(Vec3(i & 1 ? 1.0f : -1.0f, i & 2 ? 1.0f : -1.0f, i & 4 ? 1.0f : -1.0f));
    obj += "v " + std::to_string(p.x) + " " + std::to_string(p.y) + " " + std::to_string(p.z) + "\n";
  }
  // Each face as two triangles, counter-clockwise seen from outside (vertex index = 1 + bits x, y, z).
  obj +=
      "f 1 5 7\nf 1 7 3\n"   // -x
      "f 2 4 8\nf 2 8 6\n"   // +x
      "f 1 2 6\nf 1 6 5\n"   // -y
      "f 3 7 8\nf 3 8 4\n"   // +y
      "f 1 3 4\nf 1 4 2\n"   // -z
      "f 5 6 8\nf 5 8 7\n";  // +z
  WriteFile(dir + "/" + name + ".obj", obj + more);
  return dir + "/" + name + ".obj";
}

// An environment portal above WriteCubeScene's cube: a 4 x 4 quad at y = 3 (OBJ text for its `more`).
inline const char kPortalAboveCube[] = "o portal_above\nv -2 3 -2\nv 2 3 -2\nv 2 3 2\nv -2 3 2\nf 9 10 11 12\n";

// Six portals on the faces of the box [-3, 3]^3 around WriteCubeScene's cube (OBJ text for its `more`): every
// direction from the cube crosses one, and each face of the turned cube draws from its own facing's table, which
// weighs them unlike the sphere's.
inline std::string PortalBoxAroundCube() {
  std::string obj = "o portal_box\n";
  int next = 9;  // the cube's 8 vertices come first
  for (int axis = 0; axis < 3; ++axis)
    for (int side : {-3, 3}) {
      const int u = (axis + 1) % 3, v = (axis + 2) % 3;
      for (auto [a, b] : {std::pair<int, int>{-3, -3}, {3, -3}, {3, 3}, {-3, 3}}) {
        int p[3];
        p[axis] = side, p[u] = a, p[v] = b;
        obj += "v " + std::to_string(p[0]) + " " + std::to_string(p[1]) + " " + std::to_string(p[2]) + "\n";
      }
      obj += "f " + std::to_string(next) + " " + std::to_string(next + 1) + " " + std::to_string(next + 2) + " " +
             std::to_string(next + 3) + "\n";
      next += 4;
    }
  return obj;
}

// Radiance leaving a diffuse floor (albedo rho, normal +y) under a grey map with nothing else in the scene:
// rho / pi times the irradiance, sum over the texels of the upper hemisphere of L times the integral of
// cos(theta) over the texel, (2 pi / W) (sin^2 theta1 - sin^2 theta0) / 2. Exact for the piecewise-constant map
// (rotation about +y changes nothing). Rows that straddle the horizon count their upper part.
inline double FloorRadiance(const EnvImage& img, double rho) {
  const double pi = 3.14159265358979323846;
  double e = 0.0;
  for (int y = 0; y < img.height; ++y) {
    const double t0 = pi * y / img.height, t1 = std::fmin(pi * (y + 1) / img.height, pi / 2);
    if (t0 >= pi / 2) break;
    const double band = (std::sin(t1) * std::sin(t1) - std::sin(t0) * std::sin(t0)) / 2 * 2 * pi / img.width;
    for (int x = 0; x < img.width; ++x) e += img.rgb[(static_cast<size_t>(y) * img.width + x) * 3] * band;
  }
  return rho / pi * e;
}

}  // namespace tracer::test
