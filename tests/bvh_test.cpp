// @file bvh_test.cpp: BuildBvh and TraverseBvh, BuildWideBvh and TraverseWide, against brute force: structure,
// closest hit, any hit, watertightness.
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

#include "test_util.h"
#include "tracer/core/ray_sort.h"
#include "tracer/core/wide_bvh.h"
#include "tracer/host/aabb.h"
#include "tracer/host/bvh_build.h"
#include "tracer/host/checkpoint.h"  // HashBytes
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

// ---- helpers --------------------------------------------------------------------------------------------

struct BruteHit {
  float t = kInf;
  int tri = -1;  // original index
};

// The input-order oracle: every triangle, in input order, with the same watertight test and strict t < best,
// so the first of several equal-t triangles wins.
BruteHit BruteClosest(const std::vector<Vec3>& p, const Ray& ray) {
  BruteHit best;
  best.t = ray.tmax;
  RayTriPre pre = PrepareRay(ray.d);
  for (size_t i = 0; i < p.size() / 3; ++i) {
    float t, b1, b2;
    if (IntersectTriangle(pre, ray.o, p[3 * i], p[3 * i + 1], p[3 * i + 2], best.t, t, b1, b2) && t < best.t) {
      best.t = t;
      best.tri = static_cast<int>(i);
    }
  }
  return best;
}

// The distance one triangle reports along the ray, or +inf.
float TriangleT(const std::vector<Vec3>& p, int tri, const Ray& ray) {
  RayTriPre pre = PrepareRay(ray.d);
  float t, b1, b2;
  if (IntersectTriangle(pre, ray.o, p[3 * tri], p[3 * tri + 1], p[3 * tri + 2], kInf, t, b1, b2)) return t;
  return kInf;
}

bool BruteOccluded(const std::vector<Vec3>& p, const Ray& ray) {
  RayTriPre pre = PrepareRay(ray.d);
  for (size_t i = 0; i < p.size() / 3; ++i) {
    float t, b1, b2;
    if (IntersectTriangle(pre, ray.o, p[3 * i], p[3 * i + 1], p[3 * i + 2], ray.tmax, t, b1, b2) && t < ray.tmax)
      return true;
  }
  return false;
}

int OriginalIndex(const Bvh& bvh, int bvhTri) { return bvh.order[bvhTri]; }

bool BoxContains(float xmin, float xmax, float ymin, float ymax, float zmin, float zmax, Vec3 p) {
  return p.x >= xmin && p.x <= xmax && p.y >= ymin && p.y <= ymax && p.z >= zmin && p.z <= zmax;
}

// Checks everything the traversal relies on: node indices in range, a tree (each node reached once), leaf
// ranges that cover every triangle exactly once, children inside the box their parent stores for them,
// BVH-ordered triangles that match the input, and a depth below the traversal stack. With `refBoxes` (a
// ReferenceBvh's), a triangle may have several references (each at least one), and each reference's box, not its
// triangle, must lie in its leaf's box.
void ValidateBvh(const Bvh& bvh, const std::vector<Vec3>& p, const std::vector<Aabb>* refBoxes = nullptr) {
  const int n = static_cast<int>(p.size() / 3);
  const int refs = static_cast<int>(bvh.order.size());
  if (refBoxes) {
    ASSERT_GE(refs, n);
    ASSERT_EQ(refBoxes->size(), bvh.order.size());
  } else {
    ASSERT_EQ(refs, n);
  }
  ASSERT_EQ(static_cast<int>(bvh.tris.size()), 3 * refs);
  ASSERT_FALSE(bvh.nodes.empty());
  // order names every triangle (once, without refBoxes), and tris are the input triangles in that order with
  // v0.w = original index.
  std::vector<int> seen(n, 0);
  for (int i = 0; i < refs; ++i) {
    int t = bvh.order[i];
    ASSERT_GE(t, 0);
    ASSERT_LT(t, n);
    ++seen[t];
    EXPECT_EQ(static_cast<int32_t>(BitsFromFloat(bvh.tris[3 * i].w)), t);
    for (int k = 0; k < 3; ++k) {
      const Float4& v = bvh.tris[3 * i + k];
      const Vec3& q = p[3 * t + k];
      EXPECT_TRUE(v.x == q.x && v.y == q.y && v.z == q.z) << "triangle " << i << " vertex " << k;
    }
  }
  for (int i = 0; i < n; ++i) {
    if (refBoxes)
      ASSERT_GE(seen[i], 1) << "triangle " << i << " has no reference";
    else
      ASSERT_EQ(seen[i], 1) << "triangle " << i << " is not in order exactly once";
  }

  std::vector<int> covered(refs, 0), visits(bvh.nodes.size(), 0);
  struct Item {
    int node, depth;
  };
  std::vector<Item> stack{{0, 1}};
  int maxDepth = 0, leafSlots = 0;
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    ASSERT_GE(it.node, 0);
    ASSERT_LT(it.node, static_cast<int>(bvh.nodes.size()));
    ASSERT_EQ(visits[it.node]++, 0) << "node " << it.node << " reached twice";
    const BvhNode& node = bvh.nodes[it.node];
    int kids[2] = {node.kids.x, node.kids.y}, counts[2] = {node.kids.z, node.kids.w};
    float box[2][6] = {{node.lxy.x, node.lxy.y, node.lxy.z, node.lxy.w, node.lrz.x, node.lrz.y},
                       {node.rxy.x, node.rxy.y, node.rxy.z, node.rxy.w, node.lrz.z, node.lrz.w}};
    for (int c = 0; c < 2; ++c) {
      const float* b = box[c];
      ASSERT_GE(counts[c], 0);
      if (counts[c] > 0) {
        ++leafSlots;
        maxDepth = std::max(maxDepth, it.depth);
        ASSERT_GE(kids[c], 0);
        ASSERT_LE(kids[c] + counts[c], refs);
        // The one-triangle root points both children at the same leaf; count it once.
        bool duplicateRootLeaf = it.node == 0 && c == 1 && kids[0] == kids[1] && counts[0] == counts[1];
        for (int k = kids[c]; k < kids[c] + counts[c]; ++k) {
          if (!duplicateRootLeaf) ++covered[k];
          if (refBoxes) {
            const Aabb& r = (*refBoxes)[static_cast<size_t>(k)];
            EXPECT_TRUE(BoxContains(b[0], b[1], b[2], b[3], b[4], b[5], r.lo) &&
                        BoxContains(b[0], b[1], b[2], b[3], b[4], b[5], r.hi))
                << "reference " << k << " outside its leaf's box (node " << it.node << ", child " << c << ")";
            continue;
          }
          for (int v = 0; v < 3; ++v) {
            const Float4& q = bvh.tris[3 * k + v];
            EXPECT_TRUE(BoxContains(b[0], b[1], b[2], b[3], b[4], b[5], Vec3(q.x, q.y, q.z)))
                << "leaf triangle outside its box (node " << it.node << ", child " << c << ")";
          }
        }
      } else {
        ASSERT_GT(kids[c], 0) << "an inner child points back at the root";
        ASSERT_LT(kids[c], static_cast<int>(bvh.nodes.size()));
        const BvhNode& ch = bvh.nodes[kids[c]];
        Vec3 corners[4] = {Vec3(ch.lxy.x, ch.lxy.z, ch.lrz.x), Vec3(ch.lxy.y, ch.lxy.w, ch.lrz.y),
                           Vec3(ch.rxy.x, ch.rxy.z, ch.lrz.z), Vec3(ch.rxy.y, ch.rxy.w, ch.lrz.w)};
        for (Vec3 q : corners)
          EXPECT_TRUE(BoxContains(b[0], b[1], b[2], b[3], b[4], b[5], q))
              << "child box outside its parent's box (node " << it.node << ", child " << c << ")";
        stack.push_back({kids[c], it.depth + 1});
      }
    }
  }
  for (int i = 0; i < refs; ++i) ASSERT_EQ(covered[i], 1) << "BVH slot " << i << " is in " << covered[i] << " leaves";
  for (size_t i = 0; i < visits.size(); ++i) EXPECT_EQ(visits[i], 1) << "node " << i << " is unreachable";
  EXPECT_GE(leafSlots, 1);
  EXPECT_EQ(bvh.depth, maxDepth) << "Bvh::depth should be the number of node levels above the deepest leaf";
  // TraverseBvh keeps at most one pending node per level above the current one.
  EXPECT_LT(maxDepth, kBvhStackSize);
}

Vec3 RandomDirection(std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  while (true) {
    Vec3 d(u(rng), u(rng), u(rng));
    float l2 = Dot(d, d);
    if (l2 > 1e-4f && l2 <= 1.0f) return d * (1.0f / std::sqrt(l2));
  }
}

struct Bounds {
  Vec3 lo{kInf}, hi{-kInf};
};
Bounds BoundsOf(const std::vector<Vec3>& p) {
  Bounds b;
  for (Vec3 q : p) {
    b.lo = Min(b.lo, q);
    b.hi = Max(b.hi, q);
  }
  return b;
}

// Rays of four kinds: random origin and direction; aimed at a random point of a random triangle; axis-aligned
// (exact zero direction components, which exercise SafeInverse); aimed exactly at a vertex.
std::vector<Ray> MakeRays(const std::vector<Vec3>& p, int count, std::mt19937& rng) {
  Bounds b = BoundsOf(p);
  Vec3 ext = b.hi - b.lo;
  float pad = 0.25f * MaxComponent(ext) + 1e-3f;
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  auto inside = [&]() {
    return Vec3(b.lo.x - pad + u(rng) * (ext.x + 2 * pad), b.lo.y - pad + u(rng) * (ext.y + 2 * pad),
                b.lo.z - pad + u(rng) * (ext.z + 2 * pad));
  };
  const int n = static_cast<int>(p.size() / 3);
  std::vector<Ray> rays;
  for (int i = 0; i < count; ++i) {
    Ray r;
    r.o = inside();
    r.tmax = kInf;
    r.index = i;
    int kind = i % 4;
    if (kind == 0) {
      r.d = RandomDirection(rng);
    } else if (kind == 1 || kind == 3) {
      int t = std::uniform_int_distribution<int>(0, n - 1)(rng);
      Vec3 target;
      if (kind == 1) {
        float s = u(rng), q = u(rng);
        if (s + q > 1.0f) s = 1.0f - s, q = 1.0f - q;
        target = p[3 * t] + (p[3 * t + 1] - p[3 * t]) * s + (p[3 * t + 2] - p[3 * t]) * q;
      } else {
        target = p[3 * t + std::uniform_int_distribution<int>(0, 2)(rng)];
      }
      Vec3 d = target - r.o;
      if (Dot(d, d) == 0.0f) d = Vec3(0.0f, 0.0f, 1.0f);
      r.d = Normalize(d);
    } else {
      int axis = std::uniform_int_distribution<int>(0, 5)(rng);
      r.d = Vec3(0.0f);
      r.d[axis % 3] = axis < 3 ? 1.0f : -1.0f;
    }
    rays.push_back(r);
  }
  return rays;
}

// Distance in units in the last place between two non-negative floats.
int UlpDistance(float a, float b) {
  int64_t d = static_cast<int64_t>(BitsFromFloat(a)) - static_cast<int64_t>(BitsFromFloat(b));
  return static_cast<int>(std::min<int64_t>(d < 0 ? -d : d, 1 << 30));
}
constexpr int kTieUlps = 64;

// The traversals' oracle: every triangle of `bvh`, in its order, with their triangle test, hit distance
// (HitDistance) and tie rule (NearerHit): the nearest hit, on the lowest BVH position among equally near ones. `ties`
// counts the other triangles the ray hits at the same t (exact) or within kTieUlps of it (near), which a traversal must
// settle exactly as this does.
struct OracleHit {
  HitRecord hit;
  int exactTies = 0, nearTies = 0;
};
OracleHit BruteClosestInBvhOrder(const Bvh& bvh, const Ray& ray) {
  OracleHit o;
  o.hit = HitRecord{ray.tmax, 0.0f, 0.0f, -1};
  const RayTriPre pre = PrepareRay(ray.d);
  const Vec3 inv = SafeInverse(ray.d);
  std::vector<float> ts;
  for (int k = 0; k < static_cast<int>(bvh.order.size()); ++k) {
    Vec3 v0, v1, v2;
    LoadTriangle<false>(bvh.tris.data(), k, v0, v1, v2);
    float t, b1, b2;
    if (!IntersectTriangle(pre, ray.o, v0, v1, v2, kInf, t, b1, b2)) continue;
    t = HitDistance(t, ray.o, inv, v0, v1, v2);
    ts.push_back(t);
    if (NearerHit(t, k, o.hit)) o.hit = HitRecord{t, b1, b2, k};
  }
  if (o.hit.tri >= 0) {
    for (float t : ts) {
      const int ulps = UlpDistance(t, o.hit.t);
      o.exactTies += ulps == 0;
      o.nearTies += ulps > 0 && ulps <= kTieUlps;
    }
    --o.exactTies;  // the hit itself
  }
  return o;
}

struct TraversalCounts {
  int hits = 0, exactTies = 0, nearTies = 0, occluded = 0;
  size_t refs = 0;  // CheckAgainstBruteForce: the wide BVH's references
};

// Closest hit: exactly the oracle's hit (t, barycentrics and triangle, bit for bit), ties included, so the
// result is a function of the ray and not of the order a traversal tests triangles in (on the GPU that order
// depends on timing). Any hit: occlusion agrees with brute force for rays cut at a random fraction of the
// closest distance. `trace(ray, anyHit)` is the traversal under test; it reports triangles in `bvh`'s order.
template <class Trace>
TraversalCounts CheckTraversal(const std::vector<Vec3>& p, const Bvh& bvh, const std::vector<Ray>& rays, uint32_t seed,
                               const char* name, Trace&& trace) {
  std::mt19937 rng(seed);
  const int rayCount = static_cast<int>(rays.size());
  std::uniform_real_distribution<float> frac(0.05f, 1.5f);
  TraversalCounts n;
  int failures = 0;
  for (const Ray& ray : rays) {
    const OracleHit want = BruteClosestInBvhOrder(bvh, ray);
    const HitRecord got = trace(ray, false);
    const bool ok = got.tri == want.hit.tri &&
                    (got.tri < 0 || (got.t == want.hit.t && got.b1 == want.hit.b1 && got.b2 == want.hit.b2));
    EXPECT_TRUE(ok) << name << " BVH, ray " << ray.index << ": want BVH tri " << want.hit.tri << " t " << want.hit.t
                    << " (" << want.exactTies << " exact, " << want.nearTies << " near ties), got tri " << got.tri
                    << " t " << got.t;
    failures += !ok;
    if (want.hit.tri >= 0) {
      ++n.hits;
      n.exactTies += want.exactTies > 0;
      n.nearTies += want.nearTies > 0;
    }
    // Any hit with a finite tmax, on either side of the closest hit.
    Ray shadow = ray;
    float reference = want.hit.tri >= 0 ? want.hit.t : MaxComponent(BoundsOf(p).hi - BoundsOf(p).lo) + 1.0f;
    shadow.tmax = reference * frac(rng);
    bool occluded = BruteOccluded(p, shadow);
    n.occluded += occluded;
    HitRecord any = trace(shadow, true);
    EXPECT_EQ(any.tri >= 0, occluded) << "ray " << ray.index << " tmax " << shadow.tmax;
    failures += (any.tri >= 0) != occluded;
    if (any.tri >= 0) {
      EXPECT_LT(any.t, shadow.tmax);
      EXPECT_EQ(TriangleT(p, OriginalIndex(bvh, any.tri), shadow), any.t);
    }
    if (failures > 20) {
      ADD_FAILURE() << "too many failures; stopping";
      return n;
    }
  }
  // Enough of each outcome that the comparison means something (MakeRays aims half the rays at triangles).
  if (rayCount >= 100 && p.size() / 3 >= 17) {
    EXPECT_GT(n.hits, rayCount / 4);
    EXPECT_GT(n.occluded, 0);
  }
  printf("  %s BVH: %zu triangles, %d rays: %d hits (%d with exact ties, %d with ties within %d ulps), %d occluded\n",
         name, p.size() / 3, rayCount, n.hits, n.exactTies, n.nearTies, kTieUlps, n.occluded);
  return n;
}

// Both BVHs against brute force: the binary one (TraverseBvh) and the wide one collapsed from a tree of the
// same triangles (TraverseWide, reporting triangles in `bvh`'s order), built with spatial splits (the default).
// Returns the wide BVH's counts (the binary one's are the same rays, so the same ties) and its references
// (triangles counting each copy), which spatial splits make more than the triangles where they split any.
TraversalCounts CheckAgainstBruteForce(const std::vector<Vec3>& p, const Bvh& bvh, const std::vector<Ray>& rays,
                                       uint32_t seed) {
  const BvhView view = bvh.View();
  CheckTraversal(p, bvh, rays, seed, "binary", [&](const Ray& r, bool any) {
    return any ? TraverseBvh<true, false>(view, r) : TraverseBvh<false, false>(view, r);
  });
  const WideBvh wide = BuildWideBvh(p, bvh);
  EXPECT_LE(wide.depth, kWideMaxDepth);
  const WideBvhView wv = wide.View();
  TraversalCounts n = CheckTraversal(p, bvh, rays, seed, "wide", [&](const Ray& r, bool any) {
    return any ? TraverseWide<true, false>(wv, r) : TraverseWide<false, false>(wv, r);
  });
  n.refs = wide.tris.size() / 3;
  printf("  wide BVH: %zu references for %zu triangles\n", n.refs, p.size() / 3);
  return n;
}

TraversalCounts CheckAgainstBruteForce(const std::vector<Vec3>& p, const Bvh& bvh, int rayCount, uint32_t seed) {
  std::mt19937 rng(seed);
  return CheckAgainstBruteForce(p, bvh, MakeRays(p, rayCount, rng), seed + 1);
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

// ---- watertightness -------------------------------------------------------------------------------------

// A cube [-1,1]^3 (scaled and moved) whose faces are n x n grids of quads split into two triangles. Grid
// coordinates are computed from integers the same way for every face, so shared vertices are bit-identical.
std::vector<Vec3> SubdividedCube(int n, Vec3 centre, float halfSize) {
  std::vector<Vec3> p;
  auto coord = [&](int i) { return -1.0f + 2.0f * static_cast<float>(i) / static_cast<float>(n); };
  auto vertex = [&](int axis, float side, int i, int j) {
    Vec3 v;
    v[axis] = side;
    v[(axis + 1) % 3] = coord(i);
    v[(axis + 2) % 3] = coord(j);
    return centre + v * halfSize;
  };
  for (int axis = 0; axis < 3; ++axis)
    for (float side : {-1.0f, 1.0f})
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          Vec3 a = vertex(axis, side, i, j), b = vertex(axis, side, i + 1, j), c = vertex(axis, side, i + 1, j + 1),
               d = vertex(axis, side, i, j + 1);
          // Alternate the diagonal so that both orientations of shared edges occur.
          if ((i + j) % 2 == 0) {
            p.insert(p.end(), {a, b, c, a, c, d});
          } else {
            p.insert(p.end(), {a, b, d, b, c, d});
          }
        }
  return p;
}

// An icosphere: an icosahedron subdivided `levels` times, new vertices pushed to the sphere once and shared
// through a midpoint cache, so neighbouring triangles use bit-identical vertices.
std::vector<Vec3> Icosphere(int levels, Vec3 centre, float radius) {
  const float t = (1.0f + std::sqrt(5.0f)) / 2.0f;
  std::vector<Vec3> v = {Vec3(-1, t, 0), Vec3(1, t, 0), Vec3(-1, -t, 0), Vec3(1, -t, 0),
                         Vec3(0, -1, t), Vec3(0, 1, t), Vec3(0, -1, -t), Vec3(0, 1, -t),
                         Vec3(t, 0, -1), Vec3(t, 0, 1), Vec3(-t, 0, -1), Vec3(-t, 0, 1)};
  for (Vec3& q : v) q = Normalize(q);
  std::vector<std::array<int, 3>> f = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                                       {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                                       {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                                       {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
  for (int l = 0; l < levels; ++l) {
    std::map<std::pair<int, int>, int> mid;
    auto midpoint = [&](int a, int b) {
      auto key = std::make_pair(std::min(a, b), std::max(a, b));
      auto it = mid.find(key);
      if (it != mid.end()) return it->second;
      v.push_back(Normalize(v[a] + v[b]));
      return mid[key] = static_cast<int>(v.size()) - 1;
    };
    std::vector<std::array<int, 3>> g;
    for (auto& tri : f) {
      int a = midpoint(tri[0], tri[1]), b = midpoint(tri[1], tri[2]), c = midpoint(tri[2], tri[0]);
      g.push_back({tri[0], a, c});
      g.push_back({tri[1], b, a});
      g.push_back({tri[2], c, b});
      g.push_back({a, b, c});
    }
    f = g;
  }
  std::vector<Vec3> p;
  for (Vec3& q : v) q = centre + q * radius;
  for (auto& tri : f) p.insert(p.end(), {v[tri[0]], v[tri[1]], v[tri[2]]});
  return p;
}

// From points inside a closed mesh, rays aimed exactly at its vertices and at points on its edges must all
// hit it: the watertight triangle test leaves no gap between neighbours (Woop et al. 2013), and the box
// test must not cull the leaf whose triangle claims the edge.
// Both BVHs: the wide one's boxes are rounded outward to their 8-bit grid, which must not open gaps either.
void CheckWatertight(const std::vector<Vec3>& p, const std::vector<Vec3>& origins, const char* name) {
  Bvh bvh = BuildBvh(p);
  ValidateBvh(bvh, p);
  BvhView view = bvh.View();
  const WideBvh wide = BuildWideBvh(p, bvh);
  const WideBvhView wv = wide.View();
  std::vector<Vec3> targets;
  for (size_t i = 0; i < p.size(); i += 3)
    for (int e = 0; e < 3; ++e) {
      Vec3 a = p[i + e], b = p[i + (e + 1) % 3];
      targets.push_back(a);
      for (float s : {0.5f, 0.25f, 0.125f, 1.0f / 3.0f}) targets.push_back(a + (b - a) * s);
    }
  long rays = 0, leaks = 0, anyLeaks = 0, disagreements = 0;
  for (Vec3 o : origins)
    for (Vec3 target : targets) {
      Vec3 d = target - o;
      HitRecord binaryHit[2];
      for (int variant = 0; variant < 4; ++variant) {
        const bool normalise = variant & 1, useWide = variant & 2;
        auto trace = [&](const Ray& r, bool any) {
          if (useWide) return any ? TraverseWide<true, false>(wv, r) : TraverseWide<false, false>(wv, r);
          return any ? TraverseBvh<true, false>(view, r) : TraverseBvh<false, false>(view, r);
        };
        Ray ray{o, normalise ? Normalize(d) : d, kInf, 0};
        ++rays;
        HitRecord h = trace(ray, false);
        // A ray at an edge or vertex ties between the triangles that share it: both BVHs, testing them in
        // different orders, must settle the tie the same way (NearerHit). Except a ray running exactly in an
        // axis plane: the binary BVH's slab test (unlike the wide one's widened slabs) culls a box whose face
        // lies in that plane ((plane - o) * 1e20 = 0 leaves an empty slab), so it can miss one side of the tie;
        // the triangle on the other side still takes the hit, so the ray does not leak.
        const bool inAxisPlane = d.x == 0.0f || d.y == 0.0f || d.z == 0.0f;
        if (!useWide) {
          binaryHit[normalise] = h;
        } else if (!inAxisPlane && (h.tri != binaryHit[normalise].tri || h.t != binaryHit[normalise].t)) {
          if (++disagreements <= 5)
            ADD_FAILURE() << name << ": ray from (" << o.x << ", " << o.y << ", " << o.z << ") to (" << target.x << ", "
                          << target.y << ", " << target.z << "): wide BVH hit tri " << h.tri << " t " << h.t
                          << ", binary tri " << binaryHit[normalise].tri << " t " << binaryHit[normalise].t
                          << ", brute force tri " << BruteClosestInBvhOrder(bvh, ray).hit.tri;
        }
        if (h.tri < 0) {
          if (++leaks <= 5)
            ADD_FAILURE() << name << (useWide ? " (wide BVH)" : " (binary BVH)") << ": ray from (" << o.x << ", " << o.y
                          << ", " << o.z << ") to (" << target.x << ", " << target.y << ", " << target.z
                          << ") leaves the closed mesh";
        } else {
          // The hit is where the ray was aimed (up to rounding): nothing closer inside a convex mesh.
          float aimed = normalise ? Length(d) : 1.0f;
          EXPECT_NEAR(h.t, aimed, 1e-4f * aimed);
        }
        ray.tmax = (normalise ? Length(d) : 1.0f) * 1.001f;
        if (trace(ray, true).tri < 0) ++anyLeaks;
      }
    }
  EXPECT_EQ(leaks, 0) << name << ": " << leaks << " of " << rays << " closest-hit rays escaped";
  EXPECT_EQ(anyLeaks, 0) << name << ": " << anyLeaks << " of " << rays << " any-hit rays escaped";
  EXPECT_EQ(disagreements, 0) << name << ": " << disagreements << " rays where the two BVHs settled a tie differently";
  printf("%s: %zu triangles, %ld rays at edges and vertices, %ld escaped\n", name, p.size() / 3, rays, leaks);
}

std::vector<Vec3> InteriorOrigins(Vec3 centre, float radius, uint32_t seed, int count) {
  std::mt19937 rng(seed);
  std::vector<Vec3> o = {centre};
  for (int i = 0; i < count; ++i) {
    std::uniform_real_distribution<float> u(0.0f, 0.5f);
    o.push_back(centre + RandomDirection(rng) * (radius * u(rng)));
  }
  return o;
}

TEST(BvhWatertight, SubdividedCubeHasNoGaps) {
  CheckWatertight(SubdividedCube(8, Vec3(0.0f), 1.0f), InteriorOrigins(Vec3(0.0f), 1.0f, 1, 6), "cube");
  // Off the origin and not a power of two in size, so box and triangle arithmetic both round.
  Vec3 c(1000.3f, -47.1f, 3.7f);
  CheckWatertight(SubdividedCube(7, c, 2.9f), InteriorOrigins(c, 2.9f, 2, 6), "moved cube");
}

TEST(BvhWatertight, IcosphereHasNoGaps) {
  CheckWatertight(Icosphere(3, Vec3(0.0f), 1.0f), InteriorOrigins(Vec3(0.0f), 1.0f, 3, 4), "icosphere");
  Vec3 c(-12.5f, 300.25f, 77.0f);
  CheckWatertight(Icosphere(2, c, 5.3f), InteriorOrigins(c, 5.3f, 4, 6), "moved icosphere");
}

// --sort-rays' key: the octant on top, then the origin's cell, interleaved x, y, z from bit 0.
TEST(RaySortKey, OctantAboveInterleavedOriginCells) {
  const Vec3 lo(-1.0f, 0.0f, 10.0f), size(2.0f, 4.0f, 8.0f);
  const Vec3 inv(1.0f / size.x, 1.0f / size.y, 1.0f / size.z);
  const int cells = 1 << kRaySortMortonBits;
  auto key = [&](Vec3 o, Vec3 d) {
    Ray r{};
    r.o = o;
    r.d = d;
    return RaySortKey(r, lo, inv);
  };
  auto cellCentre = [&](int x, int y, int z) {
    return lo + Vec3((x + 0.5f) * size.x, (y + 0.5f) * size.y, (z + 0.5f) * size.z) / static_cast<float>(cells);
  };
  const Vec3 up(1.0f, 1.0f, 1.0f);
  const int shift = 3 * kRaySortMortonBits;
  EXPECT_EQ(key(cellCentre(0, 0, 0), up), 0u);
  EXPECT_EQ(key(cellCentre(1, 0, 0), up), 1u);
  EXPECT_EQ(key(cellCentre(0, 1, 0), up), 2u);
  EXPECT_EQ(key(cellCentre(0, 0, 1), up), 4u);
  EXPECT_EQ(key(cellCentre(2, 0, 0), up), 8u);
  EXPECT_EQ(key(cellCentre(3, 2, 1), up),
            1u | 8u | 16u | 4u);  // x = 0b11 (bits 0, 3), y = 0b10 (bit 4), z = 0b01 (bit 2)
  EXPECT_EQ(key(cellCentre(cells - 1, cells - 1, cells - 1), up), (1u << shift) - 1u);
  EXPECT_EQ(key(cellCentre(0, 0, 0), Vec3(-1.0f, 1.0f, 1.0f)), 1u << shift);
  EXPECT_EQ(key(cellCentre(0, 0, 0), Vec3(1.0f, -1.0f, 1.0f)), 2u << shift);
  EXPECT_EQ(key(cellCentre(0, 0, 0), Vec3(1.0f, 1.0f, -1.0f)), 4u << shift);
  // Outside the bounds: clamped to the nearest cell; NaN: cell 0. Every key fits under the dead slots' key.
  EXPECT_EQ(key(lo - size, up), 0u);
  EXPECT_EQ(key(lo + size * 3.0f, up), (1u << shift) - 1u);
  EXPECT_EQ(key(Vec3(std::nanf(""), lo.y, lo.z), up), 0u);
  EXPECT_EQ(key(lo + size * 3.0f, -up), kRaySortDeadKey);
  EXPECT_EQ(kRaySortDeadKey, (1u << kRaySortKeyBits) - 1u);
}

}  // namespace
}  // namespace tracer
