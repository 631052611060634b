// @file spatial_split.h: what the spatial splits of both BVH builders share (Stich, Friedrich and Dietrich 2009,
// "Spatial Splits in Bounding Volume Hierarchies", HPG): the bins across a box on one axis (SpatialPlanes), a
// triangle's parts in the bins it spans for the split's estimate (ForEachBinPart), and the exact parts on either side
// of the plane that is taken (SplitReference, from a triangle clipped in double precision, ClipPolygon). The host's
// builder (src/host/bvh/bvh_build.cpp) and the GPU builder's split top (kernels/bvh_build/split_top.cu) run the same
// arithmetic, so a reference lands on the same side of a plane in either.
#pragma once
#include <cmath>

#include "tracer/core/aabb.h"

namespace tracer {

// Planes per axis of the spatial split's binning, across the node's box (not its centroids). 8 to 64 bins all gave
// the host's tree SAH costs within 8% of each other on the sports car, the conference room and the bunny, with no
// count best on all of them.
constexpr int kSpatialBins = 32;

// kSpatialBins equal bins across a box on one axis. Bins are found by the planes themselves (not only by scaling),
// so that evaluating a split and performing it put every reference on the same side.
class SpatialPlanes {
 public:
  TRACER_HD SpatialPlanes(const Aabb& box, int axis) : lo_(Axis(box.lo, axis)) {
    const float extent = Axis(box.hi, axis) - lo_, step = extent / static_cast<float>(kSpatialBins);
    valid_ = extent > 0.0f && step > 0.0f && std::isfinite(step);
    inv_ = valid_ ? 1.0f / step : 0.0f;
    for (int k = 0; k <= kSpatialBins; ++k) plane_[k] = lo_ + static_cast<float>(k) * step;
  }
  TRACER_HD bool Valid() const { return valid_; }
  TRACER_HD float Plane(int k) const { return plane_[k]; }
  // The bin holding x: the last with Plane(bin) <= x (the first bin reaching down to -inf, the last up to +inf).
  TRACER_HD int First(float x) const {
    const float f = (x - lo_) * inv_;
    int b = f <= 0.0f ? 0 : f >= kSpatialBins - 1 ? kSpatialBins - 1 : static_cast<int>(f);
    while (b > 0 && x < plane_[b]) --b;
    while (b + 1 < kSpatialBins && x >= plane_[b + 1]) ++b;
    return b;
  }
  // The last bin of a reference that ends at x and starts in bin `first`: one that only touches a plane from
  // below does not reach into the bin above it. So a reference is on both sides of Plane(k) exactly when
  // First(lo) < k <= Last(hi), and then lo < Plane(k) < hi.
  TRACER_HD int Last(float x, int first) const {
    int b = First(x);
    while (b > first && plane_[b] >= x) --b;
    return b;
  }

 private:
  float lo_, inv_ = 0.0f;
  bool valid_ = false;
  float plane_[kSpatialBins + 1];
};

// The floats just below and above x (finite x): a float box around a value rounded to nearest holds the value.
TRACER_HD float NextDown(float x) {
  const uint32_t b = BitsFromFloat(x);
  return x > 0.0f   ? FloatFromBits(b - 1u)
         : x < 0.0f ? FloatFromBits(b + 1u)
                    : -std::numeric_limits<float>::denorm_min();
}
TRACER_HD float NextUp(float x) { return -NextDown(-x); }

// A convex polygon in double precision: a triangle clipped by a few planes. Each point records whether it is one of
// the triangle's vertices (exact) or a computed crossing.
class ClipPolygon {
 public:
  TRACER_HD explicit ClipPolygon(const Vec3* v) : n_(3) {
    for (int k = 0; k < 3; ++k) Set(k, v[k].x, v[k].y, v[k].z, true);
  }
  // Keeps the part on one side of the plane at `bound` on `axis`: below it (keepBelow) or above it (Sutherland and
  // Hodgman 1974, one plane). A polygon that rounding made too ragged to fit is left as it is, which only keeps more
  // than needed.
  TRACER_HD void Clip(int axis, double bound, bool keepBelow) {
    ClipPolygon out;
    int m = 0;
    for (int k = 0; k < n_; ++k) {
      const int r = k + 1 == n_ ? 0 : k + 1;
      const bool inQ = keepBelow ? x_[k][axis] <= bound : x_[k][axis] >= bound;
      const bool inR = keepBelow ? x_[r][axis] <= bound : x_[r][axis] >= bound;
      if (m + 2 > kMaxPoints) return;
      if (inQ) out.Set(m++, x_[k][0], x_[k][1], x_[k][2], exact_[k]);
      if (inQ != inR) {
        const double t = (bound - x_[k][axis]) / (x_[r][axis] - x_[k][axis]);
        double c[3];
        for (int i = 0; i < 3; ++i) c[i] = i == axis ? bound : x_[k][i] + (x_[r][i] - x_[k][i]) * t;
        out.Set(m++, c[0], c[1], c[2], false);
      }
    }
    out.n_ = m;
    *this = out;
  }
  // The float box around the polygon: exact points as they are, computed ones widened by one float step either
  // way (their error in double is far below that), so that it holds the exact polygon. Empty when nothing is left.
  TRACER_HD Aabb Bounds() const {
    Aabb b;
    for (int k = 0; k < n_; ++k) {
      const Vec3 f(static_cast<float>(x_[k][0]), static_cast<float>(x_[k][1]), static_cast<float>(x_[k][2]));
      b.Grow(exact_[k] ? f : Vec3(NextDown(f.x), NextDown(f.y), NextDown(f.z)));
      b.Grow(exact_[k] ? f : Vec3(NextUp(f.x), NextUp(f.y), NextUp(f.z)));
    }
    return b;
  }

 private:
  static constexpr int kMaxPoints = 24;  // a triangle clipped by seven planes has at most ten
  TRACER_HD ClipPolygon() : n_(0) {}
  TRACER_HD void Set(int k, double x, double y, double z, bool exact) {
    x_[k][0] = x, x_[k][1] = y, x_[k][2] = z;
    exact_[k] = exact;
  }
  double x_[kMaxPoints][3];
  bool exact_[kMaxPoints];
  int n_;
};

// The parts below and above `plane` on `axis` of the triangle v[0..2] inside `box` (the reference's box): the
// triangle clipped against the box and then the plane, in double, bounded outward in float and kept inside the box
// and on its side of the plane. They hold the exact parts and are tight: the paper (Stich et al. 2009, section 4.2)
// intersects the box of the triangle's part on each side with the reference's box, which leaves the box larger than
// the part after splits on two axes. Either part is empty when the triangle has none there.
TRACER_HD void SplitReference(const Vec3* v, const Aabb& box, int axis, float plane, Aabb& below, Aabb& above) {
  ClipPolygon part(v);
  for (int a = 0; a < 3; ++a) {
    part.Clip(a, Axis(box.lo, a), false);
    part.Clip(a, Axis(box.hi, a), true);
  }
  ClipPolygon upper = part;
  part.Clip(axis, plane, true);
  upper.Clip(axis, plane, false);
  below = Intersection(part.Bounds(), box);
  above = Intersection(upper.Bounds(), box);
  float* belowHi = axis == 0 ? &below.hi.x : axis == 1 ? &below.hi.y : &below.hi.z;
  float* aboveLo = axis == 0 ? &above.lo.x : axis == 1 ? &above.lo.y : &above.lo.z;
  if (!below.Empty()) *belowHi = Fminf(*belowHi, plane);
  if (!above.Empty()) *aboveLo = Fmaxf(*aboveLo, plane);
}

// For the spatial split's estimate: grow(b, part) for bins first..last (first < last) with the parts of the triangle
// v[0..2] within `box` that lie in them, made of the triangle's cross-sections at the planes between bins (a segment
// from the edge that spans the triangle on `axis` to one of the other two) and the vertices in each bin. Each
// plane's cross-section is computed once; SplitReference makes the exact parts of the split that is taken.
template <typename Grow>
TRACER_HD void ForEachBinPart(const Vec3* v, const Aabb& box, int axis, const SpatialPlanes& planes, int first,
                              int last, Grow grow) {
  int i0 = 0, i1 = 1, i2 = 2;  // vertices by coordinate on the axis
  int t;
  if (Axis(v[i1], axis) < Axis(v[i0], axis)) t = i0, i0 = i1, i1 = t;
  if (Axis(v[i2], axis) < Axis(v[i1], axis)) t = i1, i1 = i2, i2 = t;
  if (Axis(v[i1], axis) < Axis(v[i0], axis)) t = i0, i0 = i1, i1 = t;
  const Vec3 sorted[3] = {v[i0], v[i1], v[i2]};
  const Vec3 &lo = sorted[0], &mid = sorted[1], &hi = sorted[2];
  // The planes between first and last lie strictly inside the box, so inside (lo, hi) on the axis, and each
  // edge used below spans the plane.
  auto at = [axis](Vec3 p, Vec3 q, float x) {
    return p + (q - p) * ((x - Axis(p, axis)) / (Axis(q, axis) - Axis(p, axis)));
  };
  Aabb part;  // of the current bin, starting with its lower cross-section
  for (int b = first; b <= last; ++b) {
    const float below = planes.Plane(b), above = planes.Plane(b + 1);
    for (int k = 0; k < 3; ++k) {
      const float x = Axis(sorted[k], axis);
      if ((b == first || x >= below) && (b == last || x <= above)) part.Grow(sorted[k]);
    }
    Aabb next;
    if (b < last) {
      next.Grow(at(lo, hi, above));
      next.Grow(above <= Axis(mid, axis) ? at(lo, mid, above) : at(mid, hi, above));
      part.Grow(next);
    }
    grow(b, Intersection(part, box));
    part = next;
  }
}

// How much a triangle's box overstates it: the box's half area and the triangle's ideal half area (half the sum of
// its areas projected on the three axis planes, from the edges' cross product in double), both 0 for a triangle with
// a non-finite vertex. The ideal is at most half the box's (a triangle covers at most half of the rectangle around
// it), so a scene's waste, 1 - (sum of ideals) / (sum of boxes), lies in [0.5, 1].
struct TriangleWaste {
  double box, ideal;
};
TRACER_HD TriangleWaste MeasureWaste(const Vec3* v) {
  if (!IsFinite(v[0]) || !IsFinite(v[1]) || !IsFinite(v[2])) return {0.0, 0.0};
  Aabb b;
  for (int k = 0; k < 3; ++k) b.Grow(v[k]);
  const double e1[3] = {static_cast<double>(v[1].x) - v[0].x, static_cast<double>(v[1].y) - v[0].y,
                        static_cast<double>(v[1].z) - v[0].z};
  const double e2[3] = {static_cast<double>(v[2].x) - v[0].x, static_cast<double>(v[2].y) - v[0].y,
                        static_cast<double>(v[2].z) - v[0].z};
  const double cx = e1[1] * e2[2] - e1[2] * e2[1], cy = e1[2] * e2[0] - e1[0] * e2[2],
               cz = e1[0] * e2[1] - e1[1] * e2[0];
  return {b.HalfArea(), 0.5 * (std::fabs(cx) + std::fabs(cy) + std::fabs(cz))};
}

// Whether the GPU builder tries its spatial-split top on a scene, from the sums of its triangles' MeasureWaste: from
// a waste of kSplitTopMinWaste. Measured on the scenes' triangles (docs/PERFORMANCE.md): the sports car 0.79 (long
// thin trim in every direction), the conference room 0.66, the bunny 0.61, a block world 0.50.
constexpr double kSplitTopMinWaste = 0.75;
TRACER_HD bool SplitTopWorthTrying(double boxSum, double idealSum) {
  return boxSum > 0.0 && boxSum - idealSum >= kSplitTopMinWaste * boxSum;
}

}  // namespace tracer
