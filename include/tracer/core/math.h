// @file math.h: the 3-vector algebra used by per-ray code on host and device: GLM's vec3 and a few helpers.
#pragma once
#include <cmath>

#include "tracer/core/common.h"

#ifndef GLM_FORCE_CTOR_INIT
#define GLM_FORCE_CTOR_INIT
#endif
#ifndef GLM_FORCE_XYZW_ONLY
#define GLM_FORCE_XYZW_ONLY
#endif
#ifndef GLM_FORCE_INLINE
#define GLM_FORCE_INLINE
#endif
#include <glm/geometric.hpp>
#include <glm/vec3.hpp>

namespace tracer {

using std::isfinite;
using std::isinf;

// Vec3 is GLM's vec3 (Debian's libglm-dev; GLM compiles for host and device under nvcc, where its functions
// are __host__ __device__). The configuration below is set once, here, before the only include of GLM:
//   GLM_FORCE_CTOR_INIT   Vec3() is (0, 0, 0), as code here assumes (`Vec3 v;` accumulators);
//   GLM_FORCE_XYZW_ONLY   plain x, y, z members, no unions for swizzles, so a Vec3 stays three registers;
//   GLM_FORCE_INLINE      GLM's functions are forced inline like our TRACER_HD ones.
// GLM's operators replace ours, except v / s below.
using Vec3 = glm::vec3;
static_assert(sizeof(Vec3) == 3 * sizeof(float), "Vec3 is three packed floats (hashed and copied as such)");

// Division by a scalar multiplies by its reciprocal, as per-ray code has always done: one reciprocal and
// three multiplications instead of GLM's three IEEE divisions, which are slower on the GPU and would change the
// last bits of every image. Being a non-template function, this overload wins over GLM's operator template.
TRACER_HD Vec3 operator/(Vec3 a, float s) { return a * (1.0f / s); }

TRACER_HD float Dot(Vec3 a, Vec3 b) { return glm::dot(a, b); }
TRACER_HD Vec3 Cross(Vec3 a, Vec3 b) { return glm::cross(a, b); }
TRACER_HD float Length(Vec3 a) { return glm::length(a); }
TRACER_HD Vec3 Normalize(Vec3 a) { return glm::normalize(a); }
// Ours, not glm::min/max: they keep the NaN behaviour the code had (b when a is NaN).
TRACER_HD float Fminf(float a, float b) { return a < b ? a : b; }
TRACER_HD float Fmaxf(float a, float b) { return a > b ? a : b; }
TRACER_HD Vec3 Min(Vec3 a, Vec3 b) { return {Fminf(a.x, b.x), Fminf(a.y, b.y), Fminf(a.z, b.z)}; }
TRACER_HD Vec3 Max(Vec3 a, Vec3 b) { return {Fmaxf(a.x, b.x), Fmaxf(a.y, b.y), Fmaxf(a.z, b.z)}; }
// Component i of v, chosen with selects. Per-ray code indexes with this, never with GLM's operator[]: that is a
// switch returning a reference, which nvcc compiles to branches, and in the watertight triangle test (whose axes
// depend on the ray) the branches made traversal markedly slower (docs/PERFORMANCE.md, design measurements).
TRACER_HD float Axis(Vec3 v, int i) { return i == 0 ? v.x : (i == 1 ? v.y : v.z); }
TRACER_HD float MaxComponent(Vec3 a) { return Fmaxf(a.x, Fmaxf(a.y, a.z)); }
TRACER_HD float Luminance(Vec3 c) { return 0.2126f * c.x + 0.7152f * c.y + 0.0722f * c.z; }
TRACER_HD bool IsBlack(Vec3 c) { return c.x == 0.0f && c.y == 0.0f && c.z == 0.0f; }
TRACER_HD bool IsFinite(Vec3 c) { return isfinite(c.x) && isfinite(c.y) && isfinite(c.z); }
TRACER_HD float Clamp(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }
TRACER_HD float Sqr(float v) { return v * v; }
TRACER_HD float SafeSqrt(float v) { return sqrtf(Fmaxf(v, 0.0f)); }

// Orthonormal basis around a unit normal without branches on its sign
// (Duff et al. 2017, "Building an Orthonormal Basis, Revisited").
struct Frame {
  Vec3 s, t, n;
  TRACER_HD static Frame FromNormal(Vec3 n) {
    float sign = copysignf(1.0f, n.z);
    float a = -1.0f / (sign + n.z);
    float b = n.x * n.y * a;
    Frame f;
    f.s = Vec3(1.0f + sign * n.x * n.x * a, sign * b, -sign * n.x);
    f.t = Vec3(b, sign + n.y * n.y * a, -n.y);
    f.n = n;
    return f;
  }
  // The frame whose first axis is t made perpendicular to n (Gram-Schmidt); FromNormal(n) where t is along n or zero.
  TRACER_HD static Frame FromNormalTangent(Vec3 n, Vec3 t) {
    const Vec3 p = t - n * Dot(n, t);
    const float len = Length(p);
    if (!(len > 1e-12f) || !isfinite(len)) return FromNormal(n);
    Frame f;
    f.s = p / len;
    f.t = Cross(n, f.s);
    f.n = n;
    return f;
  }
  TRACER_HD Vec3 ToLocal(Vec3 v) const { return {Dot(v, s), Dot(v, t), Dot(v, n)}; }
  TRACER_HD Vec3 ToWorld(Vec3 v) const { return s * v.x + t * v.y + n * v.z; }
};

// Offset a ray origin off a surface along the geometric normal by 1e-4 of the position's largest coordinate, so that
// self-intersection is avoided for scenes in millimetres as well as metres; and by at least 1e-4 of `floor`
// (SceneView::offsetFloor, RayOffsetFloor): near the origin a hit point's rounding error is not its own magnitude's
// but its triangle's vertices', which the floor stands for.
TRACER_HD Vec3 OffsetRayOrigin(Vec3 p, Vec3 ng, Vec3 dir, float floor) {
  float scale = 1e-4f * Fmaxf(floor, MaxComponent(Vec3(fabsf(p.x), fabsf(p.y), fabsf(p.z))));
  Vec3 n = Dot(ng, dir) < 0.0f ? -ng : ng;
  return p + n * scale;
}

// OffsetRayOrigin's floor for a scene within [lo, hi]: 1% of its largest coordinate, so that the offset stays
// 1e-6 of the scene's size above the vertices' rounding error (a few 1e-8 of their magnitude), and at most 1, a
// world unit (scenes past 100 units offset as they always have). A fixed floor of 1 made every offset of a small
// scene at least 1e-4 units: 0.1 mm in a scene modelled in metres, wider than the gaps between nested parts (pbrt-v4
// scenes of a coffee maker in metres have glass 26 um inside a metal band), which rays then crossed unseen.
TRACER_HD float RayOffsetFloor(Vec3 lo, Vec3 hi) {
  const float extent = Fmaxf(MaxComponent(Vec3(fabsf(lo.x), fabsf(lo.y), fabsf(lo.z))),
                             MaxComponent(Vec3(fabsf(hi.x), fabsf(hi.y), fabsf(hi.z))));
  return extent > 0.0f && extent < 100.0f ? 0.01f * extent : 1.0f;
}

}  // namespace tracer
