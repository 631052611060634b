// @file bvh_test.cpp: BuildBvh and TraverseBvh, BuildWideBvh and TraverseWide: layout, input validation, structure,
// closest and any hit against brute force, deep and pathological trees.
#include "tracer/core/bvh.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bvh_checks.h"
#include "test_util.h"
#include "tracer/core/aabb.h"
#include "tracer/core/wide_bvh.h"
#include "tracer/core/wide_collapse.h"
#include "tracer/host/bvh_build.h"
#include "tracer/host/wide_bvh_build.h"

namespace tracer {
namespace {

using test::RandomSoup;

// ---- layout ---------------------------------------------------------------------------------------------

static_assert(sizeof(BvhNode) == 64 && alignof(BvhNode) == 16, "a node is four 16-byte loads");
static_assert(offsetof(BvhNode, lxy) == 0 && offsetof(BvhNode, rxy) == 16 && offsetof(BvhNode, lrz) == 32 &&
                  offsetof(BvhNode, kids) == 48,
              "the node's four vectors are in the order bvh.h documents");
static_assert(sizeof(Float4) == 16 && alignof(Float4) == 16, "triangles are stored as 16-byte vectors");

TEST(BvhLayout, NodeIsFourSixteenByteVectors) {
  EXPECT_EQ(sizeof(BvhNode), 64u);
  EXPECT_EQ(alignof(BvhNode), 16u);
  EXPECT_EQ(kBvhStackSize, 64);
  std::vector<BvhNode> nodes(3);
  // A vector of nodes keeps every node on a 16-byte boundary, so the device can use 128-bit loads.
  for (const BvhNode& n : nodes) EXPECT_EQ(reinterpret_cast<uintptr_t>(&n) % 16, 0u);
}

// ---- input validation -----------------------------------------------------------------------------------

TEST(BvhBuild, RejectsEmptyOrPartialOrNonFiniteInput) {
  EXPECT_THROW(BuildBvh({}), std::invalid_argument);
  EXPECT_THROW(BuildBvh({Vec3(0.0f), Vec3(1.0f)}), std::invalid_argument);
  EXPECT_THROW(BuildBvh({Vec3(0.0f), Vec3(1.0f), Vec3(2.0f), Vec3(3.0f)}), std::invalid_argument);
  EXPECT_THROW(BuildBvh({Vec3(0.0f), Vec3(1.0f, 0.0f, 0.0f), Vec3(0.0f, std::nanf(""), 0.0f)}), std::invalid_argument);
  EXPECT_THROW(BuildBvh({Vec3(0.0f), Vec3(1.0f, 0.0f, 0.0f), Vec3(0.0f, kInf, 0.0f)}), std::invalid_argument);
}

// ---- structure ------------------------------------------------------------------------------------------

TEST(BvhBuild, SingleTriangleRootHasTheSameLeafTwice) {
  std::vector<Vec3> p = {Vec3(0.0f, 0.0f, 1.0f), Vec3(1.0f, 0.0f, 1.0f), Vec3(0.0f, 1.0f, 1.0f)};
  Bvh bvh = BuildBvh(p);
  ASSERT_EQ(bvh.nodes.size(), 1u);
  const Int4& k = bvh.nodes[0].kids;
  EXPECT_EQ(k.x, 0);
  EXPECT_EQ(k.y, 0);
  EXPECT_EQ(k.z, 1);
  EXPECT_EQ(k.w, 1);
  EXPECT_EQ(bvh.depth, 1);
  ValidateBvh(bvh, p);
  Ray ray{Vec3(0.25f, 0.25f, 0.0f), Vec3(0.0f, 0.0f, 1.0f), kInf, 0};
  HitRecord h = TraverseBvh<false, false>(bvh.View(), ray);
  EXPECT_EQ(h.tri, 0);
  EXPECT_FLOAT_EQ(h.t, 1.0f);
  ray.d = Vec3(0.0f, 0.0f, -1.0f);
  EXPECT_EQ((TraverseBvh<false, false>(bvh.View(), ray).tri), -1);
}

TEST(BvhBuild, IsDeterministic) {
  std::vector<Vec3> p = RandomSoup(5000, 7);
  Bvh a = BuildBvh(p), b = BuildBvh(p);
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  EXPECT_EQ(std::memcmp(a.nodes.data(), b.nodes.data(), a.nodes.size() * sizeof(BvhNode)), 0);
  EXPECT_EQ(a.order, b.order);
  EXPECT_EQ(a.depth, b.depth);
}

TEST(BvhBuild, LeavesRespectTheCapAndSahKeepsTreesShallow) {
  std::vector<Vec3> p = RandomSoup(20000, 11);
  Bvh bvh = BuildBvh(p);
  ValidateBvh(bvh, p);
  int maxLeaf = 0;
  for (const BvhNode& n : bvh.nodes) maxLeaf = std::max({maxLeaf, n.kids.z, n.kids.w});
  EXPECT_LE(maxLeaf, 16);
  // A reasonable SAH tree over 20k mostly well-spread triangles is nowhere near the depth cap.
  EXPECT_LT(bvh.depth, 40);
  printf("20000-triangle soup: %zu nodes, depth %d, largest leaf %d\n", bvh.nodes.size(), bvh.depth, maxLeaf);
}

// HitDistance. For a ray that grazes a triangle's plane the watertight test's t is ill-conditioned and can lie
// before the triangle's own box by more than kCullMargin, while every box test is conservative: a traversal that
// had found a hit a little farther on first would cull that triangle's boxes, one that had not would keep it, so
// the hit depended on the order of the tests (on the GPU, on warp timing: renders of the conference room differed
// run to run). Rays aimed at a random point of a random triangle, nearly in its plane (10^-7 to 10^-1 off it),
// from close by, far from the scene's origin: the raw t falls before the box in some of them (47 of 86,327 hits,
// all on triangles in an axis plane; none on tilted ones), and the hit distance never may.
TEST(HitDistance, GrazingHitsAreNeverNearerThanTheirOwnBox) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f), w(0.0f, 1.0f), logScale(-7.0f, -1.0f), far(0.001f, 2.0f);
  int hits = 0, rawBefore = 0, before = 0;
  for (int i = 0; i < 200000; ++i) {
    const Vec3 base(3000.0f, -2000.0f, 1500.0f);
    // Half of them in an axis plane (a floor), whose box is flat: the ray enters it where it hits the triangle.
    const bool flat = i & 1;
    auto vertex = [&] { return base + Vec3(unit(rng), flat ? 0.0f : unit(rng), unit(rng)); };
    const Vec3 v0 = vertex(), v1 = vertex(), v2 = vertex();
    float a = w(rng), b = w(rng);
    if (a + b > 1.0f) a = 1.0f - a, b = 1.0f - b;
    const Vec3 point = v0 + (v1 - v0) * a + (v2 - v0) * b;
    const Vec3 n = Normalize(Cross(v1 - v0, v2 - v0));
    const Vec3 along = Normalize(Cross(n, Vec3(unit(rng), unit(rng), unit(rng))));
    const Vec3 d = Normalize(along + n * std::pow(10.0f, logScale(rng)));
    const Vec3 o = point - d * far(rng);
    float t, b1, b2;
    if (!IntersectTriangle(PrepareRay(d), o, v0, v1, v2, kInf, t, b1, b2)) continue;
    ++hits;
    const Vec3 inv = SafeInverse(d), lo = Min(Min(v0, v1), v2), hi = Max(Max(v0, v1), v2);
    const float entry = SlabEntry(o, inv, lo.x, hi.x, lo.y, hi.y, lo.z, hi.z, kInf);
    if (entry < 0.0f) continue;  // (a box test that misses a hit would be a bug of its own, caught elsewhere)
    rawBefore += t * kCullMargin < entry;
    before += HitDistance(t, o, inv, v0, v1, v2) * kCullMargin < entry;
  }
  std::printf("grazing rays: %d hits, %d with t before the triangle's box by more than the cull margin\n", hits,
              rawBefore);
  EXPECT_GT(rawBefore, 0) << "no ray showed the case";
  EXPECT_EQ(before, 0);
}

// The wide node test compares slab distances as the integers of their bits (SlabsMeet, core/wide_bvh.h; on Hopper
// with DPX min/max). It must decide as max(near, 0) <= min(far, tmax) in float does, on finite distances of both
// signs, ties and zeros; the one documented difference is a far distance of -0 (a box ending exactly at the origin),
// which the integers call a miss.
TEST(WideNodeTest, SlabsMeetAsIntegersDecidesAsTheFloatComparison) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-10.0f, 10.0f), pick(0.0f, 1.0f);
  float pool[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  auto draw = [&](bool nonNegative) {
    const float p = pick(rng);
    float v = p < 0.1f ? 0.0f : p < 0.3f ? pool[static_cast<int>(pick(rng) * 3.99f)] : value(rng);  // zeros, ties
    if (v == 0.0f) v = 0.0f;                                                                        // never -0 here
    return nonNegative ? std::fabs(v) : v;
  };
  int meets = 0, misses = 0;
  for (int i = 0; i < 200000; ++i) {
    for (float& q : pool) q = value(rng);
    const float nx = draw(false), ny = draw(false), nz = draw(false), fx = draw(false), fy = draw(false),
                fz = draw(false), tmax = draw(true);
    const bool expected =
        std::max(std::max(nx, ny), std::max(nz, 0.0f)) <= std::min(std::min(fx, fy), std::min(fz, tmax));
    ASSERT_EQ(SlabsMeet(nx, ny, nz, fx, fy, fz, tmax), expected)
        << nx << " " << ny << " " << nz << " | " << fx << " " << fy << " " << fz << " " << tmax;
    (expected ? meets : misses)++;
  }
  EXPECT_GT(meets, 5000);
  EXPECT_GT(misses, 10000);
  // Negative near distances (-0 among them) count as 0; a far one of -0 is a miss, of +0 a hit.
  EXPECT_TRUE(SlabsMeet(-0.0f, -1.0f, -2.0f, 0.0f, 1.0f, 1.0f, 1.0f));
  EXPECT_FALSE(SlabsMeet(-0.0f, -1.0f, -2.0f, -0.0f, 1.0f, 1.0f, 1.0f));
  EXPECT_FALSE(SlabsMeet(0.5f, 0.0f, 0.0f, 1.0f, 1.0f, 1.0f, 0.25f));  // beyond tmax
  EXPECT_TRUE(SlabsMeet(0.25f, 0.0f, 0.0f, 1.0f, 1.0f, 1.0f, 0.25f));  // at tmax
}

// The node test folds 2^15 times each plane's step into its offsets (IntersectWideNode), which overflows where a node
// is huge against the ray's step: here nodes 1e18 across and rays parallel to an axis (inverse direction 1e20 on the
// other two). Such a node must count all its children as met, not compute inf - inf and miss them.
TEST(WideNodeTest, HugeNodesAndAxisParallelRaysStillFindTheirHits) {
  std::vector<Vec3> p;
  for (int i = 0; i < 40; ++i) {  // small triangles in the plane x = 0, and far ones up to 1e18 away
    const float y = static_cast<float>(i % 8), z = static_cast<float>(i / 8);
    p.insert(p.end(), {Vec3(0.0f, y, z), Vec3(0.0f, y + 1.0f, z), Vec3(0.0f, y, z + 1.0f)});
    const float far = 1e18f * static_cast<float>(i + 1) / 40.0f;
    p.insert(p.end(), {Vec3(far, far, -far), Vec3(far, 0.9f * far, far), Vec3(-far, far, 0.5f * far)});
  }
  const Bvh bvh = BuildBvh(p);
  const WideBvh wide = BuildWideBvh(p, bvh);
  const WideBvhView wv = wide.View();
  int hits = 0;
  for (int i = 0; i < 40; ++i) {
    const Ray ray{Vec3(-5.0f, static_cast<float>(i % 8) + 0.2f, static_cast<float>(i / 8) + 0.3f),
                  Vec3(1.0f, 0.0f, 0.0f), kInf, i};
    const BruteHit want = BruteClosest(p, ray);
    ASSERT_GE(want.tri, 0);
    ASSERT_NEAR(want.t, 5.0, 1e-5);
    const HitRecord h = TraverseWide<false, false>(wv, ray);
    EXPECT_GE(h.tri, 0) << "ray " << i;
    EXPECT_NEAR(h.t, 5.0f, 1e-5f) << "ray " << i;
    EXPECT_GE((TraverseWide<true, false>(wv, ray).tri), 0) << "ray " << i;
    hits += h.t < 6.0f;
  }
  EXPECT_EQ(hits, 40);
}

// A node of eight random children within a box of random size (2^-12 to 2^11) and place, and each slot's box as the
// node stores it (exactly, in double: box[slot][lo or hi][axis]).
struct RandomWideNode {
  WideNode node;
  double box[kWideSlots][2][3];
};
RandomWideNode MakeRandomWideNode(std::mt19937& rng) {
  std::uniform_real_distribution<float> unit(0.0f, 1.0f), side(-1.0f, 1.0f);
  const float size = std::ldexp(1.0f, static_cast<int>(unit(rng) * 24.0f) - 12);
  const Vec3 at = Vec3(side(rng), side(rng), side(rng)) * (size * 300.0f * unit(rng));
  Vec3 lo[kWideSlots], hi[kWideSlots];
  bool inner[kWideSlots];
  int tris[kWideSlots], childOfSlot[kWideSlots];
  for (int j = 0; j < kWideSlots; ++j) {
    const Vec3 a(unit(rng), unit(rng), unit(rng)), b(unit(rng), unit(rng), unit(rng));
    lo[j] = at + Min(a, b) * size, hi[j] = at + Max(a, b) * size;
    inner[j] = true, tris[j] = 0;
  }
  RandomWideNode r{};
  EXPECT_TRUE(EncodeWideNode(lo, hi, inner, tris, kWideSlots, 0u, 0u, r.node, childOfSlot));
  const float p[3] = {r.node.px, r.node.py, r.node.pz};
  const int e[3] = {r.node.ex - 127, r.node.ey - 127, r.node.ez - 127};
  const uint8_t* q[2][3] = {{r.node.qlox, r.node.qloy, r.node.qloz}, {r.node.qhix, r.node.qhiy, r.node.qhiz}};
  for (int s = 0; s < kWideSlots; ++s)
    for (int h = 0; h < 2; ++h)
      for (int a = 0; a < 3; ++a) r.box[s][h][a] = static_cast<double>(p[a]) + std::ldexp(double(q[h][a][s]), e[a]);
  return r;
}

// Whether IntersectWideNode counts slot s of the node as met by the ray (o, d), with the inverse direction and
// octant the traversal gives it (WideBegin): inner children report at bit 24 + (s ^ oct).
bool WideNodeMeetsSlot(const WideNode& node, int s, const float* o, const float* d) {
  const Ray ray{Vec3(o[0], o[1], o[2]), Vec3(d[0], d[1], d[2]), kInf, 0};
  const WideTraversalState st = WideBegin(ray);
  uint32_t childBase = 0, triBase = 0, imask = 0;
  const uint32_t hits = IntersectWideNode<false>(&node, ray.o, st.inv, st.oct, kInf, childBase, triBase, imask);
  return (hits >> (24u + (static_cast<uint32_t>(s) ^ st.oct)) & 1u) != 0u;
}

// The node test folds 2^15 grid steps into each axis's offset (IntersectWideNode), so the offset and its widening
// round at that scale, up to 0.002 steps each, however near the ray is to the node; the widening must cover them. A
// ray that starts exactly on a child's face and leaves through it meets the child at t = 0 and nowhere else, so
// there a rounding the wrong way is a miss: every such ray here must count its child as met. (Rays that start on a
// wall and leave it are every bounce's; the widening should stay small too, or those rays revisit their wall's
// boxes: docs/PERFORMANCE.md, traversal levers.)
TEST(WideNodeTest, RaysLeavingThroughAChildsFaceMeetItAtTheirOrigin) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f), side(-1.0f, 1.0f);
  int rays = 0, missed = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const RandomWideNode n = MakeRandomWideNode(rng);
    for (int s = 0; s < kWideSlots; ++s) {
      const auto& box = n.box[s];
      for (int face = 0; face < 6; ++face) {
        const int a = face % 3, h = face / 3;
        float o[3], d[3];
        for (int k = 0; k < 3; ++k) {  // inside the face, and leaving through it
          const double t = 0.05 + 0.9 * static_cast<double>(unit(rng));
          o[k] = static_cast<float>(k == a ? box[h][a] : box[0][k] + t * (box[1][k] - box[0][k]));
          d[k] = k == a ? (h ? 1.0f : -1.0f) * (0.05f + unit(rng)) : side(rng);
        }
        if (static_cast<double>(o[a]) != box[h][a]) continue;  // the plane is not a float: not on the face
        ++rays;
        if (!WideNodeMeetsSlot(n.node, s, o, d)) ++missed;
      }
    }
  }
  EXPECT_GT(rays, 150000);
  EXPECT_EQ(missed, 0) << missed << " of " << rays << " rays leaving through a child's face missed it";
}

// The same bound where the rounding of the plane's product counts too (on the CPU, three roundings at the bias's
// scale): rays that graze a child's edge some way from their origin, entering one slab as they leave another. Each
// ray's origin is a float, so whether it meets the box is decided exactly (in long double, with the exact 1 / d);
// every ray that does must count the child as met. This fails with the bias's share of the widening under 0.0029
// grid steps (3 of 480,556 rays missed at 0.0028), where the face test above fails only under 0.0019.
TEST(WideNodeTest, RaysGrazingAChildsEdgeMeetIt) {
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f), side(-1.0f, 1.0f);
  int rays = 0, missed = 0;
  for (int trial = 0; trial < 10000; ++trial) {
    const RandomWideNode n = MakeRandomWideNode(rng);
    for (int s = 0; s < kWideSlots; ++s) {
      const auto& box = n.box[s];
      for (int edge = 0; edge < 12; ++edge) {
        // Before the edge the ray is beyond face (a, ha), after it beyond face (b, hb); c is the third axis.
        const int a = edge % 3, b = (a + 1 + (edge / 3) % 2) % 3, c = 3 - a - b, ha = (edge / 6) % 2, hb = edge % 2;
        double point[3], dir[3];
        point[a] = box[ha][a], point[b] = box[hb][b];
        point[c] = box[0][c] + (0.05 + 0.9 * static_cast<double>(unit(rng))) * (box[1][c] - box[0][c]);
        // Components just under a power of two, so that the reciprocals' mantissas are just over one, where the
        // roundings of s = 2^e inv and its products are the largest part of their values.
        auto justUnder = [&] {
          return std::ldexp(1.0 - std::ldexp(static_cast<double>(unit(rng)), -static_cast<int>(unit(rng) * 22.0f)),
                            -static_cast<int>(unit(rng) * 4.0f));
        };
        dir[a] = (ha ? -1.0 : 1.0) * justUnder();
        dir[b] = (hb ? 1.0 : -1.0) * justUnder();
        dir[c] = static_cast<double>(side(rng));
        const double back = (box[1][a] - box[0][a] + box[1][b] - box[0][b]) * (0.5 + static_cast<double>(unit(rng)));
        float o[3], d[3];
        for (int k = 0; k < 3; ++k)
          d[k] = static_cast<float>(dir[k]), o[k] = static_cast<float>(point[k] - back * static_cast<double>(d[k]));
        long double tNear = 0.0L, tFar = 1e4000L;  // the float ray against the stored box, exactly
        for (int k = 0; k < 3; ++k) {
          if (d[k] == 0.0f) {
            if (o[k] < box[0][k] || o[k] > box[1][k]) tFar = -1.0L;
            continue;
          }
          const long double t0 = (static_cast<long double>(box[0][k]) - o[k]) / d[k],
                            t1 = (static_cast<long double>(box[1][k]) - o[k]) / d[k];
          tNear = std::max(tNear, std::min(t0, t1)), tFar = std::min(tFar, std::max(t0, t1));
        }
        if (tNear > tFar) continue;  // the rounded origin passes the edge outside
        ++rays;
        if (!WideNodeMeetsSlot(n.node, s, o, d)) ++missed;
      }
    }
  }
  EXPECT_GT(rays, 400000);
  EXPECT_EQ(missed, 0) << missed << " of " << rays << " rays grazing a child's edge missed it";
}

// ---- closest hit and any hit against brute force --------------------------------------------------------

struct SoupCase {
  int triangles;
  int rays;
};

class BvhSoup : public ::testing::TestWithParam<SoupCase> {};

TEST_P(BvhSoup, MatchesBruteForce) {
  const SoupCase c = GetParam();
  for (uint32_t seed : {1u, 2u, 3u, 12345u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::vector<Vec3> p = RandomSoup(c.triangles, seed);
    Bvh bvh = BuildBvh(p);
    ValidateBvh(bvh, p);
    const TraversalCounts n = CheckAgainstBruteForce(p, bvh, c.rays, seed * 7919u + 1u);
    // The soup's duplicates, coplanar sheets and shared edges must give the tie rule something to settle.
    if (c.triangles >= 1000) {
      EXPECT_GT(n.exactTies, 0);
    }
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, BvhSoup,
                         ::testing::Values(SoupCase{1, 400}, SoupCase{2, 400}, SoupCase{3, 400}, SoupCase{17, 800},
                                           SoupCase{1000, 2000}, SoupCase{20000, 400}),
                         [](const ::testing::TestParamInfo<SoupCase>& info) {
                           return "Tris" + std::to_string(info.param.triangles);
                         });

// Rays with one or two direction components exactly zero (a camera's centre column or row, axis-aligned probes):
// SafeInverse makes their reciprocal 1e20, which the wide BVH's widened slabs must confine to that axis.
TEST(BvhBuild, AxisParallelRaysMatchBruteForce) {
  const std::vector<Vec3> p = RandomSoup(2000, 42);
  const Bvh bvh = BuildBvh(p);
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const Bounds b = BoundsOf(p);
  std::vector<Ray> rays;
  for (int i = 0; i < 1500; ++i) {
    const Vec3 o = b.lo + (b.hi - b.lo) * Vec3(0.5f + 0.6f * u(rng), 0.5f + 0.6f * u(rng), 0.5f + 0.6f * u(rng));
    Vec3 d(u(rng), u(rng), u(rng));
    const int zeroed = i % 6;  // 0-2: one component zero; 3-5: only one component left
    if (zeroed < 3) {
      (zeroed == 0 ? d.x : zeroed == 1 ? d.y : d.z) = 0.0f;
    } else {
      d = Vec3(zeroed == 3 ? 1.0f : 0.0f, zeroed == 4 ? 1.0f : 0.0f, zeroed == 5 ? 1.0f : 0.0f) *
          (u(rng) < 0 ? -1.0f : 1.0f);
    }
    rays.push_back(Ray{o, d, kInf, i});
  }
  CheckAgainstBruteForce(p, bvh, rays, 9);
}

TEST(BvhBuild, BuildOptionsAllGiveCorrectTrees) {
  std::vector<Vec3> p = RandomSoup(3000, 99);
  for (BvhBuildOptions o :
       {BvhBuildOptions{2, 1, 1.0f, 1.0f}, BvhBuildOptions{8, 8, 1.0f, 1.0f}, BvhBuildOptions{64, 4, 0.3f, 1.0f},
        BvhBuildOptions{1000, 100, 1.0f, 4.0f}, BvhBuildOptions{0, 0, 0.0f, 1.0f}}) {
    SCOPED_TRACE("bins " + std::to_string(o.bins) + " maxLeafSize " + std::to_string(o.maxLeafSize));
    Bvh bvh = BuildBvh(p, o);
    ValidateBvh(bvh, p);
    CheckAgainstBruteForce(p, bvh, 600, 5);
  }
}

// Distinct triangles whose boxes all share one centre: the centroid bounds are a point, so the builder must
// fall back to splitting in index order, and still produce leaves of bounded size.
TEST(BvhBuild, CoincidentCentroidsFallBackToMedianSplits) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(0.1f, 3.0f);
  std::vector<Vec3> p;
  for (int i = 0; i < 1000; ++i) {
    float s = u(rng), h = u(rng), z = u(rng);
    p.push_back(Vec3(-s, -h, -z));
    p.push_back(Vec3(s, -h, z));
    p.push_back(Vec3(0.0f, h, 0.0f));
  }
  Bvh bvh = BuildBvh(p);
  ValidateBvh(bvh, p);
  int maxLeaf = 0;
  for (const BvhNode& n : bvh.nodes) maxLeaf = std::max({maxLeaf, n.kids.z, n.kids.w});
  EXPECT_LE(maxLeaf, 16);
  CheckAgainstBruteForce(p, bvh, 1000, 8);
  // 1000 copies of one triangle: identical centroids and boxes.
  std::vector<Vec3> same;
  for (int i = 0; i < 1000; ++i) {
    same.push_back(Vec3(0.0f, 0.0f, 0.0f));
    same.push_back(Vec3(1.0f, 0.0f, 0.0f));
    same.push_back(Vec3(0.0f, 1.0f, 0.0f));
  }
  Bvh dup = BuildBvh(same);
  ValidateBvh(dup, same);
  CheckAgainstBruteForce(same, dup, 400, 9);
}

// Nested chains of triangle pairs whose size and distance change twentyfold per step: one growing along +x
// up to 1e35, and five shrinking towards the origin along -x, +-y and +-z down to 1e-35. At every level the
// largest remaining pair lands alone in an outer SAH bin and dominates the area, so the SAH peels one pair
// off per level: uncapped, the tree would be 71 levels deep, past the traversal stack. The cap must
// keep it within and the tree must stay correct. Rays start near a random triangle of moderate scale (where
// the float triangle test neither overflows nor underflows), at that triangle's own scale.
TEST(BvhBuild, DepthStaysBelowTheTraversalStackOnPathologicalInput) {
  std::vector<Vec3> p;
  std::vector<float> scale;
  auto cluster = [&](Vec3 at, float size) {
    for (int copy = 0; copy < 2; ++copy) {
      Vec3 o = at + Vec3(0.0f, 0.0f, 0.2f * size * copy);
      p.push_back(o);
      p.push_back(o + Vec3(size, 0.3f * size, 0.0f));
      p.push_back(o + Vec3(0.0f, size, 0.5f * size));
      scale.push_back(size);
    }
  };
  float big = 20.0f, small = 1.0f;
  for (int k = 0; k < 27; ++k, big *= 20.0f, small /= 20.0f) {
    cluster(Vec3(big, 0.0f, 0.0f), 0.1f * big);
    cluster(Vec3(0.0f, small, 0.0f), 0.1f * small);
    cluster(Vec3(0.0f, -small, 0.0f), 0.1f * small);
    cluster(Vec3(0.0f, 0.0f, small), 0.1f * small);
    cluster(Vec3(0.0f, 0.0f, -small), 0.1f * small);
    cluster(Vec3(-small, 0.0f, 0.0f), 0.1f * small);
  }
  Bvh bvh = BuildBvh(p);
  ValidateBvh(bvh, p);
  EXPECT_LT(bvh.depth, kBvhStackSize);
  // The input really is pathological: the tree reaches the depth budget rather than log2(n) levels.
  EXPECT_GT(bvh.depth, 40);
  printf("pathological input: depth %d, %zu nodes\n", bvh.depth, bvh.nodes.size());
  std::mt19937 rng(10);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<Ray> rays;
  for (int i = 0; i < 2000; ++i) {
    int t = std::uniform_int_distribution<int>(0, static_cast<int>(scale.size()) - 1)(rng);
    if (scale[t] > 1e12f || scale[t] < 1e-12f) {
      --i;
      continue;
    }
    float a = u(rng), b = u(rng);
    if (a + b > 1.0f) a = 1.0f - a, b = 1.0f - b;
    Vec3 target = p[3 * t] + (p[3 * t + 1] - p[3 * t]) * a + (p[3 * t + 2] - p[3 * t]) * b;
    Vec3 o = target + RandomDirection(rng) * (scale[t] * (0.05f + u(rng)));
    Vec3 d = i % 2 ? Normalize(target - o) : RandomDirection(rng);
    rays.push_back(Ray{o, d, kInf, i});
  }
  CheckAgainstBruteForce(p, bvh, rays, 11);
}

// A binary tree that is a chain: node i holds triangle i as its left leaf and node i + 1 on its right, the last
// node two leaves. The binary builder never makes one (its depth is capped), so it is built here by hand, to
// drive the wide collapse past its depth bound.
Bvh ChainBvh(int n, std::vector<Vec3>& p) {
  p.clear();
  for (int i = 0; i <= n; ++i) {
    const Vec3 o(static_cast<float>(i), 0.0f, 0.0f);
    p.push_back(o);
    p.push_back(o + Vec3(0.5f, 0.0f, 0.0f));
    p.push_back(o + Vec3(0.0f, 1.0f, 0.0f));
  }
  Bvh bvh;
  auto box = [&](int first, int last, Float4& xy, float& zlo, float& zhi) {
    xy = Float4{static_cast<float>(first), static_cast<float>(last) + 0.5f, 0.0f, 1.0f};
    zlo = 0.0f, zhi = 0.0f;
  };
  for (int i = 0; i < n; ++i) {
    BvhNode node;
    float a, b, c, d;
    box(i, i, node.lxy, a, b);
    box(i + 1, n, node.rxy, c, d);
    node.lrz = Float4{a, b, c, d};
    node.kids = i + 1 < n ? Int4{i, i + 1, 1, 0} : Int4{i, i + 1, 1, 1};
    bvh.nodes.push_back(node);
  }
  for (int t = 0; t <= n; ++t) {
    for (int v = 0; v < 3; ++v) bvh.tris.push_back(Float4{p[3 * t + v].x, p[3 * t + v].y, p[3 * t + v].z, 0.0f});
    bvh.tris[3 * static_cast<size_t>(t)].w = FloatFromBits(static_cast<uint32_t>(t));
    bvh.order.push_back(t);
  }
  bvh.depth = n;
  return bvh;
}

// The wide traversal's stack holds kWideMaxDepth node groups plus the postponed triangle groups it allows
// itself; a deeper tree must be refused with an error, never traversed with a stack that drops nodes. A chain
// of 120 binary levels collapses to a wide tree within the bound, which must then find every hit; one of 600
// levels cannot, and is refused.
TEST(WideBvhBuild, TooDeepTreeIsRejectedAndADeepOneStillTraverses) {
  std::vector<Vec3> p;
  const Bvh chain = ChainBvh(120, p);
  const WideBvh wide = CollapseToWideBvh(chain, chain);
  EXPECT_LE(wide.depth, kWideMaxDepth);
  EXPECT_GT(wide.depth, 10) << "the chain should stay deep after the collapse";
  const WideBvhView wv = wide.View();
  int hits = 0;
  for (int t = 0; t <= 120; ++t) {
    // Down onto triangle t from above its interior; then one ray along the chain, landing far down it.
    const Ray down{Vec3(static_cast<float>(t) + 0.1f, 0.3f, 5.0f), Vec3(0.0f, 0.0f, -1.0f), kInf, t};
    const HitRecord h = TraverseWide<false, false>(wv, down);
    EXPECT_EQ(h.tri, t);
    EXPECT_EQ((TraverseWide<true, false>(wv, down).tri), t);
    hits += h.tri == t;
  }
  const Ray along{Vec3(200.0f, 0.3f, 0.5f), Vec3(-1.0f, 0.0f, -0.0041f), kInf, 0};  // lands on triangle 78
  const BruteHit want = BruteClosest(p, along);
  ASSERT_GE(want.tri, 0);
  EXPECT_EQ((TraverseWide<false, false>(wv, along).tri), want.tri);
  EXPECT_EQ(hits, 121);

  const Bvh tooDeep = ChainBvh(600, p);
  try {
    CollapseToWideBvh(tooDeep, tooDeep);
    ADD_FAILURE() << "a 600-level chain was collapsed without an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("depth"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tracer
