// @file bvh_checks.h: the BVH tests' oracles and checks: brute-force closest and any hit (in input order and in the
// tree's order, with the traversals' tie rule), the tree validator, random rays over a soup, and the traversal
// check against brute force that bvh_test.cpp and spatial_split_test.cpp share.
#pragma once
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
#include "tracer/core/aabb.h"
#include "tracer/core/bvh.h"
#include "tracer/core/wide_bvh.h"
#include "tracer/host/bvh_build.h"
#include "tracer/host/wide_bvh_build.h"

namespace tracer {
struct BruteHit {
  float t = kInf;
  int tri = -1;  // original index
};

// The input-order oracle: every triangle, in input order, with the same watertight test and strict t < best,
// so the first of several equal-t triangles wins.
inline BruteHit BruteClosest(const std::vector<Vec3>& p, const Ray& ray) {
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
inline float TriangleT(const std::vector<Vec3>& p, int tri, const Ray& ray) {
  RayTriPre pre = PrepareRay(ray.d);
  float t, b1, b2;
  if (IntersectTriangle(pre, ray.o, p[3 * tri], p[3 * tri + 1], p[3 * tri + 2], kInf, t, b1, b2)) return t;
  return kInf;
}

inline bool BruteOccluded(const std::vector<Vec3>& p, const Ray& ray) {
  RayTriPre pre = PrepareRay(ray.d);
  for (size_t i = 0; i < p.size() / 3; ++i) {
    float t, b1, b2;
    if (IntersectTriangle(pre, ray.o, p[3 * i], p[3 * i + 1], p[3 * i + 2], ray.tmax, t, b1, b2) && t < ray.tmax)
      return true;
  }
  return false;
}

inline int OriginalIndex(const Bvh& bvh, int bvhTri) { return bvh.order[bvhTri]; }

inline bool BoxContains(float xmin, float xmax, float ymin, float ymax, float zmin, float zmax, Vec3 p) {
  return p.x >= xmin && p.x <= xmax && p.y >= ymin && p.y <= ymax && p.z >= zmin && p.z <= zmax;
}

// Checks everything the traversal relies on: node indices in range, a tree (each node reached once), leaf
// ranges that cover every triangle exactly once, children inside the box their parent stores for them,
// BVH-ordered triangles that match the input, and a depth below the traversal stack. With `refBoxes` (a
// ReferenceBvh's), a triangle may have several references (each at least one), and each reference's box, not its
// triangle, must lie in its leaf's box.
inline void ValidateBvh(const Bvh& bvh, const std::vector<Vec3>& p, const std::vector<Aabb>* refBoxes = nullptr) {
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

inline Vec3 RandomDirection(std::mt19937& rng) {
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
inline Bounds BoundsOf(const std::vector<Vec3>& p) {
  Bounds b;
  for (Vec3 q : p) {
    b.lo = Min(b.lo, q);
    b.hi = Max(b.hi, q);
  }
  return b;
}

// Rays of four kinds: random origin and direction; aimed at a random point of a random triangle; axis-aligned
// (exact zero direction components, which exercise SafeInverse); aimed exactly at a vertex.
inline std::vector<Ray> MakeRays(const std::vector<Vec3>& p, int count, std::mt19937& rng) {
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
inline int UlpDistance(float a, float b) {
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
inline OracleHit BruteClosestInBvhOrder(const Bvh& bvh, const Ray& ray) {
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
inline TraversalCounts CheckAgainstBruteForce(const std::vector<Vec3>& p, const Bvh& bvh, const std::vector<Ray>& rays,
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

inline TraversalCounts CheckAgainstBruteForce(const std::vector<Vec3>& p, const Bvh& bvh, int rayCount, uint32_t seed) {
  std::mt19937 rng(seed);
  return CheckAgainstBruteForce(p, bvh, MakeRays(p, rayCount, rng), seed + 1);
}
}  // namespace tracer
