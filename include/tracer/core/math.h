// @file math.h: the small 3-vector algebra used by per-ray code on host and device.
#pragma once
#include <cmath>

#include "tracer/core/common.h"

namespace tracer {

using std::isfinite;
using std::isinf;

struct Vec3 {
  float x, y, z;
  TRACER_HD Vec3() : x(0), y(0), z(0) {}
  TRACER_HD Vec3(float a, float b, float c) : x(a), y(b), z(c) {}
  TRACER_HD explicit Vec3(float a) : x(a), y(a), z(a) {}
  TRACER_HD float operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }
  TRACER_HD float& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }
};

TRACER_HD Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
TRACER_HD Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
TRACER_HD Vec3 operator-(Vec3 a) { return {-a.x, -a.y, -a.z}; }
TRACER_HD Vec3 operator*(Vec3 a, Vec3 b) { return {a.x * b.x, a.y * b.y, a.z * b.z}; }
TRACER_HD Vec3 operator*(Vec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
TRACER_HD Vec3 operator*(float s, Vec3 a) { return {a.x * s, a.y * s, a.z * s}; }
TRACER_HD Vec3 operator/(Vec3 a, float s) { return a * (1.0f / s); }
TRACER_HD Vec3 operator/(Vec3 a, Vec3 b) { return {a.x / b.x, a.y / b.y, a.z / b.z}; }
TRACER_HD Vec3& operator+=(Vec3& a, Vec3 b) { return a = a + b; }
TRACER_HD Vec3& operator*=(Vec3& a, Vec3 b) { return a = a * b; }
TRACER_HD Vec3& operator*=(Vec3& a, float s) { return a = a * s; }

TRACER_HD float Dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
TRACER_HD Vec3 Cross(Vec3 a, Vec3 b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
TRACER_HD float Length(Vec3 a) { return sqrtf(Dot(a, a)); }
TRACER_HD Vec3 Normalize(Vec3 a) { return a * (1.0f / sqrtf(Dot(a, a))); }
TRACER_HD float Fminf(float a, float b) { return a < b ? a : b; }
TRACER_HD float Fmaxf(float a, float b) { return a > b ? a : b; }
TRACER_HD Vec3 Min(Vec3 a, Vec3 b) { return {Fminf(a.x, b.x), Fminf(a.y, b.y), Fminf(a.z, b.z)}; }
TRACER_HD Vec3 Max(Vec3 a, Vec3 b) { return {Fmaxf(a.x, b.x), Fmaxf(a.y, b.y), Fmaxf(a.z, b.z)}; }
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
  TRACER_HD Vec3 ToLocal(Vec3 v) const { return {Dot(v, s), Dot(v, t), Dot(v, n)}; }
  TRACER_HD Vec3 ToWorld(Vec3 v) const { return s * v.x + t * v.y + n * v.z; }
};

// Offset a ray origin off a surface along the geometric normal, scaled to the position's magnitude,
// so that self-intersection is avoided for scenes in millimetres as well as metres.
TRACER_HD Vec3 OffsetRayOrigin(Vec3 p, Vec3 ng, Vec3 dir) {
  float scale = 1e-4f * Fmaxf(1.0f, MaxComponent(Vec3(fabsf(p.x), fabsf(p.y), fabsf(p.z))));
  Vec3 n = Dot(ng, dir) < 0.0f ? -ng : ng;
  return p + n * scale;
}

}  // namespace tracer
