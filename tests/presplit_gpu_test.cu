// @file presplit_gpu_test.cu: the GPU BVH builder's triangle pre-splitting (label "gpu"; skips without a device).
//
// What it must give: exactly the budget's references; a binary BVH that holds each triangle once and is sound; a wide
// BVH that holds every reference, each reporting its triangle's binary position; closest and any hits through both
// equal to brute force's, bit for bit and with the same tie rule (CheckTraversal), on rays of every kind, for both
// clusterings, with and without the SAH top; the same bytes every time; a lower SAH cost than the tree without
// pre-splits on long thin triangles; and the gate's choice: rooms and meshes of even triangles kept whole, byte for
// byte the tree without pre-splitting, long thin triangles split.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bvh_checks.h"
#include "gpu_test_util.h"
#include "test_util.h"
#include "tracer/core/presplit.h"
#include "tracer/host/bvh_build_gpu.h"
#include "tracer/host/scene_loader.h"
#include "tracer/host/wide_bvh_build.h"

namespace tracer {
namespace {

using test::Built;
using test::GpuBuilder;
using test::kGpuBuilders;
using test::SameBytes;
using test::WithAndWithoutSahTop;

// A build with pre-splitting as the gate decides, or always (`always`), or never (budget 0).
Built GpuBuild(const std::vector<Vec3>& p, BvhBuilderFn fn, bool always, float budget = 0.3f) {
  BvhBuildOptions o;
  o.presplitAlways = always;
  o.presplitBudget = budget;
  Built b;
  b.report = fn(p, o, b.binary, b.wide);
  return b;
}

bool SameTrees(const Built& a, const Built& b) {
  return SameBytes(a.binary.nodes, b.binary.nodes) && SameBytes(a.binary.order, b.binary.order) &&
         SameBytes(a.wide.nodes, b.wide.nodes) && SameBytes(a.wide.tris, b.wide.tris);
}

// A pre-split build: the references exactly the budget's (floor(n * budget) more than the triangles), the binary BVH
// sound with each triangle once (ValidateBvh), the wide BVH with one entry a reference, each the triangle at the
// binary position it reports, every triangle at least once; and both traversals against brute force on `rays` rays of
// every kind (MakeRays), closest hits bit for bit and any hits.
void ExpectSoundAndExact(const std::vector<Vec3>& p, const Built& b, float budget, int rays, uint32_t seed,
                         const std::string& what) {
  ASSERT_EQ(b.report.builder, "gpu") << what << ": " << b.report.note;
  const size_t n = p.size() / 3, refs = n + PresplitBudgetRefs(static_cast<uint32_t>(n), budget);
  EXPECT_EQ(b.report.references, refs) << what;
  if (refs > n) {
    EXPECT_NE(b.report.method.find("pre-splits"), std::string::npos) << what << ": " << b.report.method;
  }
  ValidateBvh(b.binary, p);
  ASSERT_EQ(b.wide.tris.size(), 3 * refs) << what;
  std::vector<int> copies(n, 0);
  for (size_t w = 0; w < refs; ++w) {
    const uint32_t at = BitsFromFloat(b.wide.tris[3 * w].w);
    ASSERT_LT(at, n) << what << ": wide entry " << w;
    ++copies[static_cast<size_t>(b.binary.order[at])];
    for (size_t v = 0; v < 3; ++v) {
      const Float4 &q = b.wide.tris[3 * w + v], &r = b.binary.tris[3 * at + v];
      ASSERT_TRUE(q.x == r.x && q.y == r.y && q.z == r.z) << what << ": wide entry " << w << " vertex " << v;
    }
  }
  for (size_t t = 0; t < n; ++t) ASSERT_GE(copies[t], 1) << what << ": triangle " << t << " is in no wide leaf";
  EXPECT_LE(b.wide.depth, kWideMaxDepth);
  std::mt19937 rng(seed);
  const std::vector<Ray> r = MakeRays(p, rays, rng);
  const BvhView bv = b.binary.View();
  const WideBvhView wv = b.wide.View();
  CheckTraversal(p, b.binary, r, seed + 1, ("binary, " + what).c_str(), [&](const Ray& ray, bool any) {
    return any ? TraverseBvh<true, false>(bv, ray) : TraverseBvh<false, false>(bv, ray);
  });
  CheckTraversal(p, b.binary, r, seed + 1, ("wide, " + what).c_str(), [&](const Ray& ray, bool any) {
    return any ? TraverseWide<true, false>(wv, ray) : TraverseWide<false, false>(wv, ray);
  });
}

std::vector<Vec3> Positions(const std::string& path) { return LoadScene(path).positions; }

}  // namespace

// Long thin triangles among small ones: the gate splits them by itself (their waste is near 1), the trees are sound
// and exact, and the wide SAH cost drops well below that of the tree without pre-splits (on the host's binned-SAH
// tree over the same references it halved: docs/PERFORMANCE.md; 0.9 leaves room for the clustering's own choices).
TEST(GpuPresplit, LongThinTrianglesAreSplitSoundExactAndCheaper) {
  TRACER_REQUIRE_GPU();
  const std::vector<Vec3> p = LongAmongSmallTriangles(20000, 3);
  WithAndWithoutSahTop([&p](const std::string& how) {
    for (const GpuBuilder& g : kGpuBuilders) {
      const std::string what = std::string("long among small, ") + g.name + how;
      const Built split = GpuBuild(p, g.fn, false), whole = GpuBuild(p, g.fn, false, 0.0f);
      EXPECT_GE(split.report.presplitWaste, kPresplitMinWaste) << what;
      ExpectSoundAndExact(p, split, 0.3f, 20000, 5, what);
      const double sSplit = WideSahCost(split.wide), sWhole = WideSahCost(whole.wide);
      std::printf("%s: wide SAH cost %.3f pre-split (waste %.3f, %s), %.3f without\n", what.c_str(), sSplit,
                  split.report.presplitWaste, split.report.method.c_str(), sWhole);
      EXPECT_LT(sSplit, 0.9 * sWhole) << what;
    }
  });
}

// Pre-splitting forced (presplitAlways) on soups of every kind of triangle (duplicates, flat sheets, slivers, zero
// areas: test::RandomSoup) and the Cornell box: sizes on either side of H-PLOC's warp clusterings (16, 32) and of the
// SAH top's range (64), and a budget past its bound (clamped to one extra reference a triangle).
TEST(GpuPresplit, ForcedOnSoupsAndTheCornellBoxTheTreesAreSoundAndExact) {
  TRACER_REQUIRE_GPU();
  WithAndWithoutSahTop([](const std::string& how) {
    for (const GpuBuilder& g : kGpuBuilders) {
      for (int n : {2, 3, 9, 17, 33, 65, 400, 5000}) {
        const std::vector<Vec3> p = test::RandomSoup(n, static_cast<uint32_t>(n));
        const std::string what = "soup of " + std::to_string(n) + ", " + g.name + how;
        ExpectSoundAndExact(p, GpuBuild(p, g.fn, true), 0.3f, 2000, 11, what);
      }
      const std::vector<Vec3> soup = test::RandomSoup(3000, 12);
      ExpectSoundAndExact(soup, GpuBuild(soup, g.fn, true, 5.0f), kPresplitBudgetMax, 3000, 13,
                          std::string("soup, budget 5, ") + g.name + how);
      const std::vector<Vec3> cornell = Positions(test::ProjectScenesDir() + "/cornell.obj");
      ExpectSoundAndExact(cornell, GpuBuild(cornell, g.fn, true), 0.3f, 5000, 14, std::string("cornell, ") + g.name);
    }
  });
}

// The gate keeps a room whole (the Cornell box's waste is about 0.52, below kPresplitMinWaste): the tree is then, byte
// for byte, the one built without pre-splitting; --no-spatial-splits (spatialSplits off) turns pre-splitting off
// even when forced, and so does the binary BVH alone (--bvh binary: the host's binary BVH is never split either).
TEST(GpuPresplit, TheGateKeepsARoomWholeAndNoSpatialSplitsTurnsItOff) {
  TRACER_REQUIRE_GPU();
  const std::vector<Vec3> cornell = Positions(test::ProjectScenesDir() + "/cornell.obj");
  for (const GpuBuilder& g : kGpuBuilders) {
    const Built gated = GpuBuild(cornell, g.fn, false), none = GpuBuild(cornell, g.fn, false, 0.0f);
    EXPECT_GE(gated.report.presplitWaste, 0.0) << g.name;
    EXPECT_LT(gated.report.presplitWaste, kPresplitMinWaste) << g.name;
    EXPECT_EQ(gated.report.references, cornell.size() / 3) << g.name;
    EXPECT_TRUE(SameTrees(gated, none)) << g.name << ": the gate's whole tree differs from the unsplit build's";
    EXPECT_EQ(none.report.presplitWaste, -1.0) << g.name << ": no budget, no gate";
    const std::vector<Vec3> thin = LongAmongSmallTriangles(2000, 4);
    BvhBuildOptions off;
    off.spatialSplits = false;
    off.presplitAlways = true;
    Built b;
    b.report = g.fn(thin, off, b.binary, b.wide);
    EXPECT_EQ(b.report.references, thin.size() / 3) << g.name << ": pre-split under --no-spatial-splits";
    EXPECT_TRUE(SameTrees(b, GpuBuild(thin, g.fn, false, 0.0f))) << g.name;
    BvhBuildOptions binaryOnly;
    binaryOnly.wide = false;
    binaryOnly.presplitAlways = true;
    b.report = g.fn(thin, binaryOnly, b.binary, b.wide);
    EXPECT_EQ(b.report.references, thin.size() / 3) << g.name << ": pre-split without the wide BVH";
  }
}

// The same input gives the same bytes: the pieces come from the triangles alone, the share-out from integer sums, and
// H-PLOC's and the SAH top's node numbers (in the order warps happen to make them) must not show in the layouts.
TEST(GpuPresplit, SameInputSameBytes) {
  TRACER_REQUIRE_GPU();
  const std::vector<Vec3> p = test::RandomSoup(30000, 3);
  WithAndWithoutSahTop([&p](const std::string& how) {
    for (const GpuBuilder& g : kGpuBuilders) {
      const Built a = GpuBuild(p, g.fn, true);
      for (int run = 0; run < 3; ++run) EXPECT_TRUE(SameTrees(a, GpuBuild(p, g.fn, true))) << g.name << how;
    }
  });
}

// The sports car's long thin trim: the gate splits it by itself (waste about 0.78), and both trees match brute force
// on rays through the real scene (fewer rays: brute force tests all 300,000 triangles for each).
TEST(GpuPresplit, SportsCarIsSplitByTheGateAndMatchesBruteForce) {
  TRACER_REQUIRE_GPU();
  TRACER_SHARED_SCENE_OR_SKIP(archive, "sportscar.tar.xz");
  if (!test::HaveTarXz()) GTEST_SKIP() << "tar or xz is not installed: cannot unpack " << archive;
  const std::string dir = test::Unpack(archive);
  ASSERT_FALSE(dir.empty());
  const std::vector<Vec3> p = Positions(dir + "/sportscar/sportsCar.obj");
  test::RemoveTree(dir);
  const Built split = GpuBuild(p, &BuildBvhsOnGpu, false), whole = GpuBuild(p, &BuildBvhsOnGpu, false, 0.0f);
  EXPECT_GE(split.report.presplitWaste, kPresplitMinWaste);
  ExpectSoundAndExact(p, split, 0.3f, 1000, 21, "sports car");
  std::printf("sports car: wide SAH cost %.3f pre-split (waste %.3f, %s; pre-split %.3f ms of %.3f), %.3f without\n",
              WideSahCost(split.wide), split.report.presplitWaste, split.report.method.c_str(), split.report.presplitMs,
              split.report.buildMs, WideSahCost(whole.wide));
}

}  // namespace tracer
