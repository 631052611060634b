// @file cutout_scenes.h: small scenes with cut-outs (MTL d and map_d) whose images are known, shared by the CPU
// tests (cutout_test.cpp) and the GPU agreement test.
#pragma once
#include <stb/stb_image_write.h>

#include <cmath>
#include <string>
#include <vector>

#include "test_util.h"

namespace tracer::test {

// An n x n opacity image as the file holds it (row 0 at the top): alpha 0 in the quadrant of rows n/2..n-1 and
// columns 0..n/2-1 (the bottom-left, uv u < 0.5, v < 0.5 by OBJ's convention), 255 elsewhere. Written as RGBA
// (opaque colour, the opacity in alpha) when `withAlpha`, else as one grey channel.
inline bool WriteQuadrantOpacity(const std::string& path, int n, bool withAlpha) {
  const int comps = withAlpha ? 4 : 1;
  std::vector<unsigned char> px(static_cast<size_t>(n) * n * comps, 255);
  for (int y = n / 2; y < n; ++y)
    for (int x = 0; x < n / 2; ++x) px[(static_cast<size_t>(y) * n + x) * comps + comps - 1] = 0;
  return stbi_write_png(path.c_str(), n, n, comps, px.data(), n * comps) != 0;
}

// A unit-radiance emitter (one-sided, facing +z) at z = -2 covering |x|, |y| <= 5, and in front of it, at z = -1,
// a black quad spanning |x|, |y| <= t (t = tan 20 degrees: exactly the view of a 40-degree camera at the origin
// looking down -z) whose uv runs from (0, 0) at its bottom-left to (1, 1), with the material line `cutout` (e.g.
// "map_d mask.png" or "d 0.25"). dir/holes.obj, returned.
inline std::string WriteHolesScene(const std::string& dir, const std::string& cutout) {
  const double t = std::tan(20.0 * 3.14159265358979323846 / 180.0);
  WriteFile(dir + "/holes.mtl", "newmtl lamp\nKd 0 0 0\nKe 1 1 1\nnewmtl card\nKd 0 0 0\n" + cutout + "\n");
  char quad[512];
  std::snprintf(quad, sizeof quad,
                "v %.9g %.9g -1\nv %.9g %.9g -1\nv %.9g %.9g -1\nv %.9g %.9g -1\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n", -t,
                -t, t, -t, t, t, -t, t);
  WriteFile(dir + "/holes.obj",
            "mtllib holes.mtl\nusemtl lamp\nv -5 -5 -2\nv 5 -5 -2\nv 5 5 -2\nv -5 5 -2\nf 1 2 3 4\n"
            "usemtl card\n" +
                std::string(quad) + "f 5/1 6/2 7/3 8/4\n");
  return dir + "/holes.obj";
}

// A diffuse floor (albedo 0.5, y = 0, |x|, |z| <= 4), a small emitter at y = 2 facing down over the origin, and
// between them, at y = 1, a card over |x|, |z| <= 2 (Kd 0) with the material line `cutout` and uv (0, 0) at
// x = -2, z = 2 and (1, 1) at x = 2, z = -2. dir/shadow.obj, returned.
inline std::string WriteShadowScene(const std::string& dir, const std::string& cutout) {
  WriteFile(dir + "/shadow.mtl",
            "newmtl floor\nKd 0.5 0.5 0.5\nnewmtl lamp\nKd 0 0 0\nKe 50 50 50\nnewmtl card\n"
            "Kd 0 0 0\n" +
                cutout + "\n");
  WriteFile(dir + "/shadow.obj",
            "mtllib shadow.mtl\nusemtl floor\nv -4 0 -4\nv -4 0 4\nv 4 0 4\nv 4 0 -4\nf 1 2 3 4\n"
            "usemtl lamp\nv -0.05 2 -0.05\nv 0.05 2 -0.05\nv 0.05 2 0.05\nv -0.05 2 0.05\nf 5 6 7 8\n"
            "usemtl card\nv -2 1 2\nv 2 1 2\nv 2 1 -2\nv -2 1 -2\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n"
            "f 9/1 10/2 11/3 12/4\n");
  return dir + "/shadow.obj";
}

}  // namespace tracer::test
