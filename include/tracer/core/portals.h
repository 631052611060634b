// @file portals.h: environment portals (--env-sampling portals): next-event estimation of the environment through
// the openings of an interior, as a one-sample mixture with the environment's own sampling.
//
// Indoors, the sky reaches a point only through windows and doors, but the environment's own distribution (its
// luminance, or the uniform sphere for a constant sky) sends most shadow rays into walls. A portal is a triangle the
// scene marks over such an opening (OBJ: an object or group named portal...; pbrt-v4: the infinite light's "portal"
// quad); it is not geometry (never intersected or shaded). With probability `mix` next-event estimation picks a
// portal triangle and a uniform point q on it, and takes the direction w from the shaded point toward q; otherwise it
// samples the environment its own way. Every direction is evaluated with the mixture's pdf
//   p(w) = mix p_portal(w) + (1 - mix) p_env(w),
// one-sample MIS with the balance heuristic between the two techniques (Veach and Guibas 1995), which is positive
// wherever p_env is, so the estimator stays unbiased; BSDF-sampled rays that leave the scene (MissItem) take the same
// p(w) for their weight. This is the area-sampling form of the idea of Bitterli, Novak and Jarosz 2015 ("Portal-masked
// environment map sampling"), which pbrt-v4's portal light refines by sampling the map inside the portal's frame.
//
// Which triangle: in proportion to a weight W_i(o) of the ray origin o, the approximate solid angle A_i |cos| / d^2
// that the triangle subtends there (d and cos toward its centroid, capped at 2 pi), so that a window next to a point
// draws the samples that a far one would waste; its naive twin (--naive-portal-pick) weighs by area alone, W_i = A_i.
// A point on triangle i is uniform, density 1 / A_i, so in solid angle from o, where the ray (o, w) crosses the
// triangle at distance t and cosine c to its plane,
//   p_portal(w) = sum over the crossed triangles of W_i(o) / sum_j W_j(o) * t^2 / (A_i |c|).
// Portals seen from either side count (|c|), and a direction through overlapping portals sums them all. Both next-event
// estimation and MissItem compute it from the ray's own origin, OffsetRayOrigin of the shaded point, which depends only
// on the side of the surface that w leaves by: the side of the outgoing direction for the weights a sample is drawn
// with. (A transmitting BSDF's directions to the other side are drawn with the weights of the first side's origin and
// weighed with the other's, 2e-4 of the point's magnitude apart: a relative error of that order, as next-event
// estimation of an emitter has between the shaded point and the offset origin.)
#pragma once
#include "tracer/core/environment.h"
#include "tracer/core/sampling.h"

namespace tracer {

// Portal triangles at most: p_portal loops over all of them for every environment sample and every BSDF-sampled ray
// that leaves the scene. A scene with more fails to load (merge coplanar portals into larger quads).
constexpr int kMaxPortalTriangles = 256;

// The portals' share of environment samples where the scene asks for none (--env-portal-mix auto): kPortalMixMax
// times (1 - 2 k), at least 0, k the environment's concentration (host/env_map.h's EnvConcentration: 0 for a constant
// sky, toward 1 as a sun holds its power). Measured on the hall of make_skyhall.py: under a constant sky shares of 0.75
// to 1 are best and alike; under the sun map of make_sky_hdr.py any share raised the RMSE, since the sun, which holds
// most of the power, is then sampled less often and portals cannot aim at it.
constexpr float kPortalMixMax = 0.9f;

// One portal triangle (48 bytes, three 16-byte loads; the device reads them as SceneView::portals.tris).
struct alignas(16) PortalTri {
  Float4 v0;  // xyz: the first corner; w: the portals' cumulative area fraction up to and including this one (last 1)
  Float4 e1;  // xyz: v1 - v0; w: twice the triangle's area, |e1 x e2|
  Float4 e2;  // xyz: v2 - v0; w: 0
};
static_assert(sizeof(PortalTri) == 48 && alignof(PortalTri) == 16, "portal triangle: three 16-byte loads");

// The scene's portals; count 0 (tris null) when it has none.
struct PortalView {
  const PortalTri* tris;
  int32_t count;
  float area;  // the portals' total area
};

// The xyz of a portal record.
TRACER_HD Vec3 PortalVec(const Float4& f) { return Vec3(f.x, f.y, f.z); }

// Where the ray (o, w) crosses a portal triangle at t > 0: t^2 / (A |cos|), the solid-angle density of a uniform point
// on it (cos between w and its normal); 0 where it does not cross. The crossing is Moller and Trumbore's (1997) test,
// whose determinant is -w.(e1 x e2) = -+2 A |cos|, so the density is 2 t^2 / |det|.
TRACER_HD float PortalCrossing(const PortalTri& tri, Vec3 o, Vec3 w) {
  const Vec3 e1 = PortalVec(tri.e1), e2 = PortalVec(tri.e2);
  const Vec3 pv = Cross(w, e2);
  const float det = Dot(e1, pv);
  if (det == 0.0f) return 0.0f;  // parallel to the portal's plane: it crosses no area
  const float inv = 1.0f / det;
  const Vec3 tv = o - PortalVec(tri.v0);
  const float b1 = Dot(tv, pv) * inv;
  if (b1 < 0.0f || b1 > 1.0f) return 0.0f;
  const Vec3 qv = Cross(tv, e1);
  const float b2 = Dot(w, qv) * inv;
  if (b2 < 0.0f || b1 + b2 > 1.0f) return 0.0f;
  const float t = Dot(e2, qv) * inv;
  return t > 0.0f ? 2.0f * t * t * fabsf(inv) : 0.0f;
}

// A triangle's selection weight at o: its area (byArea, the naive twin), else A |cos| / d^2 toward its centroid, the
// solid angle it subtends while d is large against it, capped at 2 pi (no triangle subtends more) where o is close.
// Next-event estimation and MissItem compute it alike, so its rounding costs efficiency, never correctness.
TRACER_HD float PortalWeight(const PortalTri& tri, Vec3 o, bool byArea) {
  if (byArea) return 0.5f * tri.e1.w;
  const Vec3 e1 = PortalVec(tri.e1), e2 = PortalVec(tri.e2);
  const Vec3 d = PortalVec(tri.v0) + (e1 + e2) * (1.0f / 3.0f) - o;
  const float d2 = Dot(d, d);
  const float w = 0.5f * fabsf(Dot(Cross(e1, e2), d)) / (d2 * sqrtf(d2));
  return w < 2.0f * kPi ? w : 2.0f * kPi;  // (also where d2 is 0: the NaN fails the test)
}

// The sum of the weights at o.
TRACER_HD float PortalWeightTotal(const PortalView& v, Vec3 o, bool byArea) {
  if (byArea) return v.area;
  float total = 0.0f;
  for (int i = 0; i < v.count; ++i) total += PortalWeight(v.tris[i], o, byArea);
  return total;
}

// The portal pdf (solid angle) of unit direction w from o; total: PortalWeightTotal(v, o, byArea) when the caller has
// it, else negative.
TRACER_HD float PortalPdf(const PortalView& v, bool byArea, Vec3 o, Vec3 w, float total = -1.0f) {
  if (total < 0.0f) total = PortalWeightTotal(v, o, byArea);
  if (!(total > 0.0f)) return 0.0f;
  float sum = 0.0f;
  for (int i = 0; i < v.count; ++i) {
    const float c = PortalCrossing(v.tris[i], o, w);
    if (c > 0.0f) sum += PortalWeight(v.tris[i], o, byArea) * c;
  }
  return sum / total;
}

// The mixture's pdf of direction w from o, given the environment's own pdf there.
TRACER_HD float PortalMixturePdf(const PortalView& v, bool byArea, float mix, Vec3 o, Vec3 w, float pdfEnv,
                                 float total = -1.0f) {
  return mix * PortalPdf(v, byArea, o, w, total) + (1.0f - mix) * pdfEnv;
}

// A point on the portals from two uniform numbers: u0 picks triangle i with probability W_i(o) / total (by area: the
// first whose cumulative fraction exceeds u0, by bisection; else the first whose running sum of weights exceeds
// u0 total), and u0's place inside its share with u2 a uniform point on it.
TRACER_HD Vec3 SamplePortalPoint(const PortalView& v, bool byArea, Vec3 o, float total, float u0, float u2) {
  int k = 0;
  float below, share;
  if (byArea) {
    int hi = v.count - 1;
    while (k < hi) {
      const int mid = (k + hi) >> 1;
      if (u0 < v.tris[mid].v0.w)
        hi = mid;
      else
        k = mid + 1;
    }
    below = k > 0 ? v.tris[k - 1].v0.w : 0.0f;
    share = v.tris[k].v0.w - below;
  } else {
    u0 *= total;
    below = 0.0f;
    share = PortalWeight(v.tris[0], o, false);
    while (k + 1 < v.count && !(u0 < below + share && share > 0.0f)) {
      below += share;
      share = PortalWeight(v.tris[++k], o, false);
    }
  }
  const PortalTri& tri = v.tris[k];
  const float u1 = share > 0.0f ? Clamp((u0 - below) / share, 0.0f, 0.99999994f) : 0.0f;
  float b1, b2;
  SampleTriangle(u1, u2, b1, b2);
  return PortalVec(tri.v0) + PortalVec(tri.e1) * b1 + PortalVec(tri.e2) * b2;
}

// A direction toward the environment from point p by the mixture: u1 below mix picks a portal point q (u1 rescaled,
// with u2) by the weights at the ray origin on ng's side (ng: the geometric normal on the side of the outgoing
// direction), and the direction from there toward q; else the environment's own sampling on u1 rescaled. Either way
// the pdf is the mixture's from the ray origin that the shadow ray will have, OffsetRayOrigin(p, ng, wi, offsetFloor).
// A portal point whose direction from the origin leaves by the other side of the surface than q lies (q within the
// offset of the surface's plane) gives no sample (pdf 0): a ray leaving along it would start on the other side.
TRACER_HD EnvSample SampleEnvPortals(const EnvMapView& env, Vec3 constant, const PortalView& v, bool byArea, float mix,
                                     Vec3 p, Vec3 ng, float offsetFloor, float u1, float u2) {
  EnvSample s;
  const Vec3 front = OffsetRayOrigin(p, ng, ng, offsetFloor);  // the origin of every ray that leaves on ng's side
  float total = -1.0f;  // the weights' sum at the shadow ray's origin, when known
  Vec3 o;
  if (u1 < mix) {
    const float frontTotal = PortalWeightTotal(v, front, byArea);
    s.pdf = 0.0f;
    if (!(frontTotal > 0.0f)) return s;
    const Vec3 q = SamplePortalPoint(v, byArea, front, frontTotal, Fminf(u1 / mix, 0.99999994f), u2);
    o = OffsetRayOrigin(p, ng, q - p, offsetFloor);
    const Vec3 d = q - o;
    const float len = Length(d);
    if (!(len > 0.0f)) return s;
    s.wi = d / len;
    if ((Dot(s.wi, ng) < 0.0f) != (Dot(q - p, ng) < 0.0f)) return s;
    if (Dot(q - p, ng) >= 0.0f) total = frontTotal;
  } else {
    s = SampleEnvironment(env, constant, Fminf((u1 - mix) / (1.0f - mix), 0.99999994f), u2);
    if (!(s.pdf > 0.0f)) return s;
    o = OffsetRayOrigin(p, ng, s.wi, offsetFloor);
  }
  // The radiance and the map's pdf as a ray leaving along wi looks them up (EnvRadiance), so that its MIS weight and
  // this sample's agree also on a texel's edge.
  float pdfEnv;
  s.le = EnvRadiance(env, constant, s.wi, pdfEnv);
  s.pdf = PortalMixturePdf(v, byArea, mix, o, s.wi, pdfEnv, total);
  return s;
}

}  // namespace tracer
