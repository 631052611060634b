// @file environment.h: the environment as a light: radiance of rays that leave the scene (a constant colour or a
// lat-long map), and sampling a direction toward it for next-event estimation, with its solid-angle pdf (for MIS).
//
// Convention of the map (documented in docs/RENDERING.md): +y is up; row 0 of the image is the zenith (+y),
// the last row the nadir; the centre column looks along -z and u grows towards +x (u = 0.75 is +x, u = 0 and 1
// are +z). --env-rotate turns the map about +y by the right-hand rule: at 90 degrees what was at +x is at -z.
//
// Sampling a map: a 2D piecewise-constant distribution over its texels, proportional to the texel's luminance
// times sin(theta) of its row centre (the solid angle a texel covers shrinks towards the poles), drawn as a row
// from the marginal cdf and a column from that row's conditional cdf, then uniformly inside the texel in (u, v)
// (Pharr, Jakob and Humphreys, Physically Based Rendering, 3rd ed., sec. 13.6.7 and 14.2.4). Since
// dOmega = 2 pi^2 sin(theta) du dv, the solid-angle pdf is pmf(texel) W H / (2 pi^2 sin(theta)).
// A constant environment is sampled uniformly over the sphere (pdf 1 / 4 pi).
#pragma once
#include "tracer/core/math.h"

namespace tracer {

// The environment's scalars; plain data, broadcast as bytes by an MPI job.
struct EnvParams {
  int32_t width, height;  // of the map; 0 x 0: no map (the constant SceneView::environment)
  float cosRot, sinRot;   // --env-rotate: the map frame is the world turned by this angle about +y
  float pick;             // probability that next-event estimation picks the environment (0: no environment light)
  float portalMix;        // the portals' share of its samples under --env-portal-mix auto (core/portals.h)
};

struct EnvMapView {
  const Float4* texels;         // width x height, row 0 at the top; xyz radiance (scaled), w the texel's pmf
  const float* marginalCdf;     // height + 1 entries, 0 ... 1: the rows
  const float* conditionalCdf;  // height rows of width + 1 entries, 0 ... 1: the columns of each row
  EnvParams p;
};

// The direction (map frame) of map coordinates (u, v) in [0, 1]^2; sinTheta = sin(pi v).
TRACER_HD Vec3 EnvDirection(float u, float v, float& sinTheta) {
  const float theta = kPi * v, phi = 2.0f * kPi * (u - 0.5f);
  sinTheta = sinf(theta);
  return Vec3(sinTheta * sinf(phi), cosf(theta), -sinTheta * cosf(phi));
}

// The map coordinates (u, v) of a unit direction in the map frame (EnvDirection's inverse).
TRACER_HD void EnvCoords(Vec3 d, float& u, float& v) {
  u = atan2f(d.x, -d.z) * (0.5f * kInvPi) + 0.5f;
  v = acosf(Clamp(d.y, -1.0f, 1.0f)) * kInvPi;
}

// World to map frame (a rotation by -angle about +y) and back.
TRACER_HD Vec3 EnvToMap(const EnvParams& p, Vec3 w) {
  return Vec3(p.cosRot * w.x - p.sinRot * w.z, w.y, p.sinRot * w.x + p.cosRot * w.z);
}
TRACER_HD Vec3 EnvToWorld(const EnvParams& p, Vec3 m) {
  return Vec3(p.cosRot * m.x + p.sinRot * m.z, m.y, -p.sinRot * m.x + p.cosRot * m.z);
}

// The texel (x, y) that direction d (map frame) falls in.
TRACER_HD int EnvTexelOf(const EnvParams& p, Vec3 d) {
  float u, v;
  EnvCoords(d, u, v);
  int x = static_cast<int>(u * static_cast<float>(p.width)), y = static_cast<int>(v * static_cast<float>(p.height));
  x = x < 0 ? 0 : (x >= p.width ? p.width - 1 : x);
  y = y < 0 ? 0 : (y >= p.height ? p.height - 1 : y);
  return y * p.width + x;
}

// Solid-angle pdf of a map texel's pmf at a direction whose sin(theta) is sinTheta.
TRACER_HD float EnvMapPdf(const EnvParams& p, float pmf, float sinTheta) {
  return sinTheta > 0.0f
             ? pmf * static_cast<float>(p.width) * static_cast<float>(p.height) / (2.0f * kPi * kPi * sinTheta)
             : 0.0f;
}

// Radiance arriving from world direction d (unit), and the solid-angle pdf of sampling it by SampleEnvironment
// (before the pick probability).
TRACER_HD Vec3 EnvRadiance(const EnvMapView& env, Vec3 constant, Vec3 d, float& pdf) {
  if (env.p.width == 0) {
    pdf = 1.0f / (4.0f * kPi);
    return constant;
  }
  const Vec3 m = EnvToMap(env.p, d);
  const Float4 t = env.texels[EnvTexelOf(env.p, m)];
  pdf = EnvMapPdf(env.p, t.w, SafeSqrt(1.0f - m.y * m.y));
  return Vec3(t.x, t.y, t.z);
}

// Inverts a cdf of n bins (n + 1 entries from 0 to 1) at u in [0, 1): the bin i with cdf[i] <= u < cdf[i+1] (never
// an empty one), and where u falls inside it, in [0, 1).
TRACER_HD int SampleCdf(const float* cdf, int n, float u, float& frac) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {  // the last i in [0, n) with cdf[i] <= u
    const int mid = (lo + hi + 1) >> 1;
    if (cdf[mid] <= u)
      lo = mid;
    else
      hi = mid - 1;
  }
  const float width = cdf[lo + 1] - cdf[lo];
  frac = width > 0.0f ? Clamp((u - cdf[lo]) / width, 0.0f, 0.99999994f) : 0.0f;
  return lo;
}

struct EnvSample {
  Vec3 wi;    // world direction toward the environment
  Vec3 le;    // radiance arriving along it
  float pdf;  // solid angle, before the pick probability; 0: no sample
};

// A direction toward the environment from two uniform numbers.
TRACER_HD EnvSample SampleEnvironment(const EnvMapView& env, Vec3 constant, float u1, float u2) {
  EnvSample s;
  if (env.p.width == 0) {  // uniform over the sphere
    const float z = 1.0f - 2.0f * u1, r = SafeSqrt(1.0f - z * z), phi = 2.0f * kPi * u2;
    s.wi = Vec3(r * cosf(phi), r * sinf(phi), z);
    s.le = constant;
    s.pdf = 1.0f / (4.0f * kPi);
    return s;
  }
  const int w = env.p.width, h = env.p.height;
  float fy, fx;
  const int y = SampleCdf(env.marginalCdf, h, u1, fy);
  const int x = SampleCdf(env.conditionalCdf + static_cast<size_t>(y) * (w + 1), w, u2, fx);
  float sinTheta;
  const Vec3 m = EnvDirection((static_cast<float>(x) + fx) / static_cast<float>(w),
                              (static_cast<float>(y) + fy) / static_cast<float>(h), sinTheta);
  const Float4 t = env.texels[y * w + x];
  s.wi = EnvToWorld(env.p, m);
  s.le = Vec3(t.x, t.y, t.z);
  s.pdf = EnvMapPdf(env.p, t.w, sinTheta);
  return s;
}

}  // namespace tracer
