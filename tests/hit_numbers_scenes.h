// @file hit_numbers_scenes.h: scenes whose triangles' numbers (docs/FORMATS.md, "Triangle numbers") a hit file must
// name, with rays aimed at known faces and the numbers expected: an OBJ with degenerate faces before and between good
// ones, quads and polygons, the numbers computed here from the OBJ's text; a pbrt-v4 scene of several shapes, the
// numbers computed from the shapes this writes. Shared by hit_numbers_test.cpp (the CPU, through the tracer) and
// ray_file_gpu_test.cu (the GPU).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "tracer/host/ray_file.h"

namespace tracer::test {

// A ray and the triangle numbers its hit may name: [first, last], or -1 for a miss.
struct AimedRay {
  RayRecord ray;
  int64_t first = -1, last = -1;
  std::string what;
};

struct NumberedScene {
  std::string text;
  std::vector<AimedRay> aims;
};

inline std::vector<RayRecord> RaysOf(const std::vector<AimedRay>& aims) {
  std::vector<RayRecord> rays;
  for (const AimedRay& a : aims) rays.push_back(a.ray);
  return rays;
}

// Each hit names a number in its ray's range (and a miss -1).
inline void ExpectAimedHits(const std::vector<HitFileRecord>& hits, const std::vector<AimedRay>& aims,
                            const std::string& label) {
  ASSERT_EQ(hits.size(), aims.size()) << label;
  for (size_t i = 0; i < aims.size(); ++i) {
    const int64_t tri = hits[i].tri;
    EXPECT_TRUE(tri >= aims[i].first && tri <= aims[i].last)
        << label << ": ray " << i << " at " << aims[i].what << " hit triangle " << tri << ", expected " << aims[i].first
        << (aims[i].last > aims[i].first ? " .. " + std::to_string(aims[i].last) : "");
  }
}

// A ray straight down (-z) onto the point (x, y) of the plane z = 0, from z = 1.
inline RayRecord DownAt(double x, double y, uint32_t id) {
  return RayRecord{{float(x), float(y), 1.0f}, {0.0f, 0.0f, -1.0f}, INFINITY, id};
}

// ---- the OBJ ------------------------------------------------------------------------------------------------------
// Faces in the plane z = 0, each in a cell of its own (cell c spans x in [3c, 3c + 2.5]; face k in cell 5k mod 13, so
// that the BVH's order differs from the file's). "# aim" before a face marks
// it as a target. Degenerate faces (repeated indices, equal positions, collinear corners, a quad and a pentagon on a
// line, a quad half of which is degenerate) stand before the first good face, between good ones and after the last.
inline std::string DegenerateFacesObjText() {
  struct Face {
    std::vector<std::vector<double>> points;  // (x, y) within the cell, written as v lines before the face
    std::vector<int> corners;                 // which points, in order
    bool aim;
    bool relative;  // negative indices
    const char* before;
  };
  const std::vector<Face> faces = {
      {{{0, 0}, {1, 0}}, {0, 0, 1}, false, false, ""},                                       // repeated index
      {{{0, 0}, {1, 1}, {2, 2}}, {0, 1, 2}, false, false, ""},                               // collinear
      {{{0, 0}, {2, 0}, {0, 2}}, {0, 1, 2}, true, false, ""},                                // good triangle
      {{{0, 0}, {0, 0}, {1, 1}}, {0, 1, 2}, false, false, "g second\n"},                     // equal positions
      {{{0, 0}, {2, 0}, {1.2, 1}, {0, 1.5}}, {0, 1, 2, 3}, true, false, ""},                 // quad, cut 0-2
      {{{0, 0}, {1, 0}, {2, 0}, {2.5, 0}}, {0, 1, 2, 3}, false, false, ""},                  // quad on a line
      {{{0, 0}, {2, 0}, {2.5, 1.5}, {0, 1}}, {0, 1, 2, 3}, true, true, "o third\n"},         // quad, cut 1-3
      {{{0, 0}, {2, 0}, {0.5, 2}}, {0, 1, 2, 2}, true, false, ""},                           // quad, half degenerate
      {{{1, 0}, {2, 0.8}, {1.6, 2}, {0.4, 2}, {0, 0.8}}, {0, 1, 2, 3, 4}, true, false, ""},  // convex pentagon
      {{{0, 0}, {0.5, 0}, {1, 0}, {1.5, 0}, {2, 0}}, {0, 1, 2, 3, 4}, false, false, ""},     // pentagon on a line
      {{{0, 0}, {2, 0}, {1, 2}}, {0, 1, 2}, true, true, "usemtl none\n"},                    // good triangle
      {{{1, 0}, {2, 0.5}, {2, 1.5}, {1, 2}, {0, 1.5}, {0, 0.5}}, {0, 1, 2, 3, 4, 5}, true, false, ""},  // hexagon
      {{{0, 0}, {1, 1}}, {0, 1, 1}, false, false, ""},  // repeated index
  };
  std::ostringstream obj;
  obj << "# triangles numbered in file order, degenerate ones counted\n";
  int vertices = 0;
  for (size_t k = 0; k < faces.size(); ++k) {
    const Face& f = faces[k];
    obj << f.before;
    const double cell = double((5 * k) % faces.size());  // not in file order: the BVH's order is another
    for (const std::vector<double>& p : f.points) obj << "v " << 3.0 * cell + p[0] << " " << p[1] << " 0\n";
    if (f.aim) obj << "# aim\n";
    obj << "f";
    for (int c : f.corners) {
      const int absolute = vertices + c + 1;
      obj << " " << (f.relative ? absolute - (vertices + int(f.points.size()) + 1) : absolute);
    }
    obj << "\n";
    vertices += int(f.points.size());
  }
  return obj.str();
}

// The rays for an OBJ's "# aim" faces, with the numbers a hit may name, read from the text alone: the f lines'
// triangles are numbered on in file order, a face of n corners taking n - 2 (a triangle 1, a quad 2; every polygon
// here can be cut whole), degenerate or not. A quad's two triangles, as tinyobjloader cuts them: (0 1 2), (0 2 3)
// when |p2 - p0| < |p3 - p1| (in float), else (0 1 3), (1 2 3); each half with area gets a ray at its centroid and
// the one number. A larger polygon (convex) gets a ray near its centre, and any of its numbers. Plus a ray that
// misses.
inline std::vector<AimedRay> AimsFromObjText(const std::string& text) {
  std::vector<std::vector<double>> v;
  std::vector<AimedRay> aims;
  std::istringstream lines(text);
  std::string line;
  int64_t next = 0;  // the number of the next face's first triangle
  bool aim = false;
  auto add = [&](double x, double y, int64_t first, int64_t last, const std::string& what) {
    aims.push_back({DownAt(x, y, uint32_t(aims.size())), first, last, what});
  };
  while (std::getline(lines, line)) {
    std::istringstream tokens(line);
    std::string key;
    tokens >> key;
    if (key == "v") {
      double x, y, z;
      tokens >> x >> y >> z;
      v.push_back({x, y});
    } else if (line == "# aim") {
      aim = true;
    } else if (key == "f") {
      std::vector<std::vector<double>> p;
      for (std::string c; tokens >> c;) {
        const long i = std::strtol(c.c_str(), nullptr, 10);
        p.push_back(v[size_t(i < 0 ? long(v.size()) + i : i - 1)]);
      }
      const int64_t n = int64_t(p.size()), first = next;
      next += n - 2;
      if (!aim) continue;
      aim = false;
      const std::string what = "the face of line \"" + line + "\"";
      auto area = [&](int a, int b, int c) {
        return (p[b][0] - p[a][0]) * (p[c][1] - p[a][1]) - (p[b][1] - p[a][1]) * (p[c][0] - p[a][0]);
      };
      auto centroid = [&](int a, int b, int c, int64_t number, const std::string& half) {
        if (area(a, b, c) != 0.0)
          add((p[a][0] + p[b][0] + p[c][0]) / 3, (p[a][1] + p[b][1] + p[c][1]) / 3, number, number, what + half);
      };
      if (n == 3) {
        centroid(0, 1, 2, first, "");
      } else if (n == 4) {
        auto sq = [&](int a, int b) {
          const float dx = float(p[b][0]) - float(p[a][0]), dy = float(p[b][1]) - float(p[a][1]);
          return dx * dx + dy * dy;
        };
        const bool cut02 = sq(0, 2) < sq(1, 3);
        centroid(0, 1, cut02 ? 2 : 3, first, ", first half");
        centroid(cut02 ? 0 : 1, 2, 3, first + 1, ", second half");
      } else {
        // Off the centre, where the diagonals the clipping may cut along cross (a ray on an edge of two triangles of
        // the polygon might, rounded otherwise on the GPU, slip between them).
        double x = 0.0371, y = -0.0613;
        for (const std::vector<double>& q : p) x += q[0] / double(n), y += q[1] / double(n);
        add(x, y, first, first + n - 3, what);
      }
    }
  }
  aims.push_back({RayRecord{{0.0f, 0.0f, 1.0f}, {0.0f, 0.0f, 1.0f}, INFINITY, uint32_t(aims.size())}, -1, -1,
                  "nothing (pointing away)"});
  return aims;
}

inline NumberedScene DegenerateFacesObj() {
  NumberedScene s;
  s.text = DegenerateFacesObjText();
  s.aims = AimsFromObjText(s.text);
  return s;
}

// ---- the pbrt-v4 scene ------------------------------------------------------------------------------------------
// Shapes in the plane z = 0 (the later ones at lower x, so that the BVH's order differs from the file's) and a
// sphere off to the side: a trianglemesh of four triangles (the second a repeated
// index, the fourth collinear), the sphere, a trianglemesh with the "interface" material (left out: it takes no
// numbers), a bilinear patch (two triangles, (p00 p10 p11) and (p00 p11 p01)), and a trianglemesh whose first
// triangle is degenerate. Numbers: the meshes' triangles in file order, 0 .. 7, then the sphere's tessellation.
// The camera's mirror makes its frame right-handed, so that the loader does not reflect the scene.
inline NumberedScene ShapesPbrt() {
  NumberedScene s;
  s.text =
      "Scale -1 1 1 Camera \"perspective\" WorldBegin\n"
      "Shape \"trianglemesh\" \"point3 P\" [0 0 0  2 0 0  0 2 0  1 1 0  3 0 0  5 0 0  3 2 0  2 2 0]\n"
      "  \"integer indices\" [0 1 2  1 1 2  4 5 6  0 3 7]\n"
      "AttributeBegin\nTranslate 100 0 0\nShape \"sphere\" \"float radius\" 1\nAttributeEnd\n"
      "AttributeBegin\nMaterial \"interface\"\n"
      "Shape \"trianglemesh\" \"point3 P\" [6 0 0  8 0 0  6 2 0] \"integer indices\" [0 1 2]\nAttributeEnd\n"
      "Shape \"bilinearmesh\" \"point3 P\" [-9 0 0  -7 0 0  -9 2 0  -7 2 0]\n"
      "Shape \"trianglemesh\" \"point3 P\" [-14 0 0  -13 0 0  -12 0 0  -14 2 0]\n"
      "  \"integer indices\" [0 1 2  0 2 3]\n";
  auto add = [&](RayRecord ray, int64_t first, int64_t last, const std::string& what) {
    ray.id = uint32_t(s.aims.size());
    s.aims.push_back({ray, first, last, what});
  };
  // The numbers, shape by shape in file order: the first mesh's triangles 0 1 2 3; the sphere after every mesh; the
  // interface mesh none; the patch's two 4 5; the last mesh's 6 7.
  const int64_t firstMesh = 0, patch = 4, lastMesh = 6, sphere = 8;
  add(DownAt(2.0 / 3, 2.0 / 3, 0), firstMesh, firstMesh, "the first mesh's triangle 0");
  add(DownAt(11.0 / 3, 2.0 / 3, 0), firstMesh + 2, firstMesh + 2, "the first mesh's triangle 2");
  add(DownAt(-9 + 4.0 / 3, 2.0 / 3, 0), patch, patch, "the patch's (p00 p10 p11)");
  add(DownAt(-9 + 2.0 / 3, 4.0 / 3, 0), patch + 1, patch + 1, "the patch's (p00 p11 p01)");
  add(DownAt(-14 + 2.0 / 3, 2.0 / 3, 0), lastMesh + 1, lastMesh + 1, "the last mesh's triangle 1");
  add(DownAt(6.5, 0.5, 0), -1, -1, "the interface mesh (left out)");
  // The sphere from the side, at its equator: any of its triangles (at most 512 x 256 cells of two).
  add(RayRecord{{100.0f, 5.0f, 0.3f}, {0.0f, -1.0f, 0.0f}, INFINITY, 0}, sphere, sphere + 2 * 512 * 256 - 1,
      "the sphere");
  return s;
}

}  // namespace tracer::test
