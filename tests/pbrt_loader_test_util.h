// @file pbrt_loader_test_util.h: helpers for the pbrt loader's tests: scenes from text in a temporary folder, and
// looks at what they load into.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "test_util.h"
#include "tracer/host/backends.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/scene_loader.h"

namespace tracer::test {

// A light the scenes below can carry so that they have an emitter (pbrt-v4 needs none, the tracer warns without).
inline const char* kPbrtTestLight =
    "AttributeBegin\nAreaLightSource \"diffuse\" \"rgb L\" [1 1 1]\n"
    "Shape \"trianglemesh\" \"point3 P\" [0 5 0 1 5 0 0 5 1] \"integer indices\" [0 1 2]\nAttributeEnd\n";

// A temporary folder for one test's files, removed at the end of the test.
struct PbrtDir {
  std::string path = MakeTempDir();
  ~PbrtDir() { RemoveTree(path); }
  std::string File(const std::string& name) const { return path + "/" + name; }
  // Writes NAME (default s.pbrt) with `text` and loads it.
  Scene Load(const std::string& text, const std::string& name = "s.pbrt") const {
    WriteFile(File(name), text);
    return LoadScene(File(name));
  }
  // The same after a camera and "WorldBegin" on line 1: the snippet's first line is line 2. The camera, at the origin
  // looking along +z, has a mirror, "Scale -1 1 1", which makes its frame right-handed: pbrt's default camera is
  // left-handed, and the loader would reflect the scene to show pbrt's image of it.
  Scene LoadWorld(const std::string& world) const {
    return Load("Scale -1 1 1 Camera \"perspective\" WorldBegin\n" + world);
  }
  // The same with kPbrtTestLight after the snippet.
  Scene LoadLit(const std::string& world) const;
  // The SceneError's message that loading throws, or "" when it loads.
  std::string ErrorOf(const std::string& text) const {
    try {
      Load(text);
    } catch (const SceneError& e) {
      return e.what();
    }
    return "";
  }
};

inline Scene PbrtDir::LoadLit(const std::string& world) const { return LoadWorld(world + kPbrtTestLight); }

// The warnings that contain `part`.
// A square of half-side s in the plane z = d facing the camera (pbrt's camera at the origin looks along +z), as a
// trianglemesh (its corners to 9 digits).
inline std::string PbrtSquare(double s, double d) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "Shape \"trianglemesh\" \"point3 P\" [%.9g %.9g %.9g  %.9g %.9g %.9g  %.9g %.9g %.9g  %.9g %.9g %.9g] "
                "\"integer indices\" [0 1 2 0 2 3]\n",
                -s, -s, d, s, -s, d, s, s, d, -s, s, d);
  return buf;
}

// A CPU render's mean (first channel) at size x size pixels, with the scene's camera, and its standard error from the
// spread of its pixels, which are independent.
struct ImageMean {
  double mean, se;
};
inline ImageMean RenderMean(const Scene& s, Vec3 environment, int spp, int maxDepth, int size) {
  const SceneData data = BuildWithSceneCamera(s, size, size, BvhBuildOptions{}, environment);
  const std::vector<float> rgb = RenderCpu(data, QuietRender(size, size, spp, maxDepth)).rgb;
  double sum = 0.0, sum2 = 0.0;
  const int n = size * size;
  for (int i = 0; i < n; ++i) {
    sum += rgb[3 * size_t(i)];
    sum2 += double(rgb[3 * size_t(i)]) * rgb[3 * size_t(i)];
  }
  const double mean = sum / n;
  return {mean, std::sqrt(std::max(0.0, sum2 / n - mean * mean) / n)};
}

// Triangle t's winding normal (p1 - p0) x (p2 - p0), unit length.
inline Vec3 WindingNormal(const Scene& s, size_t t) {
  return Normalize(Cross(s.positions[3 * t + 1] - s.positions[3 * t], s.positions[3 * t + 2] - s.positions[3 * t]));
}

inline const HostMaterial& MaterialOf(const Scene& s, size_t triangle) {
  return s.materials[static_cast<size_t>(s.triMaterial[triangle])];
}

// The total emitted power of the scene's emitters, sum of pi * luminance-free channel x of ke * area.
inline double EmittedPowerX(const Scene& s) {
  double power = 0.0;
  for (size_t t = 0; t < s.NumTriangles(); ++t) {
    const Vec3 a = s.positions[3 * t], b = s.positions[3 * t + 1], c = s.positions[3 * t + 2];
    power += 3.14159265358979323846 * double(MaterialOf(s, t).ke.x) * 0.5 * double(Length(Cross(b - a, c - a)));
  }
  return power;
}

inline ::testing::AssertionResult NearVec(Vec3 a, Vec3 b, float eps) {
  if (std::fabs(a.x - b.x) <= eps && std::fabs(a.y - b.y) <= eps && std::fabs(a.z - b.z) <= eps)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "(" << a.x << ", " << a.y << ", " << a.z << ") != (" << b.x << ", " << b.y
                                       << ", " << b.z << ") within " << eps;
}

}  // namespace tracer::test
