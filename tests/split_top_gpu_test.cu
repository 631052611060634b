// @file split_top_gpu_test.cu: the GPU builder's spatial-split top (kernels/bvh_build/split_top.cu) (label "gpu";
// skips without a device).
//
// What it must give: the top by default on long thin triangles and never with spatial splits off (its naive twin,
// --no-spatial-splits) or with BvhBuildOptions::splitTop off; on long thin triangles, a wide BVH with more
// references than triangles and a lower SAH cost than without the top; every triangle in some leaf; the closest hit and
// the any-hit answer of the brute force on random rays; the binary BVH (the triangles' own tree, which the scene's
// arrays follow) as without the top; the same bytes every run; and no top where the waste gate says no (a room of
// axis-aligned quads) unless forced. The trees with and without the top (the twin, the room under the gate, forced)
// all answer as the brute force. The Embree parity test (tracer_embree_gpu_test)
// checks the sports car's split tree against Embree.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bvh_checks.h"
#include "gpu_build_checks.h"
#include "gpu_test_util.h"
#include "test_util.h"
#include "tracer/core/wide_bvh.h"
#include "tracer/host/bvh_build.h"
#include "tracer/host/bvh_build_gpu.h"
#include "tracer/host/scene_loader.h"
#include "tracer/host/wide_bvh_build.h"

using namespace tracer;
using test::Built;
using test::SameBytes;
using test::ScopedEnv;

namespace {

Built Build(const std::vector<Vec3>& p, const BvhBuildOptions& o) {
  Built b;
  b.report = BuildBvhsOnGpu(p, o, b.binary, b.wide);
  return b;
}

// splitTop: BvhBuildOptions::splitTop (by the waste gate and the SAH cost).
Built Build(const std::vector<Vec3>& p, bool splitTop) {
  BvhBuildOptions o;
  o.splitTop = splitTop;
  return Build(p, o);
}

// n slivers in the unit cube: 0.2 to 0.5 long in a random direction, 0.002 wide (a scene's waste near 1).
std::vector<Vec3> Slivers(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<Vec3> p;
  for (int i = 0; i < n; ++i) {
    const Vec3 c(u(rng), u(rng), u(rng)), d = RandomDirection(rng);
    const Vec3 side = Normalize(Cross(d, std::fabs(d.x) < 0.9f ? Vec3(1, 0, 0) : Vec3(0, 1, 0)));
    const float half = 0.1f + 0.15f * u(rng);
    p.insert(p.end(), {c - d * half, c + d * half, c + side * 0.002f});
  }
  return p;
}

// A room of axis-aligned quads (two triangles each) on the six faces of a box, k x k a face (a waste of 0.5).
std::vector<Vec3> QuadRoom(int k) {
  std::vector<Vec3> p;
  for (int face = 0; face < 6; ++face)
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < k; ++j) {
        const int a = face / 2, b = (a + 1) % 3, c = (a + 2) % 3;
        auto at = [&](int di, int dj) {
          float x[3];
          x[a] = face % 2 ? 1.0f : 0.0f;
          x[b] = static_cast<float>(i + di) / static_cast<float>(k);
          x[c] = static_cast<float>(j + dj) / static_cast<float>(k);
          return Vec3(x[0], x[1], x[2]);
        };
        p.insert(p.end(), {at(0, 0), at(1, 0), at(1, 1), at(0, 0), at(1, 1), at(0, 1)});
      }
  return p;
}

// Every triangle in some leaf of the wide BVH; closest hits (wide traversal, on the host) and any hits against the
// brute force on rays from MakeRays: the same hit or miss, the same triangle where t is the same (else a tie within
// rounding, rare and small, as in the builder's other tests), and the same occlusion answer.
void ExpectExact(const std::vector<Vec3>& p, const Built& g, int rayCount, const char* what) {
  const size_t n = p.size() / 3;
  std::vector<char> seen(n, 0);
  for (size_t w = 0; w < g.wide.tris.size() / 3; ++w) {
    const int pos = static_cast<int>(BitsFromFloat(g.wide.tris[3 * w].w));
    ASSERT_TRUE(pos >= 0 && static_cast<size_t>(pos) < n) << what;
    seen[static_cast<size_t>(g.binary.order[static_cast<size_t>(pos)])] = 1;
  }
  for (size_t t = 0; t < n; ++t) ASSERT_TRUE(seen[t]) << what << ": triangle " << t << " is in no leaf";
  std::mt19937 rng(7);
  const std::vector<Ray> rays = MakeRays(p, rayCount, rng);
  const Bounds bounds = BoundsOf(p);
  const float diag = Length(bounds.hi - bounds.lo);
  int hits = 0, nearTies = 0;
  for (const Ray& r : rays) {
    const BruteHit want = BruteClosest(p, r);
    const HitRecord got = TraverseWide<false, false>(g.wide.View(), r);
    const int tri = got.tri < 0 ? -1 : g.binary.order[static_cast<size_t>(got.tri)];
    ASSERT_EQ(tri < 0, want.tri < 0) << what << ": ray " << r.index << " hit on one side only";
    const bool occluded = TraverseWide<true, false>(g.wide.View(), r).tri >= 0;
    EXPECT_EQ(occluded, BruteOccluded(p, r)) << what << ": ray " << r.index;
    if (want.tri < 0) continue;
    ++hits;
    if (got.t != want.t) {
      ++nearTies;
      ASSERT_LE(std::fabs(got.t - want.t), 1e-4f * want.t + 1e-5f * diag) << what << ": ray " << r.index;
    } else if (tri != want.tri) {
      EXPECT_EQ(TriangleT(p, tri, r), want.t) << what << ": ray " << r.index << " hit another triangle";
    }
  }
  std::printf("%s: %d rays, %d hits, %d within rounding of the brute force's t\n", what, rayCount, hits, nearTies);
  EXPECT_GT(hits, rayCount / 10) << what;
  EXPECT_LE(nearTies, rayCount / 500 + 1) << what;
}

}  // namespace

TEST(GpuSplitTop, LongThinTrianglesAreSplitSoundAndExact) {
  TRACER_REQUIRE_GPU();
  const ScopedEnv clean("TRACER_SPLIT_TOP", "");  // (empty: unset) whatever the shell exported
  const std::vector<Vec3> p = Slivers(40000, 11);
  const ScopedEnv deep("TRACER_SPLIT_TOP_MIN", "2048");  // several levels on a small scene
  const Built without = Build(p, false);
  const Built with = Build(p, true);
  ASSERT_EQ(with.report.builder, "gpu") << with.report.note;
  const double sahWith = WideSahCost(with.wide), sahWithout = WideSahCost(without.wide);
  std::printf("slivers: %s\n  SAH cost %.3f, without the top %.3f; %zu references for %zu triangles\n",
              with.report.method.c_str(), sahWith, sahWithout, with.wide.tris.size() / 3, p.size() / 3);
  EXPECT_NE(with.report.method.find("spatial-split top ("), std::string::npos) << with.report.method;
  EXPECT_EQ(with.report.method.find(" 0 spatial splits"), std::string::npos) << with.report.method;
  EXPECT_GT(with.wide.tris.size(), p.size()) << "no triangle was split";
  EXPECT_EQ(without.wide.tris.size(), p.size()) << without.report.method;
  EXPECT_LE(with.wide.tris.size(), static_cast<size_t>(1.5 * static_cast<double>(p.size())));  // the budget
  EXPECT_LT(sahWith, 0.95 * sahWithout);
  EXPECT_LE(with.wide.depth, kWideMaxDepth);
  EXPECT_TRUE(SameBytes(with.binary.nodes, without.binary.nodes) && SameBytes(with.binary.tris, without.binary.tris))
      << "the binary BVH must stay the triangles' own tree";
  ExpectExact(p, with, 3000, "slivers");
}

// The default options at the default depth (kSplitTopMin) give long thin triangles the top, exact; the naive twin
// (spatial splits off, as --no-spatial-splits) has none.
TEST(GpuSplitTop, OnByDefaultAndOffWithoutSpatialSplits) {
  TRACER_REQUIRE_GPU();
  const ScopedEnv clean("TRACER_SPLIT_TOP", "");  // (empty: unset) whatever the shell exported
  const ScopedEnv depth("TRACER_SPLIT_TOP_MIN", "");
  const std::vector<Vec3> p = Slivers(40000, 14);
  const Built byDefault = Build(p, BvhBuildOptions{});
  std::printf("slivers, default options: %s\n", byDefault.report.method.c_str());
  EXPECT_NE(byDefault.report.method.find("spatial-split top ("), std::string::npos) << byDefault.report.method;
  EXPECT_GT(byDefault.wide.tris.size(), p.size());
  BvhBuildOptions noSplits;
  noSplits.spatialSplits = false;
  const Built twin = Build(p, noSplits);
  EXPECT_EQ(twin.report.method.find("spatial-split top"), std::string::npos) << twin.report.method;
  EXPECT_EQ(twin.wide.tris.size(), p.size());
  ExpectExact(p, byDefault, 2000, "slivers, default top");
  ExpectExact(p, twin, 1000, "slivers, no top");
}

TEST(GpuSplitTop, SameInputSameBytes) {
  TRACER_REQUIRE_GPU();
  const ScopedEnv clean("TRACER_SPLIT_TOP", "");  // (empty: unset) whatever the shell exported
  const std::vector<Vec3> p = Slivers(40000, 12);
  const ScopedEnv deep("TRACER_SPLIT_TOP_MIN", "2048");
  const Built a = Build(p, true);
  ASSERT_GT(a.wide.tris.size(), p.size()) << a.report.method;
  for (int run = 0; run < 3; ++run) {
    const Built b = Build(p, true);
    EXPECT_TRUE(SameBytes(a.wide.nodes, b.wide.nodes) && SameBytes(a.wide.tris, b.wide.tris)) << "run " << run;
  }
}

// On (BvhBuildOptions::splitTop) only past the waste gate; TRACER_SPLIT_TOP=1 forces it.
TEST(GpuSplitTop, TheGateLeavesAxisAlignedRoomsAloneUnlessForced) {
  TRACER_REQUIRE_GPU();
  const ScopedEnv clean("TRACER_SPLIT_TOP", "");  // (empty: unset) whatever the shell exported
  const std::vector<Vec3> p = QuadRoom(60);       // 43,200 triangles
  const ScopedEnv deep("TRACER_SPLIT_TOP_MIN", "2048");
  const Built plain = Build(p, true);
  EXPECT_EQ(plain.report.method.find("spatial-split top"), std::string::npos) << plain.report.method;
  EXPECT_EQ(plain.wide.tris.size(), p.size());
  ExpectExact(p, plain, 1000, "quad room, under the gate");
  const ScopedEnv on("TRACER_SPLIT_TOP", "1");
  const Built forced = Build(p, false);
  EXPECT_NE(forced.report.method.find("spatial-split top ("), std::string::npos) << forced.report.method;
  ExpectExact(p, forced, 3000, "quad room, forced");
}

// The sports car (the scene the top is for): its split tree answers as the host-built tree does (whose own parity with
// Embree the CPU's Embree test checks; Embree is not on the GPU machine) on 20,000 rays, and as the brute force on
// 1,000.
TEST(GpuSplitTop, SportsCarAgreesWithTheHostTreeAndTheBruteForce) {
  TRACER_REQUIRE_GPU();
  const ScopedEnv clean("TRACER_SPLIT_TOP", "");  // (empty: unset) whatever the shell exported
  TRACER_SHARED_SCENE_OR_SKIP(archive, "sportscar.tar.xz");
  if (!test::HaveTarXz()) GTEST_SKIP() << "tar or xz is not installed: cannot unpack " << archive;
  const std::string dir = test::Unpack(archive);
  ASSERT_FALSE(dir.empty()) << "cannot unpack " << archive;
  const std::vector<Vec3> p = LoadScene(dir + "/sportscar/sportsCar.obj").positions;
  test::RemoveTree(dir);
  const Built split = Build(p, true);
  ASSERT_NE(split.report.method.find("spatial-split top ("), std::string::npos) << split.report.method;
  ASSERT_GT(split.wide.tris.size(), p.size());
  const Bvh host = BuildBvh(p);
  std::mt19937 rng(3);
  const std::vector<Ray> rays = MakeRays(p, 20000, rng);
  const Bounds bounds = BoundsOf(p);
  const float diag = Length(bounds.hi - bounds.lo);
  int hits = 0, nearTies = 0;
  for (const Ray& r : rays) {
    const HitRecord h = TraverseBvh<false, false>(host.View(), r);
    const HitRecord w = TraverseWide<false, false>(split.wide.View(), r);
    ASSERT_EQ(h.tri < 0, w.tri < 0) << "ray " << r.index << " hit on one side only";
    if (h.tri < 0) continue;
    ++hits;
    const int want = host.order[static_cast<size_t>(h.tri)], got = split.binary.order[static_cast<size_t>(w.tri)];
    if (w.t != h.t) {
      ++nearTies;
      ASSERT_LE(std::fabs(w.t - h.t), 1e-4f * h.t + 1e-5f * diag) << "ray " << r.index;
    } else if (got != want) {
      EXPECT_EQ(TriangleT(p, got, r), h.t) << "ray " << r.index << " hit another triangle";
    }
    const bool occluded = TraverseWide<true, false>(split.wide.View(), r).tri >= 0;
    EXPECT_TRUE(occluded) << "ray " << r.index;
  }
  std::printf("sports car: %s\n  20000 rays, %d hits, %d within rounding of the host tree's t\n",
              split.report.method.c_str(), hits, nearTies);
  EXPECT_GT(hits, 2000);
  EXPECT_LE(nearTies, 40);
  ExpectExact(p, split, 1000, "sports car");
}

// As deep as the top goes: nodes of 16 references and more split, so the top reaches its 12 levels and thousands of
// groups (the keys' 12 group bits, the level arrays' limits); still exact, within the budget, the same every run.
TEST(GpuSplitTop, TheDeepestTopIsStillExact) {
  TRACER_REQUIRE_GPU();
  const ScopedEnv clean("TRACER_SPLIT_TOP", "");
  const std::vector<Vec3> p = Slivers(40000, 13);
  const ScopedEnv deepest("TRACER_SPLIT_TOP_MIN", "16");
  const Built a = Build(p, true), b = Build(p, true);
  std::printf("slivers, deepest top: %s\n", a.report.method.c_str());
  const size_t at = a.report.method.find(" groups");
  ASSERT_NE(at, std::string::npos) << a.report.method;
  const size_t from = a.report.method.rfind('(', at) + 1;
  EXPECT_GT(std::stoi(a.report.method.substr(from, at - from)), 1000) << a.report.method;
  EXPECT_LE(a.wide.tris.size(), static_cast<size_t>(1.5 * static_cast<double>(p.size())));
  EXPECT_LE(a.wide.depth, kWideMaxDepth);
  EXPECT_TRUE(SameBytes(a.wide.nodes, b.wide.nodes) && SameBytes(a.wide.tris, b.wide.tris));
  ExpectExact(p, a, 2000, "slivers, deepest top");
}
