// @file ray_file_gpu_test.cu: --trace-rays on the GPU gives the CPU's hit records for the same ray file (the same
// triangles; t to float rounding, FMA contraction aside), its hits named by the scene file's triangle numbers
// (label "gpu"; skips without a device).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gpu_test_util.h"
#include "hit_numbers_scenes.h"
#include "test_util.h"
#include "tracer/host/make_rays.h"
#include "tracer/host/ray_file.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/scene_loader.h"
#include "tracer/host/trace_rays.h"

using namespace tracer;

namespace {

SceneData CornellData(Scene& scene) {
  scene = LoadScene(test::ProjectScenesDir() + "/cornell.obj");
  return test::BuildWithSceneCamera(scene, 8, 8);
}

// `count` rays from random points of the Cornell box's volume in random directions; every `finiteEvery`-th has
// tmax `finiteTmax`, the others none.
std::vector<RayRecord> RandomBoxRays(size_t count, uint32_t seed, size_t finiteEvery, float finiteTmax) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<RayRecord> rays(count);
  for (size_t i = 0; i < rays.size(); ++i) {
    RayRecord& r = rays[i];
    r.o[0] = 10.0f + 530.0f * u(rng), r.o[1] = 10.0f + 530.0f * u(rng), r.o[2] = -300.0f + 840.0f * u(rng);
    for (float& d : r.d) d = 2.0f * u(rng) - 1.0f;
    r.tmax = i % finiteEvery == 0 ? finiteTmax : 1e30f;
    r.id = static_cast<uint32_t>(i);
  }
  return rays;
}

}  // namespace

TEST(RayFileGpu, CpuAndCudaGiveIdenticalHits) {
  TRACER_REQUIRE_GPU();
  Scene scene;
  const SceneData data = CornellData(scene);
  const std::vector<RayRecord> rays = RandomBoxRays(20000, 11, 5, 200.0f);
  const std::string dir = test::MakeTempDir();
  WriteRayFile(dir + "/rays.bin", rays);
  const std::vector<RayRecord> fromFile = ReadRayFile(dir + "/rays.bin");
  for (int variant = 0; variant < 4; ++variant) {
    const bool anyHit = variant & 1, binary = variant & 2;
    TraceRaysOptions opt;
    opt.anyHit = anyHit;
    opt.binaryBvh = binary;
    opt.repeats = 1;
    const TraceRaysResult cpu = TraceRaysCpu(data, scene.triangleNumbers, fromFile, opt);
    const TraceRaysResult gpu = TraceRaysCuda(data, scene.triangleNumbers, fromFile, opt);
    ASSERT_EQ(cpu.hits.size(), gpu.hits.size());
    EXPECT_NEAR(static_cast<double>(cpu.hitCount), static_cast<double>(gpu.hitCount), 5.0);
    // nvcc contracts multiply-adds into FMAs and g++ does not, so t and the barycentrics may differ in the last
    // bits, and a ray grazing an edge may pick a neighbour. Bit-identical records are counted and reported;
    // what must hold: the same triangle for all but a few grazing rays, and t within float rounding. The rounding
    // of t is absolute, not relative: the test works on v - o, whose error is a few ulps of the coordinates (up to
    // 555 here, ulp 6e-5), divided by |d|. On the H100 a ray with t = 0.047 differed by 1.3e-5.
    constexpr float kCoordinateError = 1e-6f * 555.0f;
    // Any hit: the GPU postpones triangle tests where few lanes of a warp would run them, so it may meet another
    // occluder first than the CPU does. What must hold there: hit or miss as on the CPU, and a hit's t is where
    // the ray really meets that triangle (within the rounding above) and below tmax.
    int identical = 0, otherTriangle = 0, otherOccluder = 0;
    for (size_t i = 0; i < cpu.hits.size(); ++i) {
      const HitFileRecord &c = cpu.hits[i], &g = gpu.hits[i];
      identical += std::memcmp(&c, &g, sizeof(HitFileRecord)) == 0;
      if (anyHit && c.tri >= 0 && g.tri >= 0 && c.tri != g.tri) {
        ++otherOccluder;
        const RayRecord& r = fromFile[i];
        const Ray ray{Vec3(r.o[0], r.o[1], r.o[2]), Vec3(r.d[0], r.d[1], r.d[2]), r.tmax, 0};
        const int64_t tri = scene.triangleNumbers.SceneTriangle(g.tri);  // the hit names the OBJ's number
        ASSERT_GE(tri, 0) << "ray " << i << " hit dropped triangle " << g.tri;
        const Vec3* v = &scene.positions[3 * static_cast<size_t>(tri)];
        float t, b1, b2;
        ASSERT_TRUE(IntersectTriangle(PrepareRay(ray.d), ray.o, v[0], v[1], v[2], kInf, t, b1, b2)) << "ray " << i;
        EXPECT_NEAR(t, g.t, 1e-4f * t + kCoordinateError / Length(ray.d)) << "ray " << i;
        EXPECT_LT(g.t, r.tmax) << "ray " << i;
        continue;
      }
      if (c.tri != g.tri) {
        if (otherTriangle++ < 5)
          ADD_FAILURE() << (binary ? "binary BVH, " : "wide BVH, ") << (anyHit ? "any" : "closest") << " hit of ray "
                        << i << ": cpu t " << c.t << " tri " << c.tri << ", gpu t " << g.t << " tri " << g.tri;
      } else if (c.tri >= 0) {
        const float* d = fromFile[i].d;
        const float dLength = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        EXPECT_NEAR(c.t, g.t, 1e-4f * c.t + kCoordinateError / dLength) << "ray " << i;
      }
    }
    std::printf("%s BVH, %s hit: %d of %zu records bit-identical on the CPU and the GPU, %d other occluders\n",
                binary ? "binary" : "wide", anyHit ? "any" : "closest", identical, cpu.hits.size(), otherOccluder);
    EXPECT_LE(otherTriangle, 5);
  }
}

// Persistent threads with dynamic fetch trace the same rays as one thread per ray: every ray is traced once (the
// shared counter hands each out to one lane), closest hits on the same triangles (up to ties) and any hits with
// the same outcome, whatever the refill threshold.
TEST(RayFileGpu, PersistentThreadsTraceEveryRayOnce) {
  TRACER_REQUIRE_GPU();
  Scene scene;
  const SceneData data = CornellData(scene);
  const std::vector<RayRecord> rays = RandomBoxRays(50001, 5, 3, 150.0f);  // not a multiple of a warp or a block
  for (bool anyHit : {false, true}) {
    TraceRaysOptions opt;
    opt.anyHit = anyHit;
    opt.repeats = 2;
    const TraceRaysResult perRay = TraceRaysCuda(data, scene.triangleNumbers, rays, opt);
    for (int refill : {1, 16, 32}) {
      opt.persistentRefill = refill;
      const TraceRaysResult persistent = TraceRaysCuda(data, scene.triangleNumbers, rays, opt);
      EXPECT_NE(persistent.device.find("persistent"), std::string::npos) << persistent.device;
      ASSERT_EQ(persistent.hits.size(), perRay.hits.size());
      int differ = 0;
      for (size_t i = 0; i < rays.size(); ++i) {
        const HitFileRecord &a = perRay.hits[i], &b = persistent.hits[i];
        const bool same = anyHit ? (a.tri >= 0) == (b.tri >= 0) : (a.tri == b.tri || a.t == b.t);
        if (!same && ++differ <= 5)
          ADD_FAILURE() << (anyHit ? "any" : "closest") << " hit, refill " << refill << ", ray " << i
                        << ": per ray tri " << a.tri << " t " << a.t << ", persistent tri " << b.tri << " t " << b.t;
      }
      EXPECT_EQ(differ, 0) << "refill " << refill;
      EXPECT_EQ(persistent.hitCount, perRay.hitCount) << "refill " << refill;
    }
  }
}

// Without an explicit --persistent N the mode follows the rays (RayCoherence): a camera's go one thread per ray, random
// ones persistent; either way the same hits as one thread per ray.
TEST(RayFileGpu, TheModeFollowsTheRaysCoherence) {
  TRACER_REQUIRE_GPU();
  Scene scene;
  const SceneData data = CornellData(scene);
  const std::vector<RayRecord> camera = MakeBenchmarkRays(data, RayKind::kPrimary, 256, 192, 1, 0);
  const std::vector<RayRecord> random = RandomBoxRays(20000, 7, 3, 150.0f);
  for (const std::vector<RayRecord>* rays : {&camera, &random}) {
    TraceRaysOptions opt;
    opt.repeats = 1;
    const TraceRaysResult perRay = TraceRaysCuda(data, scene.triangleNumbers, *rays, opt);
    opt.persistentRefill = 24;
    opt.modeByCoherence = true;
    const TraceRaysResult chosen = TraceRaysCuda(data, scene.triangleNumbers, *rays, opt);
    const bool isCamera = rays == &camera;
    EXPECT_NE(chosen.device.find(isCamera ? "one thread per ray (coherent" : "persistent threads"), std::string::npos)
        << chosen.device;
    ASSERT_EQ(chosen.hits.size(), perRay.hits.size());
    int differ = 0;
    for (size_t i = 0; i < rays->size(); ++i)
      differ += !(chosen.hits[i].tri == perRay.hits[i].tri || chosen.hits[i].t == perRay.hits[i].t);
    EXPECT_EQ(differ, 0) << (isCamera ? "camera rays" : "random rays");
  }
}

// The GPU's hit records name the scene file's triangle numbers, as the CPU's do (hit_numbers_test.cpp): an OBJ with
// degenerate faces before and between good ones, quads and polygons, and a pbrt-v4 scene of several shapes, traced
// on the wide BVH (one thread per ray and persistent threads) and the binary one.
TEST(RayFileGpu, HitsNameTheSceneFilesTriangleNumbers) {
  TRACER_REQUIRE_GPU();
  const std::pair<const char*, test::NumberedScene> scenes[] = {{"faces.obj", test::DegenerateFacesObj()},
                                                                {"shapes.pbrt", test::ShapesPbrt()}};
  for (const auto& [name, numbered] : scenes) {
    const std::string dir = test::MakeTempDir();
    test::WriteFile(dir + "/" + name, numbered.text);
    const Scene scene = LoadScene(dir + "/" + name);
    ASSERT_FALSE(scene.triangleNumbers.dropped.empty()) << name << ": nothing dropped, nothing tested";
    const SceneData data = test::BuildWithSceneCamera(scene, 8, 8);
    const std::vector<RayRecord> rays = test::RaysOf(numbered.aims);
    for (int variant = 0; variant < 3; ++variant) {
      TraceRaysOptions opt;
      opt.repeats = 1;
      opt.binaryBvh = variant == 1;
      opt.persistentRefill = variant == 2 ? 16 : 0;
      const char* kinds[] = {", wide BVH", ", binary BVH", ", wide BVH, persistent threads"};
      const std::string label = std::string(name) + kinds[variant];
      test::ExpectAimedHits(TraceRaysCuda(data, scene.triangleNumbers, rays, opt).hits, numbered.aims, label);
    }
    test::RemoveTree(dir);
  }
}
