// @file bvh.h: the flat BVH node layout and the closest-hit / any-hit traversal shared by CPU and GPU.
//
// Node layout (64 bytes, four 16-byte loads). Each node holds the boxes of both children, so one node
// fetch tests two boxes (Aila and Laine 2009, "Understanding the Efficiency of Ray Traversal on GPUs"):
//   lxy  = (left.min.x,  left.max.x,  left.min.y,  left.max.y)
//   rxy  = (right.min.x, right.max.x, right.min.y, right.max.y)
//   lrz  = (left.min.z,  left.max.z,  right.min.z, right.max.z)
//   kids = (left, right, leftCount, rightCount): a child with count > 0 is a leaf holding triangles
//          [index, index + count) of the BVH-ordered triangle array; count == 0 means an inner node.
// Node 0 is the root. Triangles are stored in BVH order as three Float4 (v0, v1, v2); v0.w holds the
// triangle's index in the loaded scene as int bits, so results can be reported in the scene's numbering.
#pragma once
#include "tracer/core/ray.h"

namespace tracer {

struct alignas(16) BvhNode {
  Float4 lxy, rxy, lrz;
  Int4 kids;
};
static_assert(sizeof(BvhNode) == 64 && alignof(BvhNode) == 16, "BVH node: four 16-byte loads");

constexpr int kBvhStackSize = 64;  // the builder caps depth below this

struct BvhView {
  const BvhNode* nodes;
  const Float4* tris;  // 3 per triangle, BVH order
  int32_t numNodes;
  int32_t numTris;
};

// Per-ray constants of the watertight test (Woop, Benthin and Wald 2013, JCGT 2(1)): the axes kx, ky, kz (kz the
// direction's largest) and the shear sx, sy, sz. The test's 2D coordinates a[kx] - sx a[kz] and a[ky] - sy a[kz] are
// taken as dot products with two rows fixed per ray, rowX = e_kx - sx e_kz and rowY = e_ky - sy e_kz: three FMA-pipe
// instructions each, where picking a[kx], a[ky] and a[kz] by the ray's axes took selects, which ptxas turned into
// branches (docs/PERFORMANCE.md, traversal levers). Every vertex goes through the same rows, so the test stays
// watertight. kz and sz are kept for the hit's distance, computed only past the edge tests.
struct RayTriPre {
  Vec3 rowX, rowY;
  int kz;
  float sz;
};
// Value v on axis i, 0 on the others.
TRACER_HD Vec3 OnAxis(int i, float v) { return Vec3(i == 0 ? v : 0.0f, i == 1 ? v : 0.0f, i == 2 ? v : 0.0f); }
TRACER_HD float Shear(Vec3 row, Vec3 a) { return row.x * a.x + row.y * a.y + row.z * a.z; }
TRACER_HD RayTriPre PrepareRay(Vec3 d) {
  float ax = fabsf(d.x), ay = fabsf(d.y), az = fabsf(d.z);
  const int kz = (ax > ay) ? (ax > az ? 0 : 2) : (ay > az ? 1 : 2);
  int kx = kz == 2 ? 0 : kz + 1;
  int ky = kx == 2 ? 0 : kx + 1;
  if (Axis(d, kz) < 0.0f) {
    int t = kx;
    kx = ky;
    ky = t;
  }
  RayTriPre p;
  p.rowX = OnAxis(kx, 1.0f) + OnAxis(kz, -(Axis(d, kx) / Axis(d, kz)));
  p.rowY = OnAxis(ky, 1.0f) + OnAxis(kz, -(Axis(d, ky) / Axis(d, kz)));
  p.kz = kz;
  p.sz = 1.0f / Axis(d, kz);
  return p;
}

// The distance a traversal compares a triangle hit by: its t, but never nearer than where the ray enters the
// triangle's own bounding box. The watertight test's t is ill-conditioned for a ray that grazes the triangle's
// plane and can come out several ulps nearer than the triangle's box (and so than every box holding it), while the
// box tests are conservative. Such a hit was found or not depending on which came first: tested before a hit a
// little farther on, it won; after it, its boxes were culled against that hit. The GPU's order depends on warp
// timing (postponed triangle tests, persistent threads), and the conference room at 1080p, 256 spp, flipped one
// or two samples between runs of the same render, one run in two. With this distance a winning hit is never
// nearer than its boxes' entries, which are at most its distance times kCullMargin, so none of them is culled and
// the hit is a function of the ray and the triangles alone. Computed only for a triangle the ray hits. The entry is
// lowered by 2^-21 (about four ulps) first: a triangle in an axis plane (a floor, a wall) is hit exactly where
// its flat box is entered, and the two formulas round a few ulps apart there; those hits keep their t, and the
// entry's three roundings plus this slack stay below kCullMargin.
constexpr float kHitBoxSlack = 1.0f - 1.0f / 2097152.0f;  // 1 - 2^-21
// From the vertices relative to the ray's origin (v - o: min(v) - o is min(v - o), rounding being monotonic). Each
// axis's near plane only, chosen by the direction's sign (SafeInverse keeps inv off zero): a min-or-max per pair
// (one predicated FMNMX on the GPU) and a multiply, 13 instructions in all: a few percent of the trace rates
// (docs/PERFORMANCE.md, design measurements), the price of renders that repeat bit for bit (any-hit rays skip it).
// With both planes of each axis, or after the test from the reloaded vertices, it cost the same.
TRACER_HD float NearPlane(float a, float b, float c, float inv) {
  return (inv >= 0.0f ? Fminf(Fminf(a, b), c) : Fmaxf(Fmaxf(a, b), c)) * inv;
}
TRACER_HD float TriangleBoxEntry(Vec3 a, Vec3 b, Vec3 c, Vec3 inv) {
  return Fmaxf(Fmaxf(NearPlane(a.x, b.x, c.x, inv.x), NearPlane(a.y, b.y, c.y, inv.y)),
               NearPlane(a.z, b.z, c.z, inv.z));
}

// Watertight ray/triangle test. Accepts hits with 0 < t <= tmax (tmax itself, so that a traversal can see a
// tie with its current hit and settle it by NearerHit); both faces. On a hit, writes t and the barycentric
// weights of v1 and v2. kBoxed: t is the hit distance (HitDistance; rayInv = SafeInverse(d)).
template <bool kBoxed>
TRACER_HD bool IntersectTriangleImpl(const RayTriPre& pre, Vec3 o, Vec3 rayInv, Vec3 v0, Vec3 v1, Vec3 v2, float tmax,
                                     float& tOut, float& b1Out, float& b2Out) {
  Vec3 a = v0 - o, b = v1 - o, c = v2 - o;
  float ax = Shear(pre.rowX, a), ay = Shear(pre.rowY, a);
  float bx = Shear(pre.rowX, b), by = Shear(pre.rowY, b);
  float cx = Shear(pre.rowX, c), cy = Shear(pre.rowY, c);
  float u = cx * by - cy * bx;
  float v = ax * cy - ay * cx;
  float w = bx * ay - by * ax;
  // Edge tests that land exactly on zero are redone in double precision, as the paper prescribes.
  if (u == 0.0f || v == 0.0f || w == 0.0f) {
    u = static_cast<float>(static_cast<double>(cx) * by - static_cast<double>(cy) * bx);
    v = static_cast<float>(static_cast<double>(ax) * cy - static_cast<double>(ay) * cx);
    w = static_cast<float>(static_cast<double>(bx) * ay - static_cast<double>(by) * ax);
  }
  if ((u < 0.0f || v < 0.0f || w < 0.0f) && (u > 0.0f || v > 0.0f || w > 0.0f)) return false;
  float det = u + v + w;
  if (det == 0.0f) return false;
  float az = pre.sz * Axis(a, pre.kz), bz = pre.sz * Axis(b, pre.kz), cz = pre.sz * Axis(c, pre.kz);
  float t = u * az + v * bz + w * cz;
  float inv = 1.0f / det;
  t *= inv;
  if (!(t > 0.0f && t <= tmax)) return false;
  // Only for a hit: computed before the edge tests, for every triangle, it cost a fifth of the trace rates.
  tOut = kBoxed ? Fmaxf(t, TriangleBoxEntry(a, b, c, rayInv) * kHitBoxSlack) : t;
  b1Out = v * inv;
  b2Out = w * inv;
  return true;
}
TRACER_HD bool IntersectTriangle(const RayTriPre& pre, Vec3 o, Vec3 v0, Vec3 v1, Vec3 v2, float tmax, float& tOut,
                                 float& b1Out, float& b2Out) {
  return IntersectTriangleImpl<false>(pre, o, Vec3(0.0f), v0, v1, v2, tmax, tOut, b1Out, b2Out);
}
// The traversals' test: for closest hits the hit's t is its HitDistance (the raw t is held against tmax, which
// admits every hit that would win). An any-hit traversal culls nothing by a hit (the first one ends it), so its
// answer does not depend on the order of the tests anyway: it keeps the raw t and saves the cost.
template <bool kAnyHit = false>
TRACER_HD bool IntersectTriangleBoxed(const RayTriPre& pre, Vec3 o, Vec3 inv, Vec3 v0, Vec3 v1, Vec3 v2, float tmax,
                                      float& tOut, float& b1Out, float& b2Out) {
  return IntersectTriangleImpl<!kAnyHit>(pre, o, inv, v0, v1, v2, tmax, tOut, b1Out, b2Out);
}
TRACER_HD float HitDistance(float t, Vec3 o, Vec3 inv, Vec3 v0, Vec3 v1, Vec3 v2) {
  return Fmaxf(t, TriangleBoxEntry(v0 - o, v1 - o, v2 - o, inv) * kHitBoxSlack);
}

// Whether a hit at t on triangle `tri` replaces `hit`: it is nearer, or as near on a lower triangle index.
// Coplanar duplicates and shared edges give hits at exactly equal t; without the second rule the one kept
// would be whichever a traversal happened to test first, which on the GPU depends on warp timing (persistent
// threads, postponed triangle tests) and made two renders of the conference room differ in a few pixels.
// With it the hit is a function of the ray alone, for every traversal and BVH that test the same triangles
// with the same arithmetic, provided no traversal culls a box holding a triangle that would win: see
// kCullMargin and HitDistance. A fresh hit has tri = -1, so nothing ties with the ray's own tmax: hits stay
// strictly below it.
TRACER_HD bool NearerHit(float t, int32_t tri, const HitRecord& hit) {
  return t < hit.t || (t == hit.t && tri < hit.tri);
}

// Widening of a box's exit distance that makes the slab test conservative (Ize 2013, "Robust BVH Ray
// Traversal", JCGT 2(2)): each slab distance carries three roundings (subtract, reciprocal, multiply), so
// the exit is scaled by 1 + 2*gamma(3); 1.0000005f is the next float above that bound. Without it a ray
// through a box's edge or corner (one aimed at a vertex, or crossing a flat box) can be culled although
// the watertight triangle test reports the hit, and the ray leaks through a closed mesh.
constexpr float kSlabExitScale = 1.0000005f;

// Traversals cull boxes against the current hit's t times this, not t itself. A box's entry distance and a
// triangle's t are different formulas that round differently, so the entry of a box holding a triangle that
// lies a few ulps nearer than the current hit (a coplanar overlap, a shared edge) can round above that hit;
// culled at t, the nearer triangle would then be found or not depending on which came first, and the GPU's
// order depends on timing. 1 + 2^-19 (16 ulps of float's 2^-23 spacing at the top of a binade, ~8 above its
// bottom) covers the roundings of a box's entry (three, or none below it: the wide nodes widen theirs) against
// HitDistance, which keeps a hit's distance at or beyond its own box's entry; it costs one multiply per node.
constexpr float kCullMargin = 1.0000019073486328f;  // 1 + 2^-19

// Slab test of one box; returns the entry distance (0 <= entry <= tmax), or -1 when missed.
TRACER_HD float SlabEntry(Vec3 o, Vec3 inv, float xmin, float xmax, float ymin, float ymax, float zmin, float zmax,
                          float tmax) {
  float tx0 = (xmin - o.x) * inv.x, tx1 = (xmax - o.x) * inv.x;
  float ty0 = (ymin - o.y) * inv.y, ty1 = (ymax - o.y) * inv.y;
  float tz0 = (zmin - o.z) * inv.z, tz1 = (zmax - o.z) * inv.z;
  float tnear = Fmaxf(Fmaxf(Fminf(tx0, tx1), Fminf(ty0, ty1)), Fmaxf(Fminf(tz0, tz1), 0.0f));
  float tfar = Fminf(Fminf(Fmaxf(tx0, tx1), Fmaxf(ty0, ty1)), Fmaxf(tz0, tz1)) * kSlabExitScale;
  tfar = Fminf(tfar, tmax);
  return tnear <= tfar ? tnear : -1.0f;
}

TRACER_HD Vec3 SafeInverse(Vec3 d) {
  const float eps = 1e-20f;
  auto inv = [](float x, float e) { return 1.0f / (fabsf(x) > e ? x : copysignf(e, x)); };
  return Vec3(inv(d.x, eps), inv(d.y, eps), inv(d.z, eps));
}

template <bool kLdg>
TRACER_HD void LoadTriangle(const Float4* tris, int i, Vec3& v0, Vec3& v1, Vec3& v2) {
  Float4 a = Load4<kLdg>(&tris[3 * i]), b = Load4<kLdg>(&tris[3 * i + 1]), c = Load4<kLdg>(&tris[3 * i + 2]);
  v0 = Vec3(a.x, a.y, a.z);
  v1 = Vec3(b.x, b.y, b.z);
  v2 = Vec3(c.x, c.y, c.z);
}

// Stack traversal of the two-box nodes. kAnyHit stops at the first hit (shadow rays); kLdg reads nodes
// and triangles through the read-only data cache on the GPU.
// Traversal's hit filter by default: every triangle hit counts. A filter (core/scene_view.h's CutoutFilter) is
// asked at each hit that would be the nearest so far, filter(triangle, b1, b2), and false lets the ray pass on.
struct AcceptAllHits {
  TRACER_HD bool operator()(int32_t, float, float) const { return true; }
};

template <bool kAnyHit, bool kLdg, class Filter = AcceptAllHits>
TRACER_HD HitRecord TraverseBvh(const BvhView& bvh, const Ray& ray, const Filter& accept = Filter{}) {
  HitRecord hit{ray.tmax, 0.0f, 0.0f, -1};
  const RayTriPre pre = PrepareRay(ray.d);
  const Vec3 inv = SafeInverse(ray.d);
  int stack[kBvhStackSize];
  int sp = 0;
  int node = 0;
  while (true) {
    const BvhNode* n = &bvh.nodes[node];
    Float4 lxy = Load4<kLdg>(&n->lxy), rxy = Load4<kLdg>(&n->rxy), lrz = Load4<kLdg>(&n->lrz);
    Int4 kids = Load4<kLdg>(&n->kids);
    const float cull = hit.t * kCullMargin;
    float tl = SlabEntry(ray.o, inv, lxy.x, lxy.y, lxy.z, lxy.w, lrz.x, lrz.y, cull);
    float tr = SlabEntry(ray.o, inv, rxy.x, rxy.y, rxy.z, rxy.w, lrz.z, lrz.w, cull);
    int next = -1;
    int children[2] = {kids.x, kids.y};
    int counts[2] = {kids.z, kids.w};
    float entry[2] = {tl, tr};
    // Visit leaves at once; of the inner children, go to the nearer and push the farther.
    int innerNear = -1, innerFar = -1;
    float tNear = kInf;
    for (int c = 0; c < 2; ++c) {
      if (!(entry[c] >= 0.0f && entry[c] <= hit.t * kCullMargin)) continue;  // missed, or beyond a hit found since
      if (counts[c] > 0) {
        for (int k = children[c], end = children[c] + counts[c]; k < end; ++k) {
          Vec3 v0, v1, v2;
          LoadTriangle<kLdg>(bvh.tris, k, v0, v1, v2);
          float t, b1, b2;
          if (IntersectTriangleBoxed<kAnyHit>(pre, ray.o, inv, v0, v1, v2, hit.t, t, b1, b2) && NearerHit(t, k, hit) &&
              accept(k, b1, b2)) {
            hit = HitRecord{t, b1, b2, k};
            if (kAnyHit) return hit;
          }
        }
      } else if (innerNear < 0) {
        innerNear = children[c];
        tNear = entry[c];
      } else if (entry[c] < tNear) {
        innerFar = innerNear;
        innerNear = children[c];
      } else {
        innerFar = children[c];
      }
    }
    if (innerFar >= 0 && sp < kBvhStackSize) stack[sp++] = innerFar;
    next = innerNear;
    if (next < 0) {
      if (sp == 0) break;
      next = stack[--sp];
    }
    node = next;
  }
  return hit;
}

}  // namespace tracer
