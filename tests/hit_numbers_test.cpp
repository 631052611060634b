// @file hit_numbers_test.cpp: hit files name each triangle by its number in the scene file (docs/FORMATS.md, "Triangle
// numbers"), the triangles the loader drops counted: TriangleNumbers' maps both ways, and --trace-rays through the
// tracer on an OBJ with degenerate faces and polygons and on a pbrt-v4 scene of several shapes, whatever BVH or parse.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "hit_numbers_scenes.h"
#include "test_util.h"
#include "tracer/host/ray_file.h"
#include "tracer/host/scene_loader.h"

using namespace tracer;
using namespace tracer::test;

namespace {

// Writes the scene and its rays, runs --trace-rays with each set of flags and checks the hit file.
void ExpectTraceRaysNames(const NumberedScene& scene, const std::string& name, const std::vector<std::string>& flags) {
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/" + name, scene.text);
  WriteRayFile(dir + "/rays.bin", RaysOf(scene.aims));
  for (const std::string& f : flags) {
    SCOPED_TRACE(f);
    const CommandResult c = RunTracer(dir + "/" + name + " --backend cpu --repeats 1 --trace-rays " + dir +
                                      "/rays.bin --hits " + dir + "/hits.bin " + f);
    ASSERT_EQ(c.exitCode, 0) << c.output;
    ExpectAimedHits(ReadHitFile(dir + "/hits.bin"), scene.aims, name + " " + f);
  }
  RemoveTree(dir);
}

}  // namespace

TEST(TriangleNumbers, MapSceneTrianglesToFileNumbersAndBack) {
  TriangleNumbers numbers;
  numbers.dropped = {0, 3, 4, 9, 10, 14};
  std::vector<int64_t> kept;  // the numbers not dropped, in order: Scene triangle t has the t-th
  for (int64_t n = 0; n < 20; ++n)
    if (std::find(numbers.dropped.begin(), numbers.dropped.end(), n) == numbers.dropped.end()) kept.push_back(n);
  for (size_t t = 0; t < kept.size(); ++t) {
    EXPECT_EQ(numbers.FileNumber(int64_t(t)), kept[t]) << "triangle " << t;
    EXPECT_EQ(numbers.SceneTriangle(kept[t]), int64_t(t)) << "number " << kept[t];
  }
  for (int64_t d : numbers.dropped) EXPECT_EQ(numbers.SceneTriangle(d), -1) << "number " << d;
  const TriangleNumbers none;  // nothing dropped: the numbers are the Scene's triangles
  EXPECT_EQ(none.FileNumber(7), 7);
  EXPECT_EQ(none.SceneTriangle(7), 7);
}

// Degenerate faces before, between and after the good ones, quads cut either way (one half degenerate) and
// polygons, in three groups: every hit names the triangle of the OBJ's f lines, numbered as the test reads the text.
TEST(HitNumbers, ObjHitsNameTheObjsTriangleNumbers) {
  const NumberedScene obj = DegenerateFacesObj();
  ASSERT_EQ(obj.aims.size(), 10u) << "2 good triangles, 2 whole quads (2 each), a half one, 2 polygons, a miss";
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/faces.obj", obj.text);
  // What the test wrote degenerate: 3 triangles, a quad on a line (2), a quad's half, a pentagon on a line (3), and a
  // last triangle. Dropped before the first good face too: the numbers are not the Scene's triangles.
  const Scene scene = LoadScene(dir + "/faces.obj");
  EXPECT_EQ(scene.droppedTriangles, 10u);
  ASSERT_FALSE(scene.triangleNumbers.dropped.empty());
  EXPECT_EQ(scene.triangleNumbers.dropped.front(), 0);
  RemoveTree(dir);
  ExpectTraceRaysNames(obj, "faces.obj",
                       {"", "--bvh binary", "--no-spatial-splits", "--naive-obj-parse --threads 1", "--threads 3"});
}

// Shapes in file order, each's triangles in its own order, degenerate ones counted, a left-out shape taking none, and
// a sphere's tessellation after every mesh.
TEST(HitNumbers, PbrtHitsNameTheShapesTriangleNumbers) {
  const NumberedScene pbrt = ShapesPbrt();
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/shapes.pbrt", pbrt.text);
  const Scene scene = LoadScene(dir + "/shapes.pbrt");
  // Dropped: the first mesh's 1 and 3, the last mesh's first (6); then the sphere's poles, numbered after the meshes.
  const std::vector<int64_t>& dropped = scene.triangleNumbers.dropped;
  ASSERT_GE(dropped.size(), 3u);
  EXPECT_EQ(std::vector<int64_t>(dropped.begin(), dropped.begin() + 3), (std::vector<int64_t>{1, 3, 6}));
  for (size_t i = 3; i < dropped.size(); ++i) EXPECT_GE(dropped[i], 8) << i;
  RemoveTree(dir);
  ExpectTraceRaysNames(pbrt, "shapes.pbrt", {"", "--bvh binary"});
}
