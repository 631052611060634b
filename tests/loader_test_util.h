// @file loader_test_util.h: what the loader's tests share: the LoaderTest fixture (a temporary folder per test),
// error and warning lookups, a grey PNG writer, and the byte-for-byte comparison of two Scenes.
#pragma once
#include <gtest/gtest.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"
#include "tracer/host/scene_loader.h"

namespace tracer::test {

inline constexpr char kTriangle[] = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";

inline bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

inline bool HasWarning(const Scene& scene, const std::string& part) {
  for (const std::string& w : scene.warnings)
    if (Contains(w, part)) return true;
  return false;
}

// The SceneError's message, or "(loaded without error)".
inline std::string LoadError(const std::string& path, const LoadOptions& options = {}) {
  try {
    LoadScene(path, options);
  } catch (const SceneError& e) {
    return e.what();
  }
  return "(loaded without error)";
}

inline float SrgbToLinearReference(float c) {
  return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f);
}

class LoaderTest : public ::testing::Test {
 protected:
  // Writes a file into this test's temporary folder and returns its path.
  std::string Write(const std::string& name, const std::string& contents) {
    std::string path = dir_ + "/" + name;
    WriteFile(path, contents);
    return path;
  }
  // One triangle using material `material` from `mtl` (both written here).
  Scene LoadWithMtl(const std::string& mtl, const std::string& material) {
    Write("m.mtl", mtl);
    return LoadScene(Write("m.obj", "mtllib m.mtl\n" + std::string(kTriangle) + "usemtl " + material + "\nf 1 2 3\n"));
  }
  std::string dir_ = MakeTempDir();
};

// A 1x1 PNG of one grey level, so that a test can tell which of two files was loaded.
inline void WriteGreyPng(const std::string& path, unsigned char level) {
  const unsigned char pixel[] = {level, level, level};
  ASSERT_NE(stbi_write_png(path.c_str(), 1, 1, 3, pixel, 3), 0) << path;
}

template <typename T>
inline bool SameBytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// The two Scenes hold the same bytes: triangles and their numbers, portals, materials, warnings and bounds.
inline void ExpectSameScene(const Scene& a, const Scene& b) {
  EXPECT_EQ(a.NumTriangles(), b.NumTriangles());
  EXPECT_TRUE(SameBytes(a.positions, b.positions));
  EXPECT_TRUE(SameBytes(a.normals, b.normals));
  EXPECT_TRUE(SameBytes(a.uvs, b.uvs));
  EXPECT_TRUE(SameBytes(a.triMaterial, b.triMaterial));
  EXPECT_EQ(a.materials.size(), b.materials.size());
  for (size_t i = 0; i < std::min(a.materials.size(), b.materials.size()); ++i)
    EXPECT_EQ(a.materials[i].name, b.materials[i].name);
  EXPECT_EQ(a.droppedTriangles, b.droppedTriangles);
  EXPECT_TRUE(SameBytes(a.portals, b.portals));
  EXPECT_EQ(a.triangleNumbers.dropped, b.triangleNumbers.dropped);
  EXPECT_EQ(a.warnings, b.warnings);
  EXPECT_EQ(std::memcmp(&a.boundsMin, &b.boundsMin, sizeof(Vec3)), 0);
  EXPECT_EQ(std::memcmp(&a.boundsMax, &b.boundsMax, sizeof(Vec3)), 0);
}

}  // namespace tracer::test
