// @file portals.h: environment portals (--env-sampling portals): next-event estimation of the environment through
// the openings of an interior, as a one-sample mixture with the environment's own sampling.
//
// Indoors, the sky reaches a point only through windows and doors, but the environment's own distribution (its
// luminance, or the uniform sphere for a constant sky) sends most shadow rays into walls. A portal is a triangle the
// scene marks over such an opening (OBJ: an object or group named portal...; pbrt-v4: the infinite light's "portal"
// quad); it is not geometry (never intersected or shaded). With probability `mix` next-event estimation picks a
// portal piece and a uniform point q on it, and takes the direction w from the shaded point toward q; otherwise it
// samples the environment its own way. Every direction is evaluated with the mixture's pdf
//   p(w) = mix p_portal(w) + (1 - mix) p_env(w),
// one-sample MIS with the balance heuristic between the two techniques (Veach and Guibas 1995), which is positive
// wherever p_env is, so the estimator stays unbiased; BSDF-sampled rays that leave the scene (MissItem) take the same
// p(w) for their weight. This is the area-sampling form of the idea of Bitterli, Novak and Jarosz 2015 ("Portal-masked
// environment map sampling"), which pbrt-v4's portal light refines by sampling the map inside the portal's frame.
//
// The portal triangles become pieces: two consecutive triangles that together form a parallelogram (a window's quad,
// as the loaders split it) are one piece, any other triangle one. Which piece: with probability P_i(o) for the ray
// origin o, read from a lattice that the host fills once (host/scene_data.h's BuildPortalLattice): at each vertex x of
// a lattice over the scene's bounds, P_i(x) is piece i's solid angle seen from x (exact: Van Oosterom and Strackee
// 1983) over the sum of all of theirs, so that a window next to a point draws the samples that a far one would waste.
// P_i(o) interpolates the eight vertices around o trilinearly; it sums to 1 over i and changes continuously with o.
// Each vertex keeps a table per facing (PortalFacing): a surface whose geometric normal lies nearest +x, -x, +y, -y,
// +z or -z receives light only from that axis's side, where a piece contributes its projected solid angle (the
// integral of the cosine to the axis over the directions through it, clipped to the hemisphere: Lambert's polygon
// formula), so there the shares are those of the projected solid angle, mixed with kPortalSphereShare of the solid
// angle's to keep every piece some samples wherever the normal is not the axis; a transmitting BSDF, which lights
// both sides, takes the solid angle's (kPortalAnyFacing). A path keeps the facing of its last vertex in its flags, so
// that a ray that leaves the scene weighs its direction with the table next-event estimation drew from.
// Drawing from it picks one of the eight vertices by its trilinear weight and then a piece from that vertex's
// cumulative table by bisection, so drawing a sample costs a few loads instead of a loop over the pieces. Its naive
// twin (--naive-portal-pick) picks by area alone, P_i = A_i / A. A point on piece i is uniform, density 1 / A_i, so in
// solid angle from o, where the ray (o, w) crosses the piece at distance t and cosine c to its plane,
//   p_portal(w) = sum over the crossed pieces of P_i(o) t^2 / (A_i |c|),
// a loop over the pieces (a quad's one test instead of its two triangles').
// Portals seen from either side count (|c|), and a direction through overlapping portals sums them all. Both next-event
// estimation and MissItem compute it from the ray's own origin, OffsetRayOrigin of the shaded point, which depends only
// on the side of the surface that w leaves by: the side of the outgoing direction for the probabilities a sample is
// drawn with. (A transmitting BSDF's directions to the other side are drawn with those of the first side's origin and
// weighed with the other's, 2e-4 of the point's magnitude apart: a relative error of that order, as next-event
// estimation of an emitter has between the shaded point and the offset origin.)
#pragma once
#include "tracer/core/environment.h"
#include "tracer/core/sampling.h"

namespace tracer {

// Portal triangles at most: p_portal tests every one of them for every environment sample and every BSDF-sampled ray
// that leaves the scene. A scene with more fails to load (merge coplanar portals into larger quads).
constexpr int kMaxPortalTriangles = 256;

// The portals' share of environment samples where the scene asks for none (--env-portal-mix auto): kPortalMixMax
// times (1 - 2 k), at least 0, k the environment's concentration (host/env_map.h's EnvConcentration: 0 for a constant
// sky, toward 1 as a sun holds its power). Measured on the hall of make_skyhall.py: under a constant sky shares of 0.75
// to 1 are best and alike; under the sun map of make_sky_hdr.py any share raised the RMSE, since the sun, which holds
// most of the power, is then sampled less often and portals cannot aim at it.
constexpr float kPortalMixMax = 0.9f;

// One piece of the portals: a triangle (v0, v0 + e1, v0 + e2), or the parallelogram that two of the scene's portal
// triangles form together (v0 + a e1 + b e2 for a, b in [0, 1]: a rectangular window's quad, one piece instead of two),
// 48 bytes, three 16-byte loads (the device reads them as SceneView::portals.pieces).
struct alignas(16) PortalPiece {
  Float4 v0;  // xyz: the first corner; w: the portals' cumulative area fraction up to and including this one (last 1)
  Float4 e1;  // xyz: the first edge; w: the piece's area
  Float4 e2;  // xyz: the second edge; w: 1 for a parallelogram, 0 for a triangle
};
static_assert(sizeof(PortalPiece) == 48 && alignof(PortalPiece) == 16, "portal piece: three 16-byte loads");

// The tables of a lattice vertex, by facing: 0 to 5 the hemispheres about +x, -x, +y, -y, +z, -z, 6 the sphere.
constexpr int kPortalFacings = 7, kPortalAnyFacing = 6;
// The solid angle's share in the hemispheres' tables.
constexpr float kPortalSphereShare = 0.1f;

// The facing of a surface whose normal (on the side light is gathered from) is n: the axis it lies nearest.
TRACER_HD int PortalFacing(Vec3 n) {
  const float ax = fabsf(n.x), ay = fabsf(n.y), az = fabsf(n.z);
  if (ax >= ay && ax >= az) return n.x >= 0.0f ? 0 : 1;
  if (ay >= az) return n.y >= 0.0f ? 2 : 3;
  return n.z >= 0.0f ? 4 : 5;
}

// The lattice of pick probabilities: nx x ny x nz vertices spaced by `step` from `lo`, over the scene's bounds
// (host/scene_data.h's PortalLatticeFor).
struct PortalLattice {
  int32_t nx, ny, nz;
  Vec3 lo, step;
};

// The scene's portals; count 0 (pieces and cdf null) when it has none.
struct PortalView {
  const PortalPiece* pieces;
  // Per lattice vertex (x fastest, then y, then z) and facing, count cumulative pick probabilities, the last exactly 1.
  const float* cdf;
  float area;     // the portals' total area
  int32_t count;  // pieces
  PortalLattice lattice;
};

// Where o lies in the lattice: the first of the eight vertices around it and its place between them in [0, 1] along
// each axis (clamped: outside the bounds the nearest cell's face).
struct PortalCell {
  int base;
  Vec3 f;
};

TRACER_HD PortalCell LocatePortalCell(const PortalLattice& l, Vec3 o) {
  auto axis = [](float x, float lo, float step, int n, float& f) {
    float t = (x - lo) / step;
    t = t > 0.0f ? (t < static_cast<float>(n - 1) ? t : static_cast<float>(n - 1)) : 0.0f;  // NaN: 0
    int i = static_cast<int>(t);
    if (i > n - 2) i = n - 2;
    f = t - static_cast<float>(i);
    return i;
  };
  PortalCell c;
  const int ix = axis(o.x, l.lo.x, l.step.x, l.nx, c.f.x), iy = axis(o.y, l.lo.y, l.step.y, l.ny, c.f.y),
            iz = axis(o.z, l.lo.z, l.step.z, l.nz, c.f.z);
  c.base = (iz * l.ny + iy) * l.nx + ix;
  return c;
}

// Corner k (bits: x, y, z) of the cell: its vertex and trilinear weight.
TRACER_HD int PortalCorner(const PortalLattice& l, const PortalCell& c, int k, float& weight) {
  weight = ((k & 1) ? c.f.x : 1.0f - c.f.x) * ((k & 2) ? c.f.y : 1.0f - c.f.y) * ((k & 4) ? c.f.z : 1.0f - c.f.z);
  return c.base + (k & 1) + ((k & 2) ? l.nx : 0) + ((k & 4) ? l.nx * l.ny : 0);
}

// The cumulative table of a lattice vertex for a facing.
TRACER_HD const float* PortalTable(const PortalView& v, int vertex, int facing) {
  return v.cdf + (static_cast<size_t>(vertex) * kPortalFacings + facing) * v.count;
}

// The xyz of a portal record.
TRACER_HD Vec3 PortalVec(const Float4& f) { return Vec3(f.x, f.y, f.z); }

// Where the ray (o, w) crosses a portal piece at t > 0: t^2 / (A |cos|), the solid-angle density of a uniform point
// on it (cos between w and its normal); 0 where it does not cross. The crossing is Moller and Trumbore's (1997) test,
// whose determinant is -w.(e1 x e2) = -+|e1 x e2| |cos|, so the density is t^2 / |det| on a parallelogram (A =
// |e1 x e2|) and twice that on a triangle. The barycentric bounds and t are tested scaled by |det|, all of them before
// one branch: lanes of a warp whose rays cross different pieces then run the same instructions (with a branch per
// bound they ran each piece's tail one after another), and only a crossing divides.
TRACER_HD float PortalCrossing(const PortalPiece& piece, Vec3 o, Vec3 w) {
  const Vec3 e1 = PortalVec(piece.e1), e2 = PortalVec(piece.e2);
  const Vec3 pv = Cross(w, e2);
  const float signedDet = Dot(e1, pv);
  const float sign = signedDet > 0.0f ? 1.0f : -1.0f, det = signedDet * sign;
  const Vec3 tv = o - PortalVec(piece.v0);
  const Vec3 qv = Cross(tv, e1);
  const float b1 = Dot(tv, pv) * sign, b2 = Dot(w, qv) * sign, tDet = Dot(e2, qv) * sign;
  const bool parallelogram = piece.e2.w != 0.0f;
  // det > 0 also refuses a ray parallel to the portal's plane (it crosses no area) and a NaN.
  const bool crosses =
      det > 0.0f && b1 >= 0.0f && b1 <= det && b2 >= 0.0f && (parallelogram ? b2 : b1 + b2) <= det && tDet > 0.0f;
  if (!crosses) return 0.0f;
  const float t = tDet / det;
  return (parallelogram ? 1.0f : 2.0f) * t * t / det;
}

// The probability of picking piece i at o for a facing: by area (the naive twin), else the lattice's, interpolated.
TRACER_HD float PortalPickProbability(const PortalView& v, bool byArea, const PortalCell& c, int facing, int i) {
  if (byArea) return v.pieces[i].e1.w / v.area;
  float p = 0.0f;
  for (int k = 0; k < 8; ++k) {
    float w;
    const float* cdf = PortalTable(v, PortalCorner(v.lattice, c, k, w), facing);
    if (w > 0.0f) p += w * (cdf[i] - (i > 0 ? cdf[i - 1] : 0.0f));
  }
  return p;
}

// The portal pdf (solid angle) of unit direction w from o, for a facing. The pick probability (eight corners' loads)
// of the first piece crossed is taken after the loop, where the lanes of a warp that cross different pieces take it
// together, not one piece after another inside it (on the GPU that was three quarters of a portal render's shading
// instructions); a direction through overlapping portals adds the others' in the loop. The lattice cell and the first
// crossing are computed again after the loop rather than kept through it (fewer live registers: the shade kernels
// spilled otherwise).
TRACER_HD float PortalPdf(const PortalView& v, bool byArea, Vec3 o, int facing, Vec3 w) {
  float sum = 0.0f;
  int first = -1;
  for (int i = 0; i < v.count; ++i) {
    const float x = PortalCrossing(v.pieces[i], o, w);
    if (!(x > 0.0f)) continue;
    if (first < 0)
      first = i;
    else
      sum += PortalPickProbability(v, byArea, LocatePortalCell(v.lattice, o), facing, i) * x;
  }
  if (first < 0) return sum;
  return PortalPickProbability(v, byArea, LocatePortalCell(v.lattice, o), facing, first) *
             PortalCrossing(v.pieces[first], o, w) +
         sum;
}

// The mixture's pdf of direction w from o for a facing, given the environment's own pdf there.
TRACER_HD float PortalMixturePdf(const PortalView& v, bool byArea, float mix, Vec3 o, int facing, Vec3 w,
                                 float pdfEnv) {
  return mix * PortalPdf(v, byArea, o, facing, w) + (1.0f - mix) * pdfEnv;
}

// The first k of [0, n) whose cumulative value cdf[k] exceeds u (the last when none does), by bisection.
TRACER_HD int FindInCdf(const float* cdf, int n, float u) {
  int k = 0, hi = n - 1;
  while (k < hi) {
    const int mid = (k + hi) >> 1;
    if (u < cdf[mid])
      hi = mid;
    else
      k = mid + 1;
  }
  return k;
}

// A point on the portals from two uniform numbers: u0 picks piece i with probability PortalPickProbability at o for
// the facing (by area: in the pieces' cumulative area fractions; else in the facing's table of one of the cell's
// corners, which u2 picks by its trilinear weight), and u0's place inside its share with u2 (its place inside the
// corner's weight) a uniform point on it. Each number is rescaled once or twice, so neither pick leaves a far piece's
// points few distinct values.
TRACER_HD Vec3 SamplePortalPoint(const PortalView& v, bool byArea, Vec3 o, int facing, float u0, float u2) {
  int k = 0;
  float below, share;
  if (byArea) {  // the pieces' cumulative area fractions are their records' v0.w
    int hi = v.count - 1;
    while (k < hi) {
      const int mid = (k + hi) >> 1;
      if (u0 < v.pieces[mid].v0.w)
        hi = mid;
      else
        k = mid + 1;
    }
    below = k > 0 ? v.pieces[k - 1].v0.w : 0.0f;
    share = v.pieces[k].v0.w - below;
  } else {
    const PortalCell c = LocatePortalCell(v.lattice, o);
    int corner = 0;
    float w = 1.0f, start = 0.0f, acc = 0.0f;
    for (int j = 0; j < 8; ++j) {  // the corner whose interval of weight holds u2 (rounding: the last with weight)
      float wj;
      PortalCorner(v.lattice, c, j, wj);
      if (!(wj > 0.0f)) continue;
      corner = j, w = wj, start = acc;
      if (u2 < acc + wj) break;
      acc += wj;
    }
    u2 = Clamp((u2 - start) / w, 0.0f, 0.99999994f);
    float unused;
    const float* cdf = PortalTable(v, PortalCorner(v.lattice, c, corner, unused), facing);
    k = FindInCdf(cdf, v.count, u0);
    below = k > 0 ? cdf[k - 1] : 0.0f;
    share = cdf[k] - below;
  }
  const PortalPiece& piece = v.pieces[k];
  const float u1 = share > 0.0f ? Clamp((u0 - below) / share, 0.0f, 0.99999994f) : 0.0f;
  float b1 = u1, b2 = u2;
  if (piece.e2.w == 0.0f) SampleTriangle(u1, u2, b1, b2);
  return PortalVec(piece.v0) + PortalVec(piece.e1) * b1 + PortalVec(piece.e2) * b2;
}

// A direction toward the environment from point p by the mixture: u1 below mix picks a portal point q (u1 rescaled,
// with u2) by the facing's probabilities at the ray origin on ng's side (ng: the geometric normal on the side of the
// outgoing direction), and the direction from there toward q; else the environment's own sampling on u1 rescaled.
// Either way the pdf is the mixture's from the ray origin that the shadow ray will have, OffsetRayOrigin(p, ng, wi,
// offsetFloor).
// A portal point whose direction from the origin leaves by the other side of the surface than q lies (q within the
// offset of the surface's plane) gives no sample (pdf 0): a ray leaving along it would start on the other side.
TRACER_HD EnvSample SampleEnvPortals(const EnvMapView& env, Vec3 constant, const PortalView& v, bool byArea, float mix,
                                     Vec3 p, Vec3 ng, int facing, float offsetFloor, float u1, float u2) {
  EnvSample s;
  Vec3 o;
  if (u1 < mix) {
    s.pdf = 0.0f;
    const Vec3 front = OffsetRayOrigin(p, ng, ng, offsetFloor);  // the origin of every ray that leaves on ng's side
    const Vec3 q = SamplePortalPoint(v, byArea, front, facing, Fminf(u1 / mix, 0.99999994f), u2);
    o = OffsetRayOrigin(p, ng, q - p, offsetFloor);
    const Vec3 d = q - o;
    const float len = Length(d);
    if (!(len > 0.0f)) return s;
    s.wi = d / len;
    if ((Dot(s.wi, ng) < 0.0f) != (Dot(q - p, ng) < 0.0f)) return s;
  } else {
    s = SampleEnvironment(env, constant, Fminf((u1 - mix) / (1.0f - mix), 0.99999994f), u2);
    if (!(s.pdf > 0.0f)) return s;
    o = OffsetRayOrigin(p, ng, s.wi, offsetFloor);
  }
  // The radiance and the map's pdf as a ray leaving along wi looks them up (EnvRadiance), so that its MIS weight and
  // this sample's agree also on a texel's edge.
  float pdfEnv;
  s.le = EnvRadiance(env, constant, s.wi, pdfEnv);
  s.pdf = PortalMixturePdf(v, byArea, mix, o, facing, s.wi, pdfEnv);
  return s;
}

}  // namespace tracer
