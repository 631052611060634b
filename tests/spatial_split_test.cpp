// @file spatial_split_test.cpp: the binned-SAH builder's spatial splits (Stich et al. 2009): references bound their
// parts and cover every triangle, the budget holds, the SAH cost drops on long thin triangles, the wide BVH collapsed
// from the split tree still matches brute force, and with splits off the trees are those of a plain object split; the
// waste that gates the GPU builder's spatial-split top (core/spatial_split.h).
#include "tracer/core/spatial_split.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "bvh_checks.h"
#include "test_util.h"
#include "tracer/core/aabb.h"
#include "tracer/core/wide_bvh.h"
#include "tracer/host/bvh_build.h"
#include "tracer/host/hasher.h"
#include "tracer/host/wide_bvh_build.h"

namespace tracer {
namespace {

using test::RandomSoup;
// ---- spatial splits (the tree the wide BVH is collapsed from) ---------------------------------------------------

// Long thin triangles (wires, a car's trim, hair), whose boxes are large and mostly empty, which is where spatial
// splits pay (Stich et al. 2009). kDiagonalBundle: all along the scene's diagonal in a 5-unit cube, lengths 5 to 10,
// so every box spans most of the scene and all of them overlap while the triangles barely do. kLongAmongSmall: one in
// ten 10 units long in a random direction, the others 0.3 units across, in a 10-unit cube: the long ones' boxes take
// in many small triangles.
enum class Thin { kDiagonalBundle, kLongAmongSmall };
std::vector<Vec3> ThinTriangles(Thin kind, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<Vec3> p;
  for (int i = 0; i < n; ++i) {
    const bool bundle = kind == Thin::kDiagonalBundle, isLong = bundle || i % 10 == 0;
    const float scale = bundle ? 5.0f : 10.0f;
    const Vec3 a(scale * u(rng), scale * u(rng), scale * u(rng));
    const Vec3 d = bundle ? Normalize(Vec3(1.0f) + RandomDirection(rng) * 0.3f) : RandomDirection(rng);
    const float length = bundle ? 5.0f + 5.0f * u(rng) : isLong ? 10.0f : 0.3f;
    const float width = isLong ? 0.02f + 0.05f * u(rng) : 0.3f;
    p.insert(p.end(), {a, a + d * length, a + d * (0.5f * length) + Frame::FromNormal(d).s * width});
  }
  return p;
}
std::vector<Vec3> ThinDiagonalTriangles(int n, uint32_t seed) { return ThinTriangles(Thin::kDiagonalBundle, n, seed); }
std::vector<Vec3> LongAmongSmallTriangles(int n, uint32_t seed) {
  return ThinTriangles(Thin::kLongAmongSmall, n, seed);
}

BvhBuildOptions SingleTriangleLeaves(bool spatialSplits) {
  BvhBuildOptions o;  // as BuildWideBvh builds the tree it collapses
  o.maxLeafSize = 1;
  o.spatialSplits = spatialSplits;
  return o;
}

bool SameBytes(const WideBvh& a, const WideBvh& b) {
  return a.depth == b.depth && a.nodes.size() == b.nodes.size() && a.tris.size() == b.tris.size() &&
         std::memcmp(a.nodes.data(), b.nodes.data(), a.nodes.size() * sizeof(WideNode)) == 0 &&
         std::memcmp(a.tris.data(), b.tris.data(), a.tris.size() * sizeof(Float4)) == 0;
}

using DVec = std::array<double, 3>;

// The bounds of the part of triangle v[0..2] inside box b, in double: the triangle clipped against the box's six
// planes (Sutherland and Hodgman 1974). Empty (lo > hi) when nothing is left.
std::array<DVec, 2> ClippedBounds(const Vec3* v, const Aabb& b) {
  std::vector<DVec> poly;
  for (int k = 0; k < 3; ++k) poly.push_back({v[k].x, v[k].y, v[k].z});
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      const double plane = side == 0 ? b.lo[axis] : b.hi[axis];
      auto inside = [&](const DVec& q) { return side == 0 ? q[axis] >= plane : q[axis] <= plane; };
      std::vector<DVec> out;
      for (size_t k = 0; k < poly.size(); ++k) {
        const DVec &q = poly[k], &r = poly[(k + 1) % poly.size()];
        if (inside(q)) out.push_back(q);
        if (inside(q) != inside(r)) {
          const double t = (plane - q[axis]) / (r[axis] - q[axis]);
          DVec x;
          for (int c = 0; c < 3; ++c) x[c] = c == axis ? plane : q[c] + (r[c] - q[c]) * t;
          out.push_back(x);
        }
      }
      poly = out;
    }
  std::array<DVec, 2> bounds{DVec{kInf, kInf, kInf}, DVec{-kInf, -kInf, -kInf}};
  for (const DVec& q : poly)
    for (int c = 0; c < 3; ++c)
      bounds[0][c] = std::min(bounds[0][c], q[c]), bounds[1][c] = std::max(bounds[1][c], q[c]);
  return bounds;
}

// The references of a spatial-split tree stand for parts of their triangles: each box lies in its triangle's box
// and is the box of the part of the triangle inside it (up to the rounding of the plane crossings, `tol`), not a
// clipped triangle box; and a triangle's references together cover it (points spread over it each lie in one of
// their boxes), so a ray that hits the triangle enters a leaf that holds it.
void CheckReferences(const std::vector<Vec3>& p, const ReferenceBvh& tree, double tol) {
  const size_t n = p.size() / 3;
  std::vector<std::vector<size_t>> refsOf(n);
  int loose = 0;
  for (size_t k = 0; k < tree.bvh.order.size(); ++k) {
    const size_t t = static_cast<size_t>(tree.bvh.order[k]);
    refsOf[t].push_back(k);
    const Aabb& r = tree.boxes[k];
    const Vec3* v = &p[3 * t];
    const Aabb triangle{Min(v[0], Min(v[1], v[2])), Max(v[0], Max(v[1], v[2]))};
    ASSERT_FALSE(r.Empty()) << "reference " << k;
    const std::array<DVec, 2> part = ClippedBounds(v, r);
    for (int c = 0; c < 3; ++c) {
      ASSERT_LE(r.lo[c], r.hi[c]) << "reference " << k;
      EXPECT_TRUE(r.lo[c] >= triangle.lo[c] && r.hi[c] <= triangle.hi[c])
          << "reference " << k << " of triangle " << t << " leaves its triangle's box on axis " << c;
      loose += !(r.lo[c] >= part[0][c] - tol && r.hi[c] <= part[1][c] + tol);
    }
  }
  EXPECT_EQ(loose, 0) << "reference boxes (axis by axis) larger than the part of their triangle inside them";
  long points = 0, uncovered = 0;
  for (size_t t = 0; t < n; ++t) {
    ASSERT_FALSE(refsOf[t].empty()) << "triangle " << t << " has no reference";
    const Vec3* v = &p[3 * t];
    constexpr int kSteps = 8;
    for (int i = 0; i <= kSteps; ++i)
      for (int j = 0; i + j <= kSteps; ++j) {
        const double a = static_cast<double>(i) / kSteps, b = static_cast<double>(j) / kSteps;
        DVec q;
        for (int c = 0; c < 3; ++c)
          q[c] = static_cast<double>(v[0][c]) + (static_cast<double>(v[1][c]) - v[0][c]) * a +
                 (static_cast<double>(v[2][c]) - v[0][c]) * b;
        bool in = false;
        for (size_t k : refsOf[t]) {
          const Aabb& r = tree.boxes[k];
          in |=
              q[0] >= r.lo.x && q[0] <= r.hi.x && q[1] >= r.lo.y && q[1] <= r.hi.y && q[2] >= r.lo.z && q[2] <= r.hi.z;
        }
        ++points;
        uncovered += !in;
      }
  }
  EXPECT_EQ(uncovered, 0) << uncovered << " of " << points
                          << " points on the triangles lie in none of their references";
}

// On long thin triangles and on the random soup (duplicates, slivers, coplanar sheets), spatial splits happen,
// stay within the budget, and every reference bounds its part of its triangle; the tree is sound as a BVH of
// reference boxes.
TEST(SpatialSplits, ReferencesBoundTheirPartsAndCoverEveryTriangle) {
  for (int scene = 0; scene < 3; ++scene) {
    const char* name[] = {"thin diagonal triangles", "long among small triangles", "random soup"};
    SCOPED_TRACE(name[scene]);
    const std::vector<Vec3> p = scene == 0   ? ThinDiagonalTriangles(3000, 1)
                                : scene == 1 ? LongAmongSmallTriangles(3000, 2)
                                             : RandomSoup(5000, 3);
    const size_t n = p.size() / 3;
    const ReferenceBvh tree = BuildReferenceBvh(p, SingleTriangleLeaves(true));
    ValidateBvh(tree.bvh, p, &tree.boxes);
    if (HasFatalFailure()) return;
    const size_t refs = tree.bvh.order.size();
    EXPECT_GT(refs, n) << "no reference was split: the test would pass vacuously";
    EXPECT_GT(tree.spatialSplits, 0);
    EXPECT_LE(static_cast<double>(refs), kSpatialSplitBudget * static_cast<double>(n));
    printf("%s: %zu triangles, %zu references, %d spatial splits, depth %d\n", name[scene], n, refs, tree.spatialSplits,
           tree.bvh.depth);
    CheckReferences(p, tree, 1e-5 * 10.0);  // a few float steps at the scene's scale (10)
  }
}

// Without spatial splits a reference is its triangle, box and all.
TEST(SpatialSplits, OffGivesOneReferencePerTriangleWithItsBox) {
  const std::vector<Vec3> p = ThinDiagonalTriangles(500, 4);
  const ReferenceBvh tree = BuildReferenceBvh(p, SingleTriangleLeaves(false));
  ASSERT_EQ(tree.bvh.order.size(), p.size() / 3);
  EXPECT_EQ(tree.spatialSplits, 0);
  for (size_t k = 0; k < tree.boxes.size(); ++k) {
    const Vec3* v = &p[3 * static_cast<size_t>(tree.bvh.order[k])];
    EXPECT_TRUE(tree.boxes[k].lo == Min(v[0], Min(v[1], v[2])) && tree.boxes[k].hi == Max(v[0], Max(v[1], v[2])));
  }
}

// --no-spatial-splits must give the wide BVH of before spatial splits (23eb825) byte for byte: the object-split tree
// collapsed with its triangles' boxes; and, pinned by hashes of that commit's build of the same inputs, the same
// bytes. (Recorded with GCC 12 and libstdc++ on x86-64; std::partition and std::nth_element order equal keys as
// their library does, so another standard library may need new hashes, made from 23eb825's BuildWideBvh.) The
// scene's own binary BVH, which never has spatial splits, is pinned the same way. With spatial splits on, the thin
// triangles' wide BVH hashes differently, so the hashes do tell builds apart.
TEST(SpatialSplits, OffGivesTheWideBvhOfBeforeByteForByte) {
  struct Case {
    const char* name;
    std::vector<Vec3> p;
    uint64_t binaryNodes, wideNodes, wideTris;
  };
  const Case cases[] = {
      {"thin diagonal triangles", ThinDiagonalTriangles(2000, 5), 0x2c06a954e28526caull, 0x78391fbdc1f742eeull,
       0x6c0436e4c15386b7ull},
      {"random soup", RandomSoup(3000, 99), 0x95af5d7f469e2f1eull, 0x4b91f7f5815755c2ull, 0x502b12b41b005ee7ull},
  };
  BvhBuildOptions off;
  off.spatialSplits = false;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Bvh bvh = BuildBvh(c.p);
    const WideBvh wide = BuildWideBvh(c.p, bvh, off);
    EXPECT_TRUE(SameBytes(wide, CollapseToWideBvh(BuildBvh(c.p, SingleTriangleLeaves(false)), bvh)));
    const uint64_t binaryNodes = HashBytes(bvh.nodes.data(), bvh.nodes.size() * sizeof(BvhNode));
    const uint64_t wideNodes = HashBytes(wide.nodes.data(), wide.nodes.size() * sizeof(WideNode));
    const uint64_t wideTris = HashBytes(wide.tris.data(), wide.tris.size() * sizeof(Float4));
    printf("%s: binary nodes %016llx, wide nodes %016llx, wide triangles %016llx\n", c.name,
           static_cast<unsigned long long>(binaryNodes), static_cast<unsigned long long>(wideNodes),
           static_cast<unsigned long long>(wideTris));
    EXPECT_EQ(binaryNodes, c.binaryNodes);
    EXPECT_EQ(wideNodes, c.wideNodes);
    EXPECT_EQ(wideTris, c.wideTris);
    if (c.p.size() / 3 == 2000) {
      const WideBvh on = BuildWideBvh(c.p, bvh);
      EXPECT_NE(HashBytes(on.nodes.data(), on.nodes.size() * sizeof(WideNode)), c.wideNodes);
      EXPECT_GT(on.tris.size(), wide.tris.size());
    }
  }
}

// On long thin diagonal triangles spatial splits make a cheaper wide BVH by the SAH (WideSahCost) than object
// splits alone (measured: 9% cheaper; 47% among small triangles); and the collapse must build leaf slots from the
// references' clipped boxes: BuildWideBvh equals the collapse given them, and costs less than the same tree
// collapsed with its triangles' own boxes.
TEST(SpatialSplits, LowerTheSahCostOfLongThinTriangles) {
  BvhBuildOptions off;
  off.spatialSplits = false;
  for (const bool diagonal : {true, false}) {
    const std::vector<Vec3> p = diagonal ? ThinDiagonalTriangles(4000, 6) : LongAmongSmallTriangles(4000, 6);
    const Bvh bvh = BuildBvh(p);
    const WideBvh without = BuildWideBvh(p, bvh, off), with = BuildWideBvh(p, bvh);
    const double costWithout = WideSahCost(without), costWith = WideSahCost(with);
    printf("%s: SAH cost %.2f without spatial splits, %.2f with (%zu references for %zu triangles)\n",
           diagonal ? "thin diagonal triangles" : "long among small triangles", costWithout, costWith,
           with.tris.size() / 3, p.size() / 3);
    EXPECT_LT(costWith, (diagonal ? 0.95 : 0.8) * costWithout);
    EXPECT_GT(with.tris.size(), without.tris.size());
  }

  const std::vector<Vec3> p = ThinDiagonalTriangles(4000, 6);
  const Bvh bvh = BuildBvh(p);
  const WideBvh with = BuildWideBvh(p, bvh);

  const ReferenceBvh tree = BuildReferenceBvh(p, SingleTriangleLeaves(true));
  EXPECT_TRUE(SameBytes(with, CollapseToWideBvh(tree.bvh, bvh, tree.boxes)));
  const double costTriangleBoxes = WideSahCost(CollapseToWideBvh(tree.bvh, bvh));
  printf("  the same tree with its leaves' triangle boxes: SAH cost %.2f\n", costTriangleBoxes);
  EXPECT_LT(WideSahCost(with), costTriangleBoxes);
}

// Traversal of a wide BVH that holds split triangles, against brute force (closest and any hit): each triangle
// reports one hit, in the scene's numbering, whichever copy is found.
TEST(SpatialSplits, WideBvhMatchesBruteForceOnLongThinTriangles) {
  for (const bool diagonal : {true, false}) {
    const std::vector<Vec3> p = diagonal ? ThinDiagonalTriangles(2000, 7) : LongAmongSmallTriangles(3000, 7);
    const Bvh bvh = BuildBvh(p);
    EXPECT_GT(CheckAgainstBruteForce(p, bvh, 3000, 13).refs, p.size() / 3) << "no spatial split: the test is vacuous";
  }
}

// Copies of one long thin triangle cannot be told apart by any split: spatial splits must neither loop on them nor
// run past the budget or the depth bound, and the result must still be a correct wide BVH.
TEST(SpatialSplits, CopiesOfOneTriangleStayWithinTheBudget) {
  std::vector<Vec3> p;
  for (int i = 0; i < 600; ++i) p.insert(p.end(), {Vec3(0.0f), Vec3(9.0f, 7.0f, 8.0f), Vec3(4.5f, 3.6f, 4.0f)});
  const std::vector<Vec3> thin = LongAmongSmallTriangles(300, 8);
  p.insert(p.end(), thin.begin(), thin.end());
  const size_t n = p.size() / 3;
  const ReferenceBvh tree = BuildReferenceBvh(p, SingleTriangleLeaves(true));
  ValidateBvh(tree.bvh, p, &tree.boxes);
  EXPECT_LE(static_cast<double>(tree.bvh.order.size()), kSpatialSplitBudget * static_cast<double>(n));
  EXPECT_LT(tree.bvh.depth, kBvhStackSize);
  printf("600 copies + 300 thin triangles: %zu references, depth %d\n", tree.bvh.order.size(), tree.bvh.depth);
  CheckAgainstBruteForce(p, BuildBvh(p), 600, 14);
}

// The same input gives the same wide BVH byte for byte, with spatial splits (MPI ranks compare hashes).
TEST(SpatialSplits, AreDeterministic) {
  std::vector<Vec3> p = LongAmongSmallTriangles(3000, 9);
  const std::vector<Vec3> soup = RandomSoup(3000, 10);
  p.insert(p.end(), soup.begin(), soup.end());
  const Bvh bvh = BuildBvh(p);
  EXPECT_TRUE(SameBytes(BuildWideBvh(p, bvh), BuildWideBvh(p, bvh)));
}

}  // namespace
}  // namespace tracer

namespace tracer {
namespace {

// MeasureWaste: an axis-aligned right triangle covers exactly half its box (the least waste there is, 0.5); a long
// sliver across a cube's diagonal almost none of it; a triangle with a non-finite vertex counts for nothing. The gate
// follows the sums.
TEST(SplitTopGate, WasteOfATriangleAndOfAScene) {
  const Vec3 right[3] = {Vec3(0, 0, 0), Vec3(2, 0, 0), Vec3(0, 3, 0)};
  const TriangleWaste r = MeasureWaste(right);
  EXPECT_EQ(r.box, 6.0);
  EXPECT_EQ(r.ideal, 3.0);
  const Vec3 sliver[3] = {Vec3(0, 0, 0), Vec3(1, 1, 1), Vec3(1.001f, 0.999f, 1)};
  const TriangleWaste s = MeasureWaste(sliver);
  EXPECT_NEAR(s.box, 3.0, 0.01);
  EXPECT_LT(s.ideal, 0.01 * s.box);
  const Vec3 bad[3] = {Vec3(0, 0, 0), Vec3(std::nanf(""), 1, 1), Vec3(1, 0, 1)};
  EXPECT_EQ(MeasureWaste(bad).box, 0.0);
  EXPECT_EQ(MeasureWaste(bad).ideal, 0.0);
  EXPECT_FALSE(SplitTopWorthTrying(r.box, r.ideal));                           // 0.5
  EXPECT_TRUE(SplitTopWorthTrying(s.box, s.ideal));                            // about 1
  EXPECT_FALSE(SplitTopWorthTrying(r.box + s.box, r.ideal + s.ideal));         // (6 + 3 - 3) / 9 = 0.67
  EXPECT_TRUE(SplitTopWorthTrying(r.box + 4 * s.box, r.ideal + 4 * s.ideal));  // (18 - 3) / 18 = 0.83
  EXPECT_FALSE(SplitTopWorthTrying(0.0, 0.0));
}

}  // namespace
}  // namespace tracer
