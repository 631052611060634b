// @file bvh_watertight_test.cpp: no ray slips between the triangles of closed meshes that share their vertices
// (a subdivided cube, an icosphere), from inside and outside, on both BVH layouts; and the ray-sort key's order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "bvh_checks.h"
#include "test_util.h"
#include "tracer/core/bvh.h"
#include "tracer/core/ray_sort.h"
#include "tracer/core/wide_bvh.h"
#include "tracer/host/bvh_build.h"
#include "tracer/host/wide_bvh_build.h"

namespace tracer {
namespace {

using test::RandomSoup;
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
