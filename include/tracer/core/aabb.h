// @file aabb.h: the axis-aligned box the BVH builders grow and measure (the host's and the GPU builder's spatial
// splits).
#pragma once
#include "tracer/core/math.h"

namespace tracer {

struct Aabb {
  Vec3 lo{kInf}, hi{-kInf};
  TRACER_HD void Grow(Vec3 p) {
    lo = Min(lo, p);
    hi = Max(hi, p);
  }
  TRACER_HD void Grow(const Aabb& b) {
    lo = Min(lo, b.lo);
    hi = Max(hi, b.hi);
  }
  TRACER_HD bool Empty() const { return lo.x > hi.x; }
  // Half the surface area: the SAH only needs ratios of areas. Double precision, so that scenes with
  // coordinates past 1e19 (where a float area overflows) still get finite, comparable costs.
  TRACER_HD double HalfArea() const {
    if (Empty()) return 0.0;
    const double x = static_cast<double>(hi.x) - lo.x, y = static_cast<double>(hi.y) - lo.y,
                 z = static_cast<double>(hi.z) - lo.z;
    return x * y + y * z + z * x;
  }
  // Halving each term first cannot overflow for finite input.
  TRACER_HD Vec3 Centre() const { return lo * 0.5f + hi * 0.5f; }
};

// The common part of two boxes; the empty box (Aabb{}) when they do not meet on some axis.
TRACER_HD Aabb Intersection(const Aabb& a, const Aabb& b) {
  const Aabb r{Max(a.lo, b.lo), Min(a.hi, b.hi)};
  return r.lo.x > r.hi.x || r.lo.y > r.hi.y || r.lo.z > r.hi.z ? Aabb{} : r;
}

}  // namespace tracer
