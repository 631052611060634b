// @file portals.h: environment portals (--env-sampling portals): next-event estimation of the environment through
// the openings of an interior, as a one-sample mixture with the environment's own sampling.
//
// Indoors, the sky reaches a point only through windows and doors, but the environment's own distribution (its
// luminance, or the uniform sphere for a constant sky) sends most shadow rays into walls. A portal is a triangle the
// scene marks over such an opening (OBJ: an object or group named portal...; pbrt-v4: the infinite light's "portal"
// quad); it is not geometry (never intersected or shaded). With probability `mix` next-event estimation picks a
// portal piece and a point q on it (uniform in solid angle or in area, below), and takes the direction w from the
// shaded point toward q; otherwise it
// samples the environment its own way. Every direction is evaluated with the mixture's pdf
//   p(w) = mix p_portal(w) + (1 - mix) p_env(w),
// one-sample MIS with the balance heuristic between the two techniques (Veach and Guibas 1995); BSDF-sampled rays that
// leave the scene (MissItem) take the same p(w) for their weight, so the estimator stays unbiased: where p(w) is 0 (a
// direction through no portal when mix is 1, the default under a constant sky) BSDF sampling alone, with MIS weight 1,
// reaches the sky. This is the area-sampling form of the idea of Bitterli, Novak and Jarosz 2015 ("Portal-masked
// environment map sampling"), which pbrt-v4's portal light refines by sampling the map inside the portal's frame.
//
// The portal triangles become pieces: two consecutive triangles that together form a parallelogram (a window's quad,
// as the loaders split it) are one piece, any other triangle one. Which piece: with probability P_i(o) for the ray
// origin o, read from a lattice that the host fills once (host/scene_data.h's BuildPortalLattice): at each vertex x of
// a lattice over the scene's bounds, P_i(x) is piece i's solid angle seen from x (exact: Van Oosterom and Strackee
// 1983) over the sum of all of theirs, so that a window next to a point draws the samples that a far one would waste.
// P_i(o) is the nearest vertex's (piecewise constant: any probabilities serve, as long as next-event estimation and a
// ray leaving the scene read the same ones for the same origin; interpolating the eight vertices around o trilinearly,
// continuous in o, gave the same RMSE on the hall of make_skyhall.py, 1% apart, at 8 loads per pdf instead of 1, which
// the GPU issued one after another: 10% of its diffuse shading time).
// Each vertex keeps a table per facing (PortalFacing): a surface whose geometric normal lies nearest +x, -x, +y, -y,
// +z or -z receives light only from that axis's side, where a piece contributes its projected solid angle (the
// integral of the cosine to the axis over the directions through it, clipped to the hemisphere: Lambert's polygon
// formula), so there the shares are those of the projected solid angle, mixed with kPortalSphereShare of the solid
// angle's to keep every piece some samples wherever the normal is not the axis; a transmitting BSDF, which lights
// both sides, takes the solid angle's (kPortalAnyFacing). A path keeps the facing of its last vertex in its flags, so
// that a ray that leaves the scene weighs its direction with the table next-event estimation drew from.
// Drawing from it picks a piece from the vertex's cumulative table by bisection, so drawing a sample costs a few loads
// instead of a loop over the pieces. Its naive twin (--naive-portal-pick) picks by area alone, P_i = A_i / A. A point
// on piece i is uniform in the solid angle S_i(o) that it subtends where it is a rectangle seen under enough of it
// (PortalPointSolidAngle), density 1 / S_i; else uniform in area (the naive twin, --naive-portal-point, on every
// piece), density 1 / A_i, in solid angle from o t^2 / (A_i |c|), where the ray (o, w) crosses the piece at distance
// t and cosine c to its plane. So
//   p_portal(w) = sum over the crossed pieces of P_i(o) d_i(o, w), d_i = 1 / S_i(o) or t^2 / (A_i |c|),
// a loop over the pieces (a quad's one test instead of its two triangles'), except for a direction drawn toward a
// piece from an origin whence no ray crosses two (PortalsCrossedOnce: every portal in a wall of a closed interior,
// seen from inside), whose sum is that piece's term alone.
// Portals seen from either side count (|c|), and a direction through overlapping portals sums them all. Both next-event
// estimation and MissItem compute it from the ray's own origin, OffsetRayOrigin of the shaded point, which depends only
// on the side of the surface that w leaves by: the side of the outgoing direction for the probabilities a sample is
// drawn with. (A transmitting BSDF's directions to the other side are picked with the probabilities of the first
// side's origin and weighed with the other's, 2e-4 of the point's magnitude apart: the two read the same lattice vertex
// except on the fraction of points, of that order over the lattice's step, whose two origins straddle the middle
// between vertices, where the weights are off by the two vertices' difference; an error of the size next-event
// estimation of an emitter has between the shaded point and the offset origin. A point by solid angle is drawn from
// the origin on the side of the piece's centre, the shadow ray's own unless the surface's plane cuts the piece.)
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
// to 1 are best and alike (at 1 the RMSE was 1% lower than at 0.9), and at 1 no environment sample needs the loop over
// the pieces where PortalsCrossedOnce holds (PortalPdf), so a constant sky takes 1: its directions that cross no portal
// are left to BSDF sampling, whose MIS weight is 1 there (as pbrt-v4's portal light, which samples nothing else). Under
// the sun map of make_sky_hdr.py any share raised the RMSE, since the sun, which holds most of the power, is then
// sampled less often and portals cannot aim at it.
constexpr float kPortalMixMax = 1.0f;

// One piece of the portals: a triangle (v0, v0 + e1, v0 + e2), or the parallelogram that two of the scene's portal
// triangles form together (v0 + a e1 + b e2 for a, b in [0, 1]: a rectangular window's quad, one piece instead of two),
// 48 bytes, three 16-byte loads (the device reads them as SceneView::portals.pieces).
struct alignas(16) PortalPiece {
  Float4 v0;  // xyz: the first corner; w: the portals' cumulative area fraction up to and including this one (last 1)
  Float4 e1;  // xyz: the first edge; w: the piece's area
  Float4 e2;  // xyz: the second edge; w: 2 for a rectangle (e1 and e2 at right angles), 1 for another parallelogram,
              // 0 for a triangle
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

// The lattice of pick probabilities: nx x ny x nz vertices spaced by `step` (1 / inv) from `lo`, over the scene's
// bounds (host/scene_data.h's PortalLatticeFor).
struct PortalLattice {
  int32_t nx, ny, nz;
  Vec3 lo, step, inv;
};

// The scene's portals; count 0 (pieces and cdf null) when it has none.
struct PortalView {
  const PortalPiece* pieces;
  // Per lattice vertex (x fastest, then y, then z) and facing, count cumulative pick probabilities, the last exactly 1.
  const float* cdf;
  // Half-spaces (xyz: unit normal n, w: offset c; host/scene_data.h's BuildPortalSides) such that a ray from an origin
  // o with n.o >= c for every one of them crosses at most one piece: for each piece i whose plane has all the others
  // on one closed side, that side. Proof: a ray from o that crosses piece i at t_i > 0 is, for every t > t_i, strictly
  // on the other side of i's plane than o, where no point of another piece j lies; and if it crosses j first, the
  // same holds with i and j swapped (crossing both at the same t, in a shared edge, is a set of measure zero). Exact up
  // to the tolerance within which a piece counts as lying in another's plane (kPortalPlaneTolerance). At least one
  // record where there are portals: (0, 0, 0, 0), which holds every origin, where all pieces lie in one plane; (0, 0,
  // 0, 1), which holds none, where two coplanar pieces overlap or some piece's plane has others strictly on both sides.
  // A view without records (sideCount 0) holds no origin.
  const Float4* sides;
  float area;         // the portals' total area
  int32_t count;      // pieces
  int32_t sideCount;  // half-spaces in `sides`
  PortalLattice lattice;
};

// Whether a ray from o crosses at most one portal piece, whatever its direction (PortalView::sides).
TRACER_HD bool PortalsCrossedOnce(const PortalView& v, Vec3 o) {
  for (int k = 0; k < v.sideCount; ++k) {
    const Float4 s = v.sides[k];
    if (!(s.x * o.x + s.y * o.y + s.z * o.z >= s.w)) return false;
  }
  return v.sideCount > 0;
}

// The lattice vertex nearest o (clamped: outside the bounds the nearest on their surface; a NaN: the first).
TRACER_HD int PortalVertex(const PortalLattice& l, Vec3 o) {
  auto axis = [](float x, float lo, float inv, int n) {
    float t = (x - lo) * inv + 0.5f;
    t = t > 0.0f ? (t < static_cast<float>(n - 1) ? t : static_cast<float>(n - 1)) : 0.0f;  // NaN: 0
    return static_cast<int>(t);
  };
  return (axis(o.z, l.lo.z, l.inv.z, l.nz) * l.ny + axis(o.y, l.lo.y, l.inv.y, l.ny)) * l.nx +
         axis(o.x, l.lo.x, l.inv.x, l.nx);
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

// How portal samples are drawn: bits of RenderParams' naive twins (PortalMode in light.h), 0 for the defaults.
constexpr int kPortalPickByArea = 1;  // --naive-portal-pick: pieces picked by area, not by the lattice's shares
constexpr int kPortalAreaPoints = 2;  // --naive-portal-point: points uniform in area on every piece

// Points by solid angle. On a rectangular piece seen from o under a solid angle S of at least kPortalMinSolidAngle,
// the point is uniform in the solid angle it subtends (Urena, Fajardo and King 2013, "An Area-Preserving
// Parametrization for Spherical Rectangles"), density 1 / S: the area's density in solid angle, t^2 / (A |cos|),
// grows without bound toward the portal's edge as seen from a point next to it (a window's reveal, the wall around
// it), whose samples then carry the estimator's largest values. Under that angle (a piece far away, where the two
// densities differ little, or seen edge-on), within kPortalMinPlaneDistance of the piece's larger edge from its plane
// (where float cannot place the column: off by up to half the angle at 1e-4 of the edge), and on other pieces the
// point stays uniform in area. The choice depends on o and the piece alone, so next-event estimation and a ray that
// leaves the scene from the same origin weigh a direction alike.
constexpr float kPortalMinSolidAngle = 0.01f;
constexpr float kPortalMinPlaneDistance = 1e-3f;

// A rectangular piece in the frame of o: unit x along e1, y along e2, z their normal turned so that the rectangle
// lies at z = z0 <= 0; it spans [x0, x1] x [y0, y1] there.
struct PortalRect {
  Vec3 x, y, z;
  float x0, x1, y0, y1, z0;
};

TRACER_HD PortalRect PortalRectFrom(const PortalPiece& p, Vec3 o) {
  PortalRect r;
  const Vec3 e1 = PortalVec(p.e1), e2 = PortalVec(p.e2), d = PortalVec(p.v0) - o;
  const float l1 = Length(e1), l2 = Length(e2);
  r.x = e1 / l1;
  r.y = e2 / l2;
  r.z = Cross(r.x, r.y);
  r.x0 = Dot(d, r.x);
  r.y0 = Dot(d, r.y);
  r.z0 = Dot(d, r.z);
  if (r.z0 > 0.0f) r.z = -r.z, r.z0 = -r.z0;
  r.x1 = r.x0 + l1;
  r.y1 = r.y0 + l2;
  return r;
}

// The signed solid angle of the strip [0, x] x [y0, y1] at z = z0, Phi(x) = F(x, y1) - F(x, y0), where F(x, y) =
// atan(x y / (|z0| |(x, y, z0)|)) is that of [0, x] x [0, y]: the angle of the product of |z0| r1 + i x y1 and the
// conjugate of |z0| r0 + i x y0, whose angles are the two F (their difference lies in (-pi, pi), so one atan2 gives
// it without a turn's ambiguity). The rectangle's solid angle is Phi(x1) - Phi(x0): two arctangents of
// well-conditioned arguments, where the sum of the four corners' angles minus 2 pi (Urena et al.) or differences of
// arcsines lose digits for small or edge-on rectangles. `slope`: dPhi/dx = |z0| / (x^2 + z0^2) (y1 / r1 - y0 / r0).
TRACER_HD float PortalStripAngle(float x, float y0, float y1, float z0, float& slope) {
  const float zz = z0 * z0, xx = x * x, az = fabsf(z0);
  const float r0 = sqrtf(xx + y0 * y0 + zz), r1 = sqrtf(xx + y1 * y1 + zz);
  slope = az / (xx + zz) * (y1 / r1 - y0 / r0);
  return atan2f(x * az * (y1 * r0 - y0 * r1), zz * r0 * r1 + xx * y0 * y1);
}

// The solid angle S of a rectangle, and phi0 = Phi(x0).
TRACER_HD float PortalRectSolidAngle(const PortalRect& r, float& phi0) {
  float slope;
  phi0 = PortalStripAngle(r.x0, r.y0, r.y1, r.z0, slope);
  return PortalStripAngle(r.x1, r.y0, r.y1, r.z0, slope) - phi0;
}

// The solid angle of a rectangle where its points are drawn by solid angle (at least kPortalMinSolidAngle, and o at
// least kPortalMinPlaneDistance of its larger edge off its plane), else 0 (so also in its plane, where S is 0, 2 pi
// inside it, or NaN on an edge's line); and phi0 = Phi(x0).
TRACER_HD float PortalRectDrawnAngle(const PortalRect& r, float& phi0) {
  const float s = PortalRectSolidAngle(r, phi0);
  const bool off = fabsf(r.z0) >= kPortalMinPlaneDistance * Fmaxf(r.x1 - r.x0, r.y1 - r.y0);
  return s >= kPortalMinSolidAngle && off ? s : 0.0f;
}

// The solid angle of piece p from o where its points are drawn by solid angle there (PortalRectDrawnAngle), else 0.
TRACER_HD float PortalPointSolidAngle(const PortalPiece& p, Vec3 o) {
  if (p.e2.w != 2.0f) return 0.0f;
  float phi0;
  return PortalRectDrawnAngle(PortalRectFrom(p, o), phi0);
}

// A point of the rectangle uniform in the solid angle s it subtends, from (u, v) in [0, 1)^2 (Urena et al.'s
// parametrization): u picks the column x where the strip [x0, x] holds u s, v the place in that column's arc. The
// column is where Phi(x) = phi = phi0 + u s; with c_j = y_j / |(y_j, z0)|, N = c1 - c0 cos(phi), D = sin(phi), the
// paper's x = -z0 cu / sqrt(1 - cu^2), cu = sign(fu) / sqrt(fu^2 + c0^2), fu = N / D, reads
//   x = -z0 sign(N) D / sqrt(N^2 - (1 - c0^2) D^2)
// (at 0 or below the root's argument, the column is an edge's). Seen nearly edge-on from beside an edge (|z0| a
// hundredth of the rectangle, as from a window's reveal next to its portal) the root's argument is a small difference
// of larger terms (c0 and c1 near -1 and 1), and the column's share was off by up to 3e-3 in float; there two Newton
// steps on Phi(x) = phi, whose slope is known, bring it within 2e-4 (one left up to 6e-4 where Phi flattens toward
// the far edge; measured with o at least kPortalMinPlaneDistance off the plane). Elsewhere the closed form alone is as
// close.
TRACER_HD Vec3 SamplePortalRect(const PortalRect& r, Vec3 o, float s, float phi0, float u, float v) {
  const float zz = r.z0 * r.z0, phi = phi0 + u * s;
  const float sinPhi = sinf(phi), cosPhi = cosf(phi);  // one sincos on the device
  const float c0 = r.y0 / sqrtf(zz + r.y0 * r.y0), c1 = r.y1 / sqrtf(zz + r.y1 * r.y1);
  const float nn = c1 - c0 * cosPhi, sd = nn > 0.0f ? sinPhi : -sinPhi;
  const float den = nn * nn - zz / (zz + r.y0 * r.y0) * sinPhi * sinPhi;
  float xu = Clamp(den > 0.0f ? -r.z0 * sd / sqrtf(den) : (sd > 0.0f ? r.x1 : r.x0), r.x0, r.x1);
  if (zz < 0.0025f * Fmaxf(r.y0 * r.y0, r.y1 * r.y1)) {  // |z0| under a twentieth of the farther y edge's offset
    TRACER_UNROLL
    for (int step = 0; step < 2; ++step) {
      float slope;
      const float miss = PortalStripAngle(xu, r.y0, r.y1, r.z0, slope) - phi;
      if (slope > 0.0f) xu = Clamp(xu - miss / slope, r.x0, r.x1);
    }
  }
  // In the column, h = y / |(y, d)| is uniform: h0 + v (h1 - h0), and y = h d / sqrt((1 - h) (1 + h)), the two
  // factors sums of positive terms, 1 - h1 and 1 + h0 taken without cancelling (a column seen end-on, d small
  // against y, has h near -1 and 1 at its ends).
  const float dd = xu * xu + zz, d = sqrtf(dd);
  const float r0 = sqrtf(dd + r.y0 * r.y0), r1 = sqrtf(dd + r.y1 * r.y1);
  const float h0 = r.y0 / r0, h1 = r.y1 / r1;
  const float below1 = r.y1 > 0.0f ? dd / (r1 * (r1 + r.y1)) : (r1 - r.y1) / r1;  // 1 - h1
  const float above0 = r.y0 < 0.0f ? dd / (r0 * (r0 - r.y0)) : (r0 + r.y0) / r0;  // 1 + h0
  const float span = h1 - h0, hv = h0 + v * span;
  const float rest = (below1 + (1.0f - v) * span) * (above0 + v * span);
  const float yv = rest > 0.0f ? Clamp(hv * d / sqrtf(rest), r.y0, r.y1) : (hv > 0.0f ? r.y1 : r.y0);
  return o + r.x * xu + r.y * yv + r.z * r.z0;
}

// The solid-angle density with which piece p's points reach direction w from o: PortalCrossing's, or 1 / S where
// the piece's points are drawn by solid angle (S: PortalPointSolidAngle, passed in as `solidAngle` where the caller
// has it, else negative). 0 where the ray does not cross it.
TRACER_HD float PortalDensity(const PortalPiece& p, int mode, Vec3 o, Vec3 w, float solidAngle = -1.0f) {
  const float x = PortalCrossing(p, o, w);
  if (!(x > 0.0f) || (mode & kPortalAreaPoints) || p.e2.w != 2.0f) return x;
  const float s = solidAngle >= 0.0f ? solidAngle : PortalPointSolidAngle(p, o);
  return s > 0.0f ? 1.0f / s : x;
}

// The probability of picking piece i at o for a facing: by area (the naive twin), else the table of the lattice
// vertex nearest o (PortalVertex).
TRACER_HD float PortalPickProbability(const PortalView& v, bool byArea, Vec3 o, int facing, int i) {
  if (byArea) return v.pieces[i].e1.w / v.area;
  const float* cdf = PortalTable(v, PortalVertex(v.lattice, o), facing);
  return cdf[i] - (i > 0 ? cdf[i - 1] : 0.0f);
}

// The portal pdf (solid angle) of unit direction w from o, for a facing, with the pieces' points drawn as `mode`
// says. `crossed`: a piece that the ray is known to cross (next-event estimation's own pick) or -1, and `solidAngle`
// its PortalPointSolidAngle from o where the caller has it (else negative); where no other can be crossed from o
// (PortalsCrossedOnce), the pdf is that piece's term alone, and the loop over the pieces is skipped. In the loop, the
// pick probability and the density of the first piece crossed are taken after it, where the lanes of a warp that
// cross different pieces take them together, not one piece after another inside it (when the pick took eight loads,
// on the GPU that was three quarters of a portal render's shading instructions); a direction through overlapping
// portals adds the others' in the loop. The first crossing is computed again after the loop rather than kept through
// it (fewer live registers: the shade kernels spilled otherwise).
TRACER_HD float PortalPdf(const PortalView& v, int mode, Vec3 o, int facing, Vec3 w, int crossed = -1,
                          float solidAngle = -1.0f) {
  const bool byArea = (mode & kPortalPickByArea) != 0;
  float sum = 0.0f;
  int first = crossed;
  if (crossed < 0 || !PortalsCrossedOnce(v, o)) {
    first = -1;
    for (int i = 0; i < v.count; ++i) {
      if (!(PortalCrossing(v.pieces[i], o, w) > 0.0f)) continue;
      if (first < 0)
        first = i;
      else
        sum += PortalPickProbability(v, byArea, o, facing, i) * PortalDensity(v.pieces[i], mode, o, w);
    }
    if (first < 0) return sum;
  }
  return PortalPickProbability(v, byArea, o, facing, first) *
             PortalDensity(v.pieces[first], mode, o, w, first == crossed ? solidAngle : -1.0f) +
         sum;
}

// The mixture's pdf of direction w from o for a facing, given the environment's own pdf there (crossed, solidAngle:
// as PortalPdf's).
TRACER_HD float PortalMixturePdf(const PortalView& v, int mode, float mix, Vec3 o, int facing, Vec3 w, float pdfEnv,
                                 int crossed = -1, float solidAngle = -1.0f) {
  return mix * PortalPdf(v, mode, o, facing, w, crossed, solidAngle) + (1.0f - mix) * pdfEnv;
}

// The first k of [0, n) whose cumulative value cdf(k) exceeds u (the last when none does), by bisection; below and
// share: cdf(k - 1) (0 for the first) and cdf(k) - below, u's interval.
template <class Cdf>
TRACER_HD int PickInCdf(const Cdf& cdf, int n, float u, float& below, float& share) {
  int k = 0, hi = n - 1;
  while (k < hi) {
    const int mid = (k + hi) >> 1;
    if (u < cdf(mid))
      hi = mid;
    else
      k = mid + 1;
  }
  below = k > 0 ? cdf(k - 1) : 0.0f;
  share = cdf(k) - below;
  return k;
}

// A point on the portals from two uniform numbers: u0 picks piece i with probability PortalPickProbability at o for
// the facing (by area: in the pieces' cumulative area fractions; else in the facing's table of the lattice vertex
// nearest o), and u0's place inside its share with u2 a point on it, which is piece i: uniform in the solid angle from
// `from` where PortalPointSolidAngle is positive there (it is returned in solidAngle, else 0), else uniform in area.
// `from` is o, or `back` (the shaded point's origin on the other side: a BSDF that transmits) where the piece's centre
// lies on back's side of the two.
TRACER_HD Vec3 SamplePortalPoint(const PortalView& v, int mode, Vec3 o, Vec3 back, int facing, float u0, float u2,
                                 int& piece, float& solidAngle, Vec3& from) {
  int k;
  float below, share;
  if (mode & kPortalPickByArea) {  // the pieces' cumulative area fractions are their records' v0.w
    k = PickInCdf([&v](int i) { return v.pieces[i].v0.w; }, v.count, u0, below, share);
  } else {
    const float* cdf = PortalTable(v, PortalVertex(v.lattice, o), facing);
    k = PickInCdf([cdf](int i) { return cdf[i]; }, v.count, u0, below, share);
  }
  piece = k;
  const PortalPiece& p = v.pieces[k];
  const float u1 = share > 0.0f ? Clamp((u0 - below) / share, 0.0f, 0.99999994f) : 0.0f;
  solidAngle = 0.0f;
  from = o;
  if (!(mode & kPortalAreaPoints) && p.e2.w == 2.0f) {
    const Vec3 centre = PortalVec(p.v0) + (PortalVec(p.e1) + PortalVec(p.e2)) * 0.5f;
    if (Dot(centre - o, o - back) < 0.0f) from = back;
    const PortalRect r = PortalRectFrom(p, from);
    float phi0;
    const float s = PortalRectDrawnAngle(r, phi0);
    if (s > 0.0f) {
      solidAngle = s;
      return SamplePortalRect(r, from, s, phi0, u1, u2);
    }
  }
  float b1 = u1, b2 = u2;
  if (p.e2.w == 0.0f) SampleTriangle(u1, u2, b1, b2);
  return PortalVec(p.v0) + PortalVec(p.e1) * b1 + PortalVec(p.e2) * b2;
}

// A direction toward the environment from point p by the mixture: u1 below mix picks a portal point q (u1 rescaled,
// with u2) by the facing's probabilities at the ray origin on ng's side (ng: the geometric normal on the side of the
// outgoing direction), and the direction from there toward q; else the environment's own sampling on u1 rescaled.
// Either way the pdf is the mixture's from the ray origin that the shadow ray will have, OffsetRayOrigin(p, ng, wi,
// offsetFloor); `loop` (--naive-portal-pdf, the naive twin) sums it over every piece even where the drawn piece's term
// alone is the sum (PortalPdf).
// A portal point whose direction from the origin leaves by the other side of the surface than q lies (q within the
// offset of the surface's plane) gives no sample (pdf 0): a ray leaving along it would start on the other side. With
// `frontOnly` (a BSDF that does not transmit, whose caller refuses such directions) neither does a direction that
// does not leave on ng's side, before its pdf is computed: a portal point behind the surface (a wall's own windows,
// seen from the wall) or the environment's direction below it.
TRACER_HD EnvSample SampleEnvPortals(const EnvMapView& env, Vec3 constant, const PortalView& v, int mode, float mix,
                                     Vec3 p, Vec3 ng, int facing, float offsetFloor, float u1, float u2,
                                     bool loop = false, bool frontOnly = false) {
  EnvSample s;
  Vec3 o;
  int piece = -1;
  float solidAngle = -1.0f;
  if (u1 < mix) {
    s.pdf = 0.0f;
    const Vec3 front = OffsetRayOrigin(p, ng, ng, offsetFloor);  // the origin of every ray that leaves on ng's side
    const Vec3 back = frontOnly ? front : OffsetRayOrigin(p, ng, -ng, offsetFloor);
    Vec3 from;
    const Vec3 q =
        SamplePortalPoint(v, mode, front, back, facing, Fminf(u1 / mix, 0.99999994f), u2, piece, solidAngle, from);
    o = OffsetRayOrigin(p, ng, q - p, offsetFloor);
    const Vec3 d = q - o;
    const float len = Length(d);
    if (!(len > 0.0f)) return s;
    s.wi = d / len;
    if ((Dot(s.wi, ng) < 0.0f) != (Dot(q - p, ng) < 0.0f)) return s;
    // The angle was measured from `from`: from the other origin (the surface's plane cuts the piece) it is measured
    // again, and the point's density there differs from the one it was drawn with by the origins' offset.
    if (!(o.x == from.x && o.y == from.y && o.z == from.z)) solidAngle = -1.0f;
  } else {
    s = SampleEnvironment(env, constant, Fminf((u1 - mix) / (1.0f - mix), 0.99999994f), u2);
    if (!(s.pdf > 0.0f)) return s;
    o = OffsetRayOrigin(p, ng, s.wi, offsetFloor);
  }
  if (frontOnly && !(Dot(s.wi, ng) > 0.0f)) {
    s.pdf = 0.0f;
    return s;
  }
  // The radiance and the map's pdf as a ray leaving along wi looks them up (EnvRadiance), so that its MIS weight and
  // this sample's agree also on a texel's edge.
  float pdfEnv;
  s.le = EnvRadiance(env, constant, s.wi, pdfEnv);
  s.pdf = PortalMixturePdf(v, mode, mix, o, facing, s.wi, pdfEnv, loop ? -1 : piece, solidAngle);
  return s;
}

}  // namespace tracer
