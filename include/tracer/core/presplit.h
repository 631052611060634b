// @file presplit.h: triangle pre-splitting for the GPU BVH builder, per triangle and per piece, on host and device:
// after Karras and Aila 2013 ("Fast Parallel Construction of High-Quality Bounding Volume Hierarchies", HPG,
// section 5) and Dammertz and Keller 2008 ("The Edge Volume Heuristic"). Before the Morton sort a long or diagonal
// triangle, whose box is mostly empty, becomes several references, each with the box of its part in one cell of the
// split grid, so that the tree's leaves and the nodes above them overlap less.
//   - PresplitPriority: how badly a triangle's box overstates it, weighted by how coarse a grid plane it crosses;
//   - PresplitWeight, PresplitExtrasUpTo: a global budget of extra references, shared out in proportion to priority
//     by a prefix sum of integer weights, so that it is met exactly whatever the order of the sums;
//   - PresplitPiece: the box of piece j of a triangle's k, found by descending the recursive split from the
//     triangle alone, so that every piece is made by a thread of its own.
// The GPU builder's kernels (kernels/bvh_build/presplit.cu) call these; the CPU tests check them directly.
#pragma once
#include <cmath>
#include <cstdint>

#include "tracer/core/math.h"

namespace tracer {

// Levels of the split grid on each axis: the Morton codes' 21 bits, 2^21 cells.
constexpr int kPresplitLevels = 21;
// The budget (BvhBuildOptions::presplitBudget, extra references per triangle) is clamped to [0, this].
constexpr float kPresplitBudgetMax = 1.0f;
// Vertices a clipped piece may have: a triangle inside an axis-aligned cell has at most 9, and rounding can add
// a near-duplicate per clip; a clip that would pass this keeps the polygon unclipped (only a larger box).
constexpr int kPresplitMaxPoints = 16;
// Steps of a piece's descent at most (a step either halves a cell or splits the pieces between its halves).
constexpr int kPresplitMaxSteps = 128;

// The float just below x and the float just above (finite x).
TRACER_HD float PresplitNextDown(float x) {
  const uint32_t b = BitsFromFloat(x);
  return x > 0.0f ? FloatFromBits(b - 1u) : x < 0.0f ? FloatFromBits(b + 1u) : -FloatFromBits(1u);
}
TRACER_HD float PresplitNextUp(float x) { return -PresplitNextDown(-x); }

// The grid whose planes split triangles: the scene's box, 2^21 cells an axis. Plane m of axis a (m = 0..2^21) is at
// Plane(a, m), a float, non-decreasing in m.
struct PresplitGrid {
  float lo[3], extent[3];
  double invHalfArea;  // 1 / the box's half area; 0 for a box flat on two axes (nothing is split)

  TRACER_HD static PresplitGrid Make(Vec3 lo, Vec3 hi) {
    PresplitGrid g;
    const float l[3] = {lo.x, lo.y, lo.z}, h[3] = {hi.x, hi.y, hi.z};
    for (int a = 0; a < 3; ++a) g.lo[a] = l[a], g.extent[a] = h[a] > l[a] ? h[a] - l[a] : 0.0f;
    const double x = g.extent[0], y = g.extent[1], z = g.extent[2], area = x * y + y * z + z * x;
    g.invHalfArea = area > 0.0 && std::isfinite(area) ? 1.0 / area : 0.0;
    return g;
  }
  TRACER_HD float Plane(int a, int m) const {
    return static_cast<float>(static_cast<double>(lo[a]) +
                              static_cast<double>(extent[a]) * std::ldexp(static_cast<double>(m), -kPresplitLevels));
  }
};

// A grid plane: axis, position, and its Morton bit (3 * level + axis, level 20 the middle plane and 0 the finest),
// the importance of what it cuts; bit < 0: none.
struct PresplitPlane {
  int axis = 0, bit = -1;
  float at = 0.0f;
};

// The coarsest grid plane strictly inside [lo, hi] on axis a (lo < plane < hi), or none.
TRACER_HD PresplitPlane PresplitAxisPlane(const PresplitGrid& g, int a, float lo, float hi) {
  PresplitPlane p;
  constexpr int kCells = 1 << kPresplitLevels;
  if (!(g.extent[a] > 0.0f) || !(lo < hi)) return p;
  const double scale = static_cast<double>(kCells) / g.extent[a];
  const double u0 = (static_cast<double>(lo) - g.lo[a]) * scale, u1 = (static_cast<double>(hi) - g.lo[a]) * scale;
  if (!(u1 > 0.0) || !(u0 < kCells)) return p;
  // First and last planes strictly inside, from the estimates and corrected against the planes themselves; planes
  // that rounding made equal to a bound do not count.
  int first = u0 < 0.0 ? 1 : static_cast<int>(u0 < kCells ? std::floor(u0) : kCells) + 1;
  int last = u1 >= kCells ? kCells - 1 : static_cast<int>(std::ceil(u1)) - 1;
  first = first < 1 ? 1 : first, last = last > kCells - 1 ? kCells - 1 : last;
  for (int step = 0; step < 2 && first > 1 && g.Plane(a, first - 1) > lo; ++step) --first;
  for (int step = 0; step < 2 && first <= last && !(g.Plane(a, first) > lo); ++step) ++first;
  for (int step = 0; step < 2 && last < kCells - 1 && g.Plane(a, last + 1) < hi; ++step) ++last;
  for (int step = 0; step < 2 && last >= first && !(g.Plane(a, last) < hi); ++step) --last;
  if (first > last || !(g.Plane(a, first) > lo) || !(g.Plane(a, last) < hi)) return p;
  // The coarsest of [first, last]: last with the bits below its highest difference from first cleared.
  int m = last;
  const uint32_t diff = static_cast<uint32_t>(first ^ last);
  if (diff) {
    int h = 31;
    while (!((diff >> h) & 1u)) --h;
    m = (last >> h) << h;
  }
  int level = 0;
  while (!((m >> level) & 1)) ++level;
  p.axis = a, p.bit = 3 * level + a, p.at = g.Plane(a, m);
  return p;
}

// The coarsest grid plane strictly inside a box, on any axis (the highest Morton bit), or none.
TRACER_HD PresplitPlane PresplitBoxPlane(const PresplitGrid& g, Vec3 lo, Vec3 hi) {
  PresplitPlane best;
  const float l[3] = {lo.x, lo.y, lo.z}, h[3] = {hi.x, hi.y, hi.z};
  for (int a = 0; a < 3; ++a) {
    const PresplitPlane p = PresplitAxisPlane(g, a, l[a], h[a]);
    if (p.bit > best.bit) best = p;
  }
  return best;
}

// Where a part with box [lo, hi] is cut: of each axis's coarsest grid plane inside it, the one that leaves the thicker
// slab on its thinner side (then the higher Morton bit). The coarsest plane of all can lie next to a face, where it
// would cut off a sliver and leave the rest as it was (a diagonal part reaching just across a middle plane).
TRACER_HD PresplitPlane PresplitCutPlane(const PresplitGrid& g, Vec3 lo, Vec3 hi) {
  PresplitPlane best;
  float bestSlab = -1.0f;
  const float l[3] = {lo.x, lo.y, lo.z}, h[3] = {hi.x, hi.y, hi.z};
  for (int a = 0; a < 3; ++a) {
    const PresplitPlane p = PresplitAxisPlane(g, a, l[a], h[a]);
    if (p.bit < 0) continue;
    const float slab = Fminf(p.at - l[a], h[a] - p.at);
    if (slab > bestSlab || (slab == bestSlab && p.bit > best.bit)) best = p, bestSlab = slab;
  }
  return best;
}

// A convex polygon in double precision: a triangle clipped by axis-aligned planes. Each point records whether it
// is exact (a vertex of the triangle) or computed (a crossing; its coordinate on the crossing's axis is exact).
struct PresplitPolygon {
  double x[kPresplitMaxPoints][3];
  bool exact[kPresplitMaxPoints];
  int n = 0;

  TRACER_HD static PresplitPolygon Triangle(const Vec3* v) {
    PresplitPolygon p;
    for (int k = 0; k < 3; ++k) p.x[k][0] = v[k].x, p.x[k][1] = v[k].y, p.x[k][2] = v[k].z, p.exact[k] = true;
    p.n = 3;
    return p;
  }

  // The part on one side of the plane at `bound` on axis a: below it (keepBelow) or above it (Sutherland and
  // Hodgman 1974, one plane). Leaves out the polygon, which only keeps more than needed, where the points would not
  // fit.
  TRACER_HD PresplitPolygon Clip(int a, double bound, bool keepBelow) const {
    PresplitPolygon out;
    for (int k = 0; k < n; ++k) {
      const int r = k + 1 == n ? 0 : k + 1;
      const bool inQ = keepBelow ? x[k][a] <= bound : x[k][a] >= bound;
      const bool inR = keepBelow ? x[r][a] <= bound : x[r][a] >= bound;
      if (out.n + 2 > kPresplitMaxPoints) return *this;
      if (inQ) out.Push(x[k], exact[k]);
      if (inQ != inR) {
        const double t = (bound - x[k][a]) / (x[r][a] - x[k][a]);
        double c[3];
        for (int i = 0; i < 3; ++i) c[i] = i == a ? bound : x[k][i] + (x[r][i] - x[k][i]) * t;
        out.Push(c, false);
      }
    }
    return out;
  }

  // The float box around the polygon: exact points as they are, computed ones widened by a float step either way
  // (their error in double is far below it), so that it holds the exact polygon; and the box of its points rounded
  // to nearest (near: no wider than the polygon, as far as floats tell). Empty (lo > hi) without points.
  TRACER_HD void Bounds(Vec3& lo, Vec3& hi, Vec3& nearLo, Vec3& nearHi) const {
    lo = nearLo = Vec3(kInf), hi = nearHi = Vec3(-kInf);
    for (int k = 0; k < n; ++k) {
      const Vec3 f(static_cast<float>(x[k][0]), static_cast<float>(x[k][1]), static_cast<float>(x[k][2]));
      nearLo = Min(nearLo, f), nearHi = Max(nearHi, f);
      if (exact[k]) {
        lo = Min(lo, f), hi = Max(hi, f);
        continue;
      }
      lo = Min(lo, Vec3(PresplitNextDown(f.x), PresplitNextDown(f.y), PresplitNextDown(f.z)));
      hi = Max(hi, Vec3(PresplitNextUp(f.x), PresplitNextUp(f.y), PresplitNextUp(f.z)));
    }
  }

  // The sum of its projected areas on the three axis planes: the half area of the boxes of its parts in the limit
  // of ever finer cuts, the least any split can reach (Newell's normal, whose components are those areas).
  TRACER_HD double IdealHalfArea() const {
    double nx = 0.0, ny = 0.0, nz = 0.0;
    for (int k = 0; k < n; ++k) {
      const double* p = x[k];
      const double* q = x[k + 1 == n ? 0 : k + 1];
      nx += (p[1] - q[1]) * (p[2] + q[2]);
      ny += (p[2] - q[2]) * (p[0] + q[0]);
      nz += (p[0] - q[0]) * (p[1] + q[1]);
    }
    return 0.5 * (std::fabs(nx) + std::fabs(ny) + std::fabs(nz));
  }

 private:
  TRACER_HD void Push(const double* c, bool e) {
    x[n][0] = c[0], x[n][1] = c[1], x[n][2] = c[2], exact[n] = e;
    ++n;
  }
};

// Half the area of the box (lo, hi) in double, 0 when empty.
TRACER_HD double PresplitHalfArea(Vec3 lo, Vec3 hi) {
  if (!(lo.x <= hi.x && lo.y <= hi.y && lo.z <= hi.z)) return 0.0;
  const double x = static_cast<double>(hi.x) - lo.x, y = static_cast<double>(hi.y) - lo.y,
               z = static_cast<double>(hi.z) - lo.z;
  return x * y + y * z + z * x;
}

// IdealHalfArea of a triangle, from its edges' cross product: exactly 0 for collinear vertices (the differences of
// floats and their products are exact in double, so equal products cancel), which Newell's sum need not give.
TRACER_HD double PresplitTriangleIdealHalfArea(const Vec3* v) {
  const double e1[3] = {static_cast<double>(v[1].x) - v[0].x, static_cast<double>(v[1].y) - v[0].y,
                        static_cast<double>(v[1].z) - v[0].z};
  const double e2[3] = {static_cast<double>(v[2].x) - v[0].x, static_cast<double>(v[2].y) - v[0].y,
                        static_cast<double>(v[2].z) - v[0].z};
  const double cx = e1[1] * e2[2] - e1[2] * e2[1], cy = e1[2] * e2[0] - e1[0] * e2[2],
               cz = e1[0] * e2[1] - e1[1] * e2[0];
  return 0.5 * (std::fabs(cx) + std::fabs(cy) + std::fabs(cz));
}

// How much triangle v's box overstates it, in [0, 1] of the grid box's half area: its box's half area less its
// ideal one (IdealHalfArea). 0 for a degenerate triangle (no area: collinear vertices), one with a non-finite
// vertex, and a tiny one (its box crosses no grid plane).
TRACER_HD double PresplitExcess(const Vec3* v, const PresplitGrid& g, PresplitPlane* plane = nullptr) {
  if (!IsFinite(v[0]) || !IsFinite(v[1]) || !IsFinite(v[2])) return 0.0;
  const Vec3 lo = Min(v[0], Min(v[1], v[2])), hi = Max(v[0], Max(v[1], v[2]));
  const PresplitPlane p = PresplitBoxPlane(g, lo, hi);
  if (plane) *plane = p;
  const double ideal = PresplitTriangleIdealHalfArea(v);
  if (p.bit < 0 || !(ideal > 0.0)) return 0.0;
  const double excess = (PresplitHalfArea(lo, hi) - ideal) * g.invHalfArea;
  return excess > 0.0 ? (excess < 1.0 ? excess : 1.0) : 0.0;
}

// The split priority of a triangle (Karras and Aila 2013) from its excess and the coarsest plane its box crosses
// (PresplitExcess): (2^i * excess)^(1/3), i the plane's Morton bit (up to 62: a triangle across the middle weighs
// most). 0 (never split) exactly where the excess is. At most 2^(62/3) < 2^21.
TRACER_HD double PresplitPriorityOf(double excess, const PresplitPlane& plane) {
  return excess > 0.0 && plane.bit >= 0 ? std::cbrt(std::ldexp(excess, plane.bit)) : 0.0;
}
TRACER_HD double PresplitPriority(const Vec3* v, const PresplitGrid& g) {
  PresplitPlane p;
  const double excess = PresplitExcess(v, g, &p);
  return PresplitPriorityOf(excess, p);
}

// Whether a scene's triangles are worth pre-splitting, from its waste: the sum of their excesses over the sum of
// their boxes' half areas (both as PresplitExcess measures them). Measured on the host (the wide SAH cost of the
// binned-SAH tree over the references against that over the triangles, budget 0.3; docs/PERFORMANCE.md), splitting
// lowered the cost on every scene from 0.78 up (a car of long thin trim, hair, wires) and raised it on every one
// up to 0.70 (rooms, a terrain, scanned meshes, triangle soups): long thin triangles in every direction gain, rooms of
// large axis-aligned walls and meshes of small, even triangles lose to the extra references.
constexpr double kPresplitMinWaste = 0.75;

// A measure in [0, 1] (of the grid box's half area) as a fixed-point integer, 2^-32 a unit, for sums that come out the
// same in any order: n of them stay below 2^62.
TRACER_HD uint64_t PresplitFixed(double x) {
  const double f = std::floor(std::ldexp(x < 1.0 ? x : 1.0, 32));
  return f > 0.0 ? static_cast<uint64_t>(f) : 0u;
}
// The rule above on the fixed-point sums of the triangles' excesses and box areas.
TRACER_HD bool PresplitWorthIt(uint64_t excessSum, uint64_t boxSum) {
  return boxSum > 0 && static_cast<double>(excessSum) >= kPresplitMinWaste * static_cast<double>(boxSum);
}

// Priorities as integers for an exact prefix sum: floor(priority * 2^scale), with scale such that n of them cannot
// pass 2^63 (PresplitWeightScale).
TRACER_HD int PresplitWeightScale(uint32_t n) {
  int bits = 0;
  while (bits < 32 && (uint64_t(1) << bits) < n) ++bits;
  return 42 - bits;  // weights < 2^(21 + scale), n of them < 2^63
}
TRACER_HD uint64_t PresplitWeight(double priority, int scale) {
  const double w = std::floor(std::ldexp(priority, scale));
  return w > 0.0 ? static_cast<uint64_t>(w) : 0u;
}

// Extra references in the budget (floor(n * budget), the budget clamped to [0, kPresplitBudgetMax]).
TRACER_HD uint32_t PresplitBudgetRefs(uint32_t n, float budget) {
  const float b = budget > 0.0f ? (budget < kPresplitBudgetMax ? budget : kPresplitBudgetMax) : 0.0f;
  return static_cast<uint32_t>(std::floor(static_cast<double>(n) * b));
}

// The extra references of all triangles up to one whose inclusive prefix sum of weights is `prefix` (total: all
// weights): floor(extra * prefix / total), and exactly `extra` at prefix == total. Non-decreasing in prefix, so a
// triangle's own extras, PresplitExtrasUpTo(its prefix) - PresplitExtrasUpTo(the one before), are never negative
// and all of them add up to `extra` (none when no triangle has a weight).
TRACER_HD uint32_t PresplitExtrasUpTo(uint64_t prefix, uint64_t total, uint32_t extra) {
  if (total == 0) return 0;
  if (prefix >= total) return extra;
  const double x = std::floor(static_cast<double>(extra) * (static_cast<double>(prefix) / static_cast<double>(total)));
  return x < static_cast<double>(extra) ? static_cast<uint32_t>(x) : extra;
}

// One piece of a triangle: its box, and the cell of the split grid it was cut to (the grid box narrowed by each
// plane of its descent), which the tests clip the triangle to.
struct PresplitPieceBox {
  Vec3 lo, hi, cellLo, cellHi;
};

// How many of k pieces the part below a plane gets, k >= 2: in proportion to how much each part's box overstates
// it (then to their boxes' areas, then evenly), at least one each.
TRACER_HD int PresplitShare(int k, double below, double above, double areaBelow, double areaAbove) {
  double wb = below > 0.0 ? below : 0.0, wa = above > 0.0 ? above : 0.0;
  if (!(wb + wa > 0.0)) wb = areaBelow, wa = areaAbove;
  const double f = wb + wa > 0.0 ? wb / (wb + wa) : 0.5;
  const int s = static_cast<int>(std::floor(f * k + 0.5));
  return s < 1 ? 1 : s > k - 1 ? k - 1 : s;
}

// Piece j (0 <= j < k) of triangle v split into k: from the whole triangle, each step cuts the current part at a
// grid plane inside its box (PresplitCutPlane) and follows the side that piece j is on, the k pieces shared between the
// sides by PresplitShare, until one piece is left. Its box is the bounds of the triangle clipped to its cell (widened
// by a float step where a point was computed, clamped to the planes), so the pieces' boxes together hold the triangle.
// A part that no plane cuts (it lies within one cell, or rounding leaves a side empty) stops the descent: the pieces
// still to share then get the same box, which is never wrong, only wasted. Shares in proportion to the sides make the
// descent about log2(k) steps deep.
TRACER_HD PresplitPieceBox PresplitPiece(const Vec3* v, const PresplitGrid& g, int k, int j) {
  PresplitPolygon part = PresplitPolygon::Triangle(v);
  PresplitPieceBox out;
  out.lo = Min(v[0], Min(v[1], v[2])), out.hi = Max(v[0], Max(v[1], v[2]));
  out.cellLo = Vec3(g.lo[0], g.lo[1], g.lo[2]);
  out.cellHi = Vec3(g.lo[0] + g.extent[0], g.lo[1] + g.extent[1], g.lo[2] + g.extent[2]);
  // The planes come from the part's points rounded to nearest, not from the widened box: a plane within a float step
  // of a point that lies on it would cut off nothing but the widening.
  Vec3 nearLo = out.lo, nearHi = out.hi;
  for (int step = 0; step < kPresplitMaxSteps && k > 1; ++step) {
    const PresplitPlane p = PresplitCutPlane(g, nearLo, nearHi);
    if (p.bit < 0) break;
    const int a = p.axis;
    PresplitPieceBox side[2] = {out, out};
    Vec3 sideNearLo[2], sideNearHi[2];
    const PresplitPolygon parts[2] = {part.Clip(a, p.at, true), part.Clip(a, p.at, false)};
    double excess[2], area[2];
    for (int s = 0; s < 2; ++s) {
      Vec3 lo, hi;
      parts[s].Bounds(lo, hi, sideNearLo[s], sideNearHi[s]);
      side[s].lo = Max(lo, out.lo), side[s].hi = Min(hi, out.hi);
      if (s == 0)
        side[s].hi[a] = Fminf(side[s].hi[a], p.at), side[s].cellHi[a] = p.at;
      else
        side[s].lo[a] = Fmaxf(side[s].lo[a], p.at), side[s].cellLo[a] = p.at;
      area[s] = PresplitHalfArea(side[s].lo, side[s].hi);
      excess[s] = area[s] - parts[s].IdealHalfArea();
    }
    // A side left empty (not expected: the plane lies strictly between points of the part, rounded to nearest, and
    // rounding keeps order) stops the descent: the pieces still to share keep the whole part's box.
    if (parts[0].n == 0 || parts[1].n == 0) break;
    const int below = PresplitShare(k, excess[0], excess[1], area[0], area[1]);
    const int s = j < below ? 0 : 1;
    k = s == 0 ? below : k - below;
    j = s == 0 ? j : j - below;
    part = parts[s];
    out = side[s];
    nearLo = sideNearLo[s], nearHi = sideNearHi[s];
  }
  return out;
}

}  // namespace tracer
