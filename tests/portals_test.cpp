// @file portals_test.cpp: environment portals (core/portals.h): the portal pdf integrates to 1 over the sphere from a
// point that sees all the portals (overlapping ones summed), sampled directions follow it (chi-square), the pdf a
// sample reports is the one a ray leaving the scene recomputes (MIS), and renders with portals read what they must: a
// convex object under a constant sky its exact value, an open box and the hall of make_skyhall.py the mean of the
// renders without portals, with less noise.
#include "tracer/core/portals.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

#include "env_light_checks.h"
#include "tracer/host/backends.h"
#include "tracer/host/pass_driver.h"
#include "tracer/host/thread_pool.h"

namespace tracer {
namespace {

// Portal triangles around the origin, all seen from it and from either side: a 2 x 1 quad above (y = 3), a 1 x 1
// quad at x = 2 (its far side toward the origin), a triangle below (y = -2), and a 1 x 1 quad at y = 6 that the
// quad above partly hides (directions through both sum both).
std::vector<Vec3> TestPortals() {
  return {Vec3(-1, 3, -0.5f), Vec3(1, 3, -0.5f), Vec3(1, 3, 0.5f), Vec3(-1, 3, -0.5f), Vec3(1, 3, 0.5f),
          Vec3(-1, 3, 0.5f),  Vec3(2, 0, -0.5f), Vec3(2, 0, 0.5f), Vec3(2, 1, 0.5f),   Vec3(2, 0, -0.5f),
          Vec3(2, 1, 0.5f),   Vec3(2, 1, -0.5f), Vec3(0, -2, 0),   Vec3(0.5f, -2, 1),  Vec3(-0.7f, -2, 1.2f),
          Vec3(0, 6, -0.2f),  Vec3(1, 6, -0.2f), Vec3(1, 6, 0.8f), Vec3(0, 6, -0.2f),  Vec3(1, 6, 0.8f),
          Vec3(0, 6, 0.8f)};
}

struct Portals {
  std::vector<PortalPiece> pieces;
  std::vector<float> cdf;
  std::vector<Float4> sides;
  PortalView view;
};

// The portals of `corners` with their lattice over a scene's bounds (by default a box around the test portals, whose
// lattice of 33 x 65 x 24 vertices spaced about 0.155 puts the origin between vertices).
Portals MakePortals(const std::vector<Vec3>& corners, Vec3 lo = Vec3(-2.2f, -3.1f, -1.9f),
                    Vec3 hi = Vec3(2.8f, 6.9f, 1.6f)) {
  Portals p;
  p.pieces = BuildPortals(corners);
  ThreadPool pool(2);
  p.cdf = BuildPortalLattice(p.pieces, lo, hi, pool);
  p.view.pieces = p.pieces.data();
  p.view.cdf = p.cdf.data();
  p.view.count = static_cast<int32_t>(p.pieces.size());
  p.view.area = static_cast<float>(PortalArea(p.pieces));
  p.view.lattice = PortalLatticeFor(lo, hi, p.pieces.size());
  p.sides = BuildPortalSides(p.pieces);
  p.view.sides = p.sides.data();
  p.view.sideCount = static_cast<int32_t>(p.sides.size());
  return p;
}

// The direction of cell (r, c) of a rows x cols grid uniform in z = cos(theta) and in azimuth (equal-area cells).
Vec3 GridDirection(int r, int c, int rows, int cols, double fr = 0.5, double fc = 0.5) {
  const double z = -1.0 + 2.0 * (r + fr) / rows, phi = 2.0 * kPi * (c + fc) / cols, s = std::sqrt(1.0 - z * z);
  return Vec3(static_cast<float>(s * std::cos(phi)), static_cast<float>(s * std::sin(phi)), static_cast<float>(z));
}

// The grid cell of a unit direction.
int GridCell(Vec3 d, int rows, int cols) {
  double phi = std::atan2(d.y, d.x);
  if (phi < 0.0) phi += 2.0 * kPi;  // [0, 2 pi), as GridDirection's azimuth
  int r = static_cast<int>(std::floor((d.z + 1.0) * 0.5 * rows)),
      c = static_cast<int>(std::floor(phi / (2 * kPi) * cols));
  r = std::min(std::max(r, 0), rows - 1);
  c = std::min(std::max(c, 0), cols - 1);
  return r * cols + c;
}

// Midpoint integration of the portal pdf from o over the sphere on 2048 x 4096 equal-area cells, with triangles picked
// by the lattice's probabilities (the sphere's table and two hemispheres') and (the naive twin) by area, and points by
// solid angle on the rectangles and (the naive twin) by area. The pdf is
// discontinuous at the portals' outlines, where a cell's midpoint decides for the whole cell: an error of either sign
// per outline cell, up to 1.3e-3 of the total here (the -z table from (0.3, -0.4, 0.2): 1.26e-3, and 6.6e-4 on a grid 4
// times as fine each way, so the outlines'), within 2e-3 (a pdf without the 1 / |cos|, or that counts only the nearest
// portal where two overlap, is off by more than 5%).
TEST(Portals, PdfIntegratesToOneOverTheSphere) {
  const Portals p = MakePortals(TestPortals());
  ASSERT_EQ(p.view.count, 4) << "three quads, one piece each, and a triangle";
  for (int facing : {-1, kPortalAnyFacing, 2, 5, -2})  // -1: picked by area; -2: points by area, the sphere's table
    for (Vec3 o : {Vec3(0.0f), Vec3(0.3f, -0.4f, 0.2f), Vec3(-0.5f, 1.5f, 0.1f)}) {
      const int rows = 2048, cols = 4096;
      const int mode = facing == -1 ? kPortalPickByArea : (facing == -2 ? kPortalAreaPoints : 0);
      const int table = facing == -2 ? kPortalAnyFacing : facing;
      double sum = 0.0;
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) sum += PortalPdf(p.view, mode, o, table, GridDirection(r, c, rows, cols));
      sum *= 4.0 * kPi / (static_cast<double>(rows) * cols);
      std::printf("facing %d, origin (%g, %g, %g): the portal pdf integrates to %.6f\n", facing, o.x, o.y, o.z, sum);
      EXPECT_NEAR(sum, 1.0, 2e-3);
    }
}

// At a lattice vertex the pick probabilities are the pieces' shares: for the sphere, of their summed solid angles from
// there; for the hemisphere about an axis, (1 - kPortalSphereShare) of their projected solid angles' (the cosine to
// the axis integrated over the directions on its side) and kPortalSphereShare of the solid angles'. Both integrated
// here over 1024 x 2048 equal-area cells of directions (a direction counts for every piece it crosses, as the
// lattice's exact formulas do; the cells' midpoints at the outlines err by up to 9e-4 here), against the tables'
// probabilities within 1.5e-3. The small-triangle approximation A |cos| / d^2 toward the centroid would be off by up
// to 3.0e-3 and 1.5e-2 in a triangle's share at these two vertices, and projected solid angles not clipped to the
// hemisphere by more than 0.05.
TEST(Portals, LatticeVertexProbabilitiesAreSolidAngleShares) {
  const Portals p = MakePortals(TestPortals());
  const PortalLattice& l = p.view.lattice;
  ASSERT_EQ(l.nx * 1000000 + l.ny * 1000 + l.nz, 33065024) << "32 x 64 x 23 cells over the 5 x 10 x 3.5 box";
  for (const std::array<int, 3>& v : {std::array<int, 3>{12, 20, 11}, std::array<int, 3>{24, 32, 15}}) {
    const Vec3 x = l.lo + Vec3(v[0] * l.step.x, v[1] * l.step.y, v[2] * l.step.z);
    const int rows = 1024, cols = 2048, n = p.view.count;
    std::vector<double> omega(n, 0.0), projected(6 * n, 0.0);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const Vec3 w = GridDirection(r, c, rows, cols);
        const float axis[6] = {w.x, -w.x, w.y, -w.y, w.z, -w.z};
        for (int i = 0; i < n; ++i) {
          if (!(PortalCrossing(p.pieces[i], x, w) > 0.0f)) continue;
          omega[i] += 1.0;
          for (int f = 0; f < 6; ++f) projected[f * n + i] += std::max(axis[f], 0.0f);
        }
      }
    double worst = 0.0;
    for (int f = 0; f < kPortalFacings; ++f) {
      double total = 0.0, totalProjected = 0.0;
      for (int i = 0; i < n; ++i) total += omega[i], totalProjected += f < 6 ? projected[f * n + i] : 0.0;
      for (int i = 0; i < n; ++i) {
        const double share = omega[i] / total,
                     want = f < 6 ? (1.0 - kPortalSphereShare) * projected[f * n + i] / totalProjected +
                                        kPortalSphereShare * share
                                  : share,
                     got = PortalPickProbability(p.view, false, x, f, i);
        worst = std::max(worst, std::fabs(got - want));
        EXPECT_NEAR(got, want, 1.5e-3) << "piece " << i << ", facing " << f << ", from vertex (" << v[0] << ", " << v[1]
                                       << ", " << v[2] << ")";
      }
    }
    std::printf("vertex (%d, %d, %d): the largest difference from the integrated shares is %.2g\n", v[0], v[1], v[2],
                worst);
  }
}

// Anywhere, inside the bounds and outside, the probabilities are those of the nearest lattice vertex (outside, the
// nearest on the bounds' surface): within half a step of o along each axis inside, on the nearest face outside; they
// are nonnegative and sum to 1.
TEST(Portals, PickProbabilitiesAreTheNearestVerticesAndSumToOne) {
  const Portals p = MakePortals(TestPortals());
  const PortalLattice& l = p.view.lattice;
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> u(-4.0f, 8.0f);
  double worstSum = 0.0;
  int outside = 0;
  for (int k = 0; k < 20000; ++k) {
    const Vec3 o(u(rng) * 0.5f, u(rng), u(rng) * 0.4f);
    const int vertex = PortalVertex(l, o), idx[3] = {vertex % l.nx, vertex / l.nx % l.ny, vertex / (l.nx * l.ny)};
    const int n[3] = {l.nx, l.ny, l.nz};
    bool in = true;
    for (int a = 0; a < 3; ++a) {
      const double t = (o[a] - l.lo[a]) / l.step[a];
      in = in && t >= 0.0 && t <= n[a] - 1;
      const double want = std::min(std::max(t, 0.0), n[a] - 1.0);
      ASSERT_LE(std::fabs(idx[a] - want), 0.5 + 1e-4)
          << "axis " << a << " of (" << o.x << ", " << o.y << ", " << o.z << "): vertex " << idx[a] << " of " << n[a];
    }
    outside += !in;
    for (int f = 0; f < kPortalFacings; ++f) {
      const float* table = PortalTable(p.view, vertex, f);
      double sum = 0.0;
      for (int i = 0; i < p.view.count; ++i) {
        const float pi = PortalPickProbability(p.view, false, o, f, i);
        ASSERT_GE(pi, 0.0f);
        ASSERT_EQ(pi, table[i] - (i > 0 ? table[i - 1] : 0.0f));
        sum += pi;
      }
      worstSum = std::max(worstSum, std::fabs(sum - 1.0));
    }
  }
  std::printf("largest |sum - 1| %.2g; %d of 20000 points outside the bounds\n", worstSum, outside);
  EXPECT_GT(outside, 1000);
  EXPECT_LT(worstSum, 1e-5);
}

// The portals on the six faces of the cube [-h, h]^3, a quad (two triangles) each.
std::vector<Vec3> CubeOfPortals(float h) {
  std::vector<Vec3> c;
  for (int axis = 0; axis < 3; ++axis)
    for (float side : {-h, h}) {
      auto corner = [&](float a, float b) {
        Vec3 v;
        v[axis] = side, v[(axis + 1) % 3] = a, v[(axis + 2) % 3] = b;
        return v;
      };
      for (Vec3 v : {corner(-h, -h), corner(h, -h), corner(h, h), corner(-h, -h), corner(h, h), corner(-h, h)})
        c.push_back(v);
    }
  return c;
}

void ExpectDirectionsFollowThePdf(int mode, int facing, const std::vector<Vec3>& corners = TestPortals()) {
  const Portals p = MakePortals(corners);
  const Vec3 o(0.2f, 0.1f, -0.3f), ng(0.0f, 0.0f, 1.0f);  // the offset along +-ng moves the origin by 1e-4
  const int rows = 32, cols = 64, sub = 48, n = 1000000;
  std::vector<double> count(rows * cols, 0.0), expect(rows * cols, 0.0);
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  int rejected = 0, behind = 0;
  for (int i = 0; i < n; ++i) {
    const float u1 = u(rng), u2 = u(rng);
    const EnvSample s = SampleEnvPortals(EnvMapView{}, Vec3(1.0f), p.view, mode, 1.0f, o, ng, facing, 1.0f, u1, u2);
    // frontOnly: the same sample where it leaves on ng's side, none behind.
    const EnvSample f =
        SampleEnvPortals(EnvMapView{}, Vec3(1.0f), p.view, mode, 1.0f, o, ng, facing, 1.0f, u1, u2, false, true);
    if (!(s.pdf > 0.0f)) {
      ++rejected;
      ASSERT_FALSE(f.pdf > 0.0f);
      continue;
    }
    if (Dot(s.wi, ng) > 0.0f) {
      ASSERT_EQ(f.pdf, s.pdf);
      ASSERT_EQ(f.wi.x, s.wi.x);
    } else {
      ASSERT_EQ(f.pdf, 0.0f);
      ++behind;
    }
    const float again =
        PortalMixturePdf(p.view, mode, 1.0f, OffsetRayOrigin(o, ng, s.wi, 1.0f), facing, s.wi, 1.0f / (4.0f * kPi));
    ASSERT_NEAR(s.pdf, again, 1e-6f * again);
    count[GridCell(s.wi, rows, cols)] += 1.0;
  }
  // Only portal points within the origin's offset (1e-4) of the surface's plane are refused: a sliver of the portals
  // (this plane crosses three of them).
  EXPECT_LT(rejected, n / 2000);
  EXPECT_GT(behind, n / 1000) << "frontOnly checked on directions behind the surface";
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      for (int a = 0; a < sub; ++a)
        for (int b = 0; b < sub; ++b)
          expect[r * cols + c] +=
              PortalPdf(p.view, mode, o, facing, GridDirection(r, c, rows, cols, (a + 0.5) / sub, (b + 0.5) / sub));
  double chi2 = 0.0, pooledCount = 0.0, pooledExpect = 0.0;
  int bins = 0;
  for (int k = 0; k < rows * cols; ++k) {
    const double e = expect[k] * n * 4.0 * kPi / (static_cast<double>(rows) * cols * sub * sub);
    if (e < 20.0) {
      pooledCount += count[k];
      pooledExpect += e;
      continue;
    }
    chi2 += (count[k] - e) * (count[k] - e) / e;
    ++bins;
  }
  if (pooledExpect > 0.0) chi2 += (pooledCount - pooledExpect) * (pooledCount - pooledExpect) / pooledExpect, ++bins;
  const double dof = bins - 1;
  std::printf("%s, points %s, facing %d: chi-square %.1f over %g degrees of freedom\n",
              mode & kPortalPickByArea ? "by area" : "by the lattice",
              mode & kPortalAreaPoints ? "by area" : "by solid angle", facing, chi2, dof);
  ASSERT_GT(bins, 100);
  EXPECT_LT(chi2, dof + 6.0 * std::sqrt(2.0 * dof));
}

// Directions toward uniform points on the portals (SampleEnvPortals with mix 1), counted in 32 x 64 equal-area bins,
// against the counts the portal pdf predicts (its integral over each bin, 48 x 48 midpoints a bin: with 16 x 16 the
// midpoints' error at the portals' outlines alone gave a chi-square of 500 in bins of up to 50000 counts). Bins
// expecting fewer than 20 are pooled. The bound dof + 6 sqrt(2 dof) is a false alarm below 1e-6. Each sample's pdf must
// be what a ray leaving the scene along it recomputes from the same origin (PortalMixturePdf), or MIS would be biased.
// On the cube of portals around the origin, no ray from inside crosses two pieces (PortalsCrossedOnce): there a
// sample's pdf is its own piece's term, which must still be the loop's.
TEST(Portals, SampledDirectionsFollowThePdf) {
  ExpectDirectionsFollowThePdf(kPortalPickByArea, kPortalAnyFacing);
  ExpectDirectionsFollowThePdf(kPortalPickByArea | kPortalAreaPoints, kPortalAnyFacing);
  ExpectDirectionsFollowThePdf(0, kPortalAnyFacing);
  ExpectDirectionsFollowThePdf(0, PortalFacing(Vec3(0.0f, 0.0f, 1.0f)));
  ExpectDirectionsFollowThePdf(kPortalAreaPoints, PortalFacing(Vec3(0.0f, 0.0f, 1.0f)));
  ExpectDirectionsFollowThePdf(0, PortalFacing(Vec3(0.0f, 0.0f, 1.0f)), CubeOfPortals(1.5f));
  ExpectDirectionsFollowThePdf(kPortalAreaPoints, kPortalAnyFacing, CubeOfPortals(1.5f));
}

// The solid angle of [0, x] x [y0, y1] at z0 (PortalStripAngle's Phi), in double.
double StripAngle(double x, double y0, double y1, double z0) {
  auto f = [&](double y) { return std::atan2(x * y, std::fabs(z0) * std::sqrt(x * x + y * y + z0 * z0)); };
  return f(y1) - f(y0);
}

// Rectangles of edges 0.5 to 4 in random orientations, seen from origins 0.02 to 60 away, and from origins 1e-5 to 0.1
// of the larger edge off the plane beside an edge or a corner: the solid angle in float against double within 2e-4
// of itself wherever points are drawn by it (PortalPointSolidAngle: at least kPortalMinSolidAngle, and at least
// kPortalMinPlaneDistance of the larger edge off the plane; measured 3e-5), and SamplePortalRect's points, 16 a
// rectangle, lie on it and divide it as (u, v) say: the part of the solid angle in [x0, x] is u S, and in the column
// at x the part of its arc below y is v (both in double, within 1e-3; measured up to 1e-4; the closed form alone
// 3e-3 off where seen edge-on, and within 1e-4 of the edge off the plane the column was off by up to half of S).
TEST(Portals, RectanglePointsAreUniformInSolidAngle) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  int drawn = 0, small = 0;
  for (int k = 0; k < 20000; ++k) {
    const Vec3 a = Normalize(Vec3(u(rng) - 0.5f, u(rng) - 0.5f, u(rng) - 0.5f));
    const Vec3 b = Normalize(Cross(a, Vec3(u(rng) - 0.5f, u(rng) - 0.5f, u(rng) - 0.5f)));
    const float l1 = 0.5f + 3.5f * u(rng), l2 = 0.5f + 3.5f * u(rng);
    const Vec3 e1 = a * l1, e2 = b * l2, n = Cross(a, b);
    const PortalPiece rect{Float4{0, 0, 0, 1}, Float4{e1.x, e1.y, e1.z, l1 * l2}, Float4{e2.x, e2.y, e2.z, 2.0f}};
    Vec3 o;
    if (k % 2 == 0) {
      const float dist = 0.02f * std::pow(3000.0f, u(rng));
      o = Vec3(u(rng) - 0.5f, u(rng) - 0.5f, u(rng) - 0.5f) * (2.0f * dist);
    } else {  // near the plane, just outside an edge (and past a corner half the time)
      const float off = std::max(l1, l2) * std::pow(10.0f, -5.0f + 4.0f * u(rng));
      const float s1 = u(rng) < 0.5f ? -0.05f * l1 * u(rng) : l1 * u(rng);
      const float s2 = s1 >= 0.0f || u(rng) < 0.5f ? l2 * (1.0f + 0.05f * u(rng)) : l2 * u(rng);
      o = e1 * (s1 / l1) + e2 * (s2 / l2) + n * (u(rng) < 0.5f ? off : -off);
    }
    const PortalRect r = PortalRectFrom(rect, o);
    float phi0;
    const float s = PortalRectDrawnAngle(r, phi0);
    ASSERT_EQ(PortalPointSolidAngle(rect, o), s);
    if (!(s > 0.0f)) {
      ++small;
      continue;
    }
    ++drawn;
    const double exact = StripAngle(r.x1, r.y0, r.y1, r.z0) - StripAngle(r.x0, r.y0, r.y1, r.z0);
    ASSERT_NEAR(s, exact, 2e-4 * exact) << "origin " << o.x << " " << o.y << " " << o.z;
    for (int j = 0; j < 16; ++j) {
      const float su = (j + u(rng)) / 16.0f, sv = u(rng);
      const Vec3 q = SamplePortalRect(r, o, s, phi0, su, sv);
      const Vec3 d = q - PortalVec(rect.v0);
      const double x = Dot(q - o, r.x), y = Dot(q - o, r.y), reach = 1e-5 * (Length(o) + 4.0);
      ASSERT_NEAR(Dot(d, r.z), 0.0, reach) << "off the rectangle's plane";
      ASSERT_GE(Dot(d, r.x), -reach);
      ASSERT_LE(Dot(d, r.x), l1 + reach);
      const double part = (StripAngle(x, r.y0, r.y1, r.z0) - StripAngle(r.x0, r.y0, r.y1, r.z0)) / exact;
      ASSERT_NEAR(part, su, 1e-3) << "column; origin " << o.x << " " << o.y << " " << o.z;
      const double dd = std::sqrt(x * x + double(r.z0) * r.z0);
      auto h = [&](double t) { return t / std::sqrt(dd * dd + t * t); };
      ASSERT_NEAR((h(y) - h(r.y0)) / (h(r.y1) - h(r.y0)), sv, 1e-3) << "place in the column";
    }
  }
  std::printf("%d rectangles drawn by solid angle, %d by area\n", drawn, small);
  EXPECT_GT(drawn, 8000);
  EXPECT_GT(small, 2000);
}

// A BSDF that transmits draws portal points behind its surface too: a 2 x 2 portal 0.05 under a surface at z = 0,
// origins offset by 1e-3. Directions toward it weighed by their cosine to the normal over their pdf average to the
// projected solid angle from the back origin (the rays' own; midpoint integration in double), within 4 standard errors
// (measured 0.9992 of it, one standard error 8e-4 of it). Points drawn by solid angle from the front origin read 0.981
// of it, 23 standard errors low.
TEST(Portals, TransmittingPointsBehindAreDrawnFromTheBackOrigin) {
  const float h = 0.05f;
  const std::vector<Vec3> quad = {Vec3(-1, -1, -h), Vec3(1, -1, -h), Vec3(1, 1, -h),
                                  Vec3(-1, -1, -h), Vec3(1, 1, -h),  Vec3(-1, 1, -h)};
  const Portals p = MakePortals(quad, Vec3(-2.0f), Vec3(2.0f));
  ASSERT_EQ(p.view.count, 1);
  ASSERT_EQ(p.pieces[0].e2.w, 2.0f);
  const Vec3 at(0.3f, 0.2f, 0.0f), ng(0.0f, 0.0f, 1.0f);
  const float floor = 10.0f;  // offsets of 1e-3
  const Vec3 back = OffsetRayOrigin(at, ng, -ng, floor);
  double exact = 0.0;
  const int cells = 4000;
  for (int i = 0; i < cells; ++i)
    for (int j = 0; j < cells; ++j) {
      const double x = -1.0 + 2.0 * (i + 0.5) / cells - back.x, y = -1.0 + 2.0 * (j + 0.5) / cells - back.y,
                   z = -h - back.z;
      const double r2 = x * x + y * y + z * z;
      exact += z * z / (r2 * r2);
    }
  exact *= 4.0 / (double(cells) * cells);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const int n = 400000;
  double sum = 0.0, sq = 0.0;
  for (int i = 0; i < n; ++i) {
    const EnvSample s = SampleEnvPortals(EnvMapView{}, Vec3(1.0f), p.view, 0, 1.0f, at, ng, kPortalAnyFacing, floor,
                                         u(rng), u(rng), false, false);
    const double c = s.pdf > 0.0f ? std::fabs(s.wi.z) / s.pdf : 0.0;
    sum += c, sq += c * c;
  }
  const double mean = sum / n, err = std::sqrt((sq / n - mean * mean) / n);
  std::printf("projected solid angle %.6f, estimate %.6f +- %.6f (%.4fx)\n", exact, mean, err, mean / exact);
  EXPECT_NEAR(mean, exact, 4.0 * err);
}

// How many of the pieces the ray (o, w) crosses.
int Crossings(const Portals& p, Vec3 o, Vec3 w) {
  int n = 0;
  for (const PortalPiece& piece : p.pieces) n += PortalCrossing(piece, o, w) > 0.0f;
  return n;
}

// BuildPortalSides on five layouts, each probed with rays in random directions from 100,000 random origins in
// [-3, 3]^3: from an origin where PortalsCrossedOnce holds, no ray crosses two pieces; it holds exactly where it may
// (inside the cube of portals, between two parallel panes, everywhere for pieces in one plane, nowhere where two
// coplanar pieces overlap or a piece has others on both sides); and elsewhere rays that cross two exist. Each layout's
// records read as DescribePortalSides says (the --profile row's words).
TEST(Portals, SidesHoldWhereNoRayCrossesTwoPieces) {
  auto quad = [](Vec3 o, Vec3 a, Vec3 b) { return std::vector<Vec3>{o, o + a, o + a + b, o, o + a + b, o + b}; };
  auto join = [](std::vector<Vec3> a, const std::vector<Vec3>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const Vec3 x(1, 0, 0), y(0, 1, 0);
  struct Layout {
    const char* name;
    std::vector<Vec3> corners;
    size_t sides;
    std::function<bool(Vec3)> holds;  // where PortalsCrossedOnce must hold
    bool crossesTwice;                // whether rays from elsewhere cross two pieces
  };
  const Layout layouts[] = {
      {"cube", CubeOfPortals(1.0f), 6,
       [](Vec3 o) { return std::fabs(o.x) <= 1.0f && std::fabs(o.y) <= 1.0f && std::fabs(o.z) <= 1.0f; }, true},
      {"two panes", join(quad(Vec3(-1, -1, 0), x * 2.0f, y * 2.0f), quad(Vec3(-1, -1, 1), x * 2.0f, y * 2.0f)), 2,
       [](Vec3 o) { return o.z >= 0.0f && o.z <= 1.0f; }, true},
      {"one plane", join(quad(Vec3(-1, -1, 0), x, y * 2.0f), quad(Vec3(0, -1, 0), x, y * 2.0f)), 1,
       [](Vec3) { return true; }, false},
      {"overlapping in one plane", join(quad(Vec3(-1, -1, 0), x, y * 2.0f), quad(Vec3(-0.5f, -1, 0), x, y * 2.0f)), 1,
       [](Vec3) { return false; }, true},
      {"the test portals", TestPortals(), 1, [](Vec3) { return false; }, true},
  };
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  const char* const words[] = {"6 half-spaces bound where a ray crosses at most one portal",
                               "2 half-spaces bound where a ray crosses at most one portal",
                               "a ray crosses at most one portal everywhere (all in one plane)",
                               "the loop everywhere (portals overlap, or lie on both sides of one)",
                               "the loop everywhere (portals overlap, or lie on both sides of one)"};
  for (const Layout& l : layouts) {
    const Portals p = MakePortals(l.corners);
    EXPECT_EQ(p.sides.size(), l.sides) << l.name;
    EXPECT_EQ(DescribePortalSides(p.sides), words[&l - layouts]) << l.name;
    int held = 0, wrong = 0, twiceHeld = 0, twiceElsewhere = 0;
    for (int i = 0; i < 100000; ++i) {
      const Vec3 o(u(rng), u(rng), u(rng));
      const bool once = PortalsCrossedOnce(p.view, o);
      held += once, wrong += once != l.holds(o);
      for (int k = 0; k < 8; ++k) {
        const Vec3 w = Normalize(Vec3(u(rng), u(rng), u(rng)));
        const int n = Crossings(p, o, w);
        twiceHeld += once && n > 1, twiceElsewhere += !once && n > 1;
      }
    }
    std::printf("%s: %zu half-spaces, held at %d of 100000 origins, %d rays from the others crossed two pieces\n",
                l.name, p.sides.size(), held, twiceElsewhere);
    EXPECT_EQ(twiceHeld, 0) << l.name;
    EXPECT_EQ(wrong, 0) << l.name;
    EXPECT_EQ(twiceElsewhere > 0, l.crossesTwice) << l.name;
  }
  // Two windows in each of two parallel walls: one half-space per wall, the two pieces' merged.
  const Portals walls = MakePortals(join(join(quad(Vec3(-1, -1, 0), x, y), quad(Vec3(0.5f, -1, 0), x, y)),
                                         join(quad(Vec3(-1, -1, 2), x, y), quad(Vec3(0.5f, -1, 2), x, y))));
  EXPECT_EQ(walls.sides.size(), 2u);
  EXPECT_TRUE(PortalsCrossedOnce(walls.view, Vec3(0.1f, 0.2f, 1.0f)));
  EXPECT_FALSE(PortalsCrossedOnce(walls.view, Vec3(0.1f, 0.2f, 2.5f)));
  // The same ten times as large, turned by 0.3 radians about y and moved 1,000 units from the world's origin, where
  // the corners' float rounding puts a wall's two windows further apart than 1e-5 of the layout's size: still two.
  const float c = std::cos(0.3f), sn = std::sin(0.3f);
  std::vector<Vec3> turned =
      join(join(quad(Vec3(-10, -10, 0), x * 10.0f, y * 10.0f), quad(Vec3(5, -10, 0), x * 10.0f, y * 10.0f)),
           join(quad(Vec3(-10, -10, 20), x * 10.0f, y * 10.0f), quad(Vec3(5, -10, 20), x * 10.0f, y * 10.0f)));
  for (Vec3& v : turned) v = Vec3(1000.0f + c * v.x + sn * v.z, v.y, 1000.0f - sn * v.x + c * v.z);
  const Portals far = MakePortals(turned, Vec3(980.0f, -15.0f, 980.0f), Vec3(1030.0f, 15.0f, 1030.0f));
  EXPECT_EQ(far.sides.size(), 2u) << "the windows of a wall, whose normals and offsets differ by rounding, as one";
  EXPECT_TRUE(PortalsCrossedOnce(far.view, Vec3(1000.0f + sn * 10.0f, 0.0f, 1000.0f + c * 10.0f)));
}

// --naive-portal-pdf reaches the per-ray code (RenderParams::envPortalLoop) and changes the time, not the image: on the
// hall, where the half-spaces hold inside, the loop finds the drawn piece alone and the images are byte-identical.
TEST(Portals, LoopTwinRendersTheSameImage) {
  RenderOptions o = test::QuietRender(32, 18, 4, 5);
  EXPECT_EQ(MakeRenderParams(o).envPortalLoop, 0);
  const SceneData d = test::LoadWithMap(test::ProjectScenesDir() + "/skyhall.obj", Vec3(2.5f, 4, 10), Vec3(38, 6, 10),
                                        60.0f, 32, 18, nullptr, 0.0f, Vec3(1.0f));
  ASSERT_EQ(d.portalSides.size(), 3u) << "the hall's three planes of portals";
  const std::vector<float> drawn = RenderCpu(d, o).rgb;
  o.envPortalLoop = true;
  EXPECT_EQ(MakeRenderParams(o).envPortalLoop, 1);
  EXPECT_EQ(MakeRenderParams(o).envPortalAreaPoints, 0);
  const std::vector<float> loop = RenderCpu(d, o).rgb;
  ASSERT_EQ(drawn.size(), loop.size());
  size_t differ = 0;
  for (size_t i = 0; i < drawn.size(); ++i) differ += drawn[i] != loop[i];
  EXPECT_EQ(differ, 0u);
}

// The mixture under a map with a sun: samples from either technique report the pdf a miss recomputes, and the mixture
// integrates to 1 (midpoints of 1024 x 2048 cells of the map's (u, v), each inside one texel: the map's part is exact
// up to rounding, the portals' part within its outline error).
TEST(Portals, MixtureWithAMapIsConsistentAndNormalised) {
  const Portals p = MakePortals(TestPortals());
  SceneData d;
  SetEnvironmentMap(d, test::SkyWithSun(64, 32, 40, 8, 2000.0f), 1.0f, 23.0f);
  const EnvMapView map = d.View().env;
  const Vec3 o(0.1f, 0.2f, 0.0f), ng(0.0f, 1.0f, 0.0f);
  const float mix = 0.6f;
  const int facing = PortalFacing(ng);
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  int fromPortals = 0, rejected = 0;
  for (int i = 0; i < 200000; ++i) {
    const float u1 = u(rng), u2 = u(rng);
    const EnvSample s = SampleEnvPortals(map, Vec3(0.0f), p.view, false, mix, o, ng, facing, 1.0f, u1, u2);
    if (!(s.pdf > 0.0f)) {  // a portal point within the offset of the surface's plane (see above)
      ++rejected;
      continue;
    }
    float pdfEnv;
    const Vec3 le = EnvRadiance(map, Vec3(0.0f), s.wi, pdfEnv);
    const float again = PortalMixturePdf(p.view, false, mix, OffsetRayOrigin(o, ng, s.wi, 1.0f), facing, s.wi, pdfEnv);
    ASSERT_NEAR(s.pdf, again, 1e-6f * again) << "u1 " << u1;
    ASSERT_EQ(s.le.x, le.x);
    fromPortals += u1 < mix && PortalPdf(p.view, false, OffsetRayOrigin(o, ng, s.wi, 1.0f), facing, s.wi) > 0.0f;
  }
  EXPECT_LT(rejected, 20);
  EXPECT_NEAR(fromPortals / 200000.0, mix, 0.01) << "the portal branch's directions cross a portal";
  const int rows = 1024, cols = 2048;
  double sum = 0.0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      float sinTheta, pdfEnv;
      const Vec3 w = EnvToWorld(map.p, EnvDirection((c + 0.5f) / cols, (r + 0.5f) / rows, sinTheta));
      EnvRadiance(map, Vec3(0.0f), w, pdfEnv);
      sum += PortalMixturePdf(p.view, false, mix, o, facing, w, pdfEnv) * sinTheta * (kPi / rows) * (2.0 * kPi / cols);
    }
  std::printf("the mixture integrates to %.6f\n", sum);
  EXPECT_NEAR(sum, 1.0, 2e-3);
}

// Portal triangles as pieces, picked by area: a 3 x 1 rectangle split 0 1 2 / 0 2 3 and a unit square split 0 1 3 /
// 1 2 3 become one parallelogram each, a trapezoid's two triangles stay two, a zero-area triangle is left out (and
// does not merge with the triangle before it); the
// cumulative fractions are the areas' (the last exactly 1), and points drawn by area land on the pieces in proportion,
// inside their outlines.
TEST(Portals, PiecesArePickedByArea) {
  std::vector<Vec3> c = {Vec3(0, 0, 0), Vec3(3, 0, 0),    Vec3(3, 1, 0),    Vec3(0, 0, 0), Vec3(3, 1, 0),
                         Vec3(0, 1, 0), Vec3(5, 5, 5),    Vec3(5, 5, 5),    Vec3(6, 5, 5), Vec3(0, 0, 2),
                         Vec3(1, 0, 2), Vec3(0, 1, 2),    Vec3(0, 0, 4),    Vec3(2, 0, 4), Vec3(1.5f, 1, 4),
                         Vec3(0, 0, 4), Vec3(1.5f, 1, 4), Vec3(0.5f, 1, 4), Vec3(0, 0, 6), Vec3(1, 0, 6),
                         Vec3(0, 1, 6), Vec3(1, 0, 6),    Vec3(1, 1, 6),    Vec3(0, 1, 6)};
  const std::vector<PortalPiece> t = BuildPortals(c);
  ASSERT_EQ(t.size(), 5u) << "rectangle, triangle, the trapezoid's two triangles, square";
  const float parallelogram[5] = {2, 0, 0, 0, 2}, area[5] = {3, 0.5f, 1, 0.5f, 1};  // 2: a rectangle
  double acc = 0.0;
  for (int i = 0; i < 5; ++i) {
    acc += area[i];
    EXPECT_EQ(t[i].e2.w, parallelogram[i]) << "piece " << i;
    EXPECT_NEAR(t[i].e1.w, area[i], 1e-6) << "piece " << i;
    EXPECT_NEAR(t[i].v0.w, acc / 6.0, 1e-6) << "piece " << i;
  }
  EXPECT_EQ(t[4].v0.w, 1.0f);
  EXPECT_NEAR(PortalArea(t), 6.0, 1e-6);
  PortalView v{};
  v.pieces = t.data();
  v.count = 5;
  v.area = 6.0f;
  int off = 0, square = 0, piece = -1;
  for (int i = 0; i < 36000; ++i) {
    float solidAngle;
    Vec3 from;
    const Vec3 q = SamplePortalPoint(v, kPortalPickByArea | kPortalAreaPoints, Vec3(0.0f), Vec3(0.0f), kPortalAnyFacing,
                                     (i + 0.5f) / 36000, std::fmod(i * 0.618034f, 1.0f), piece, solidAngle, from);
    EXPECT_EQ(solidAngle, 0.0f);
    EXPECT_EQ(q.z == 6.0f, piece == 4);
    if (q.z == 0.0f) off += q.x < 0.0f || q.x > 3.0f || q.y < 0.0f || q.y > 1.0f;
    if (q.z == 6.0f) off += q.x < 0.0f || q.x > 1.0f || q.y < 0.0f || q.y > 1.0f, ++square;
  }
  EXPECT_EQ(off, 0) << "points outside their parallelogram";
  EXPECT_EQ(square, 6000);
  // A zero-area triangle after a triangle whose edge it touches twice is no parallelogram's other half.
  const std::vector<PortalPiece> lone =
      BuildPortals({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(1, 0, 0), Vec3(1, 0, 0), Vec3(1, 1, 0)});
  ASSERT_EQ(lone.size(), 1u);
  EXPECT_EQ(lone[0].e2.w, 0.0f);
  EXPECT_NEAR(lone[0].e1.w, 0.5, 1e-6);
  c.resize(3 * (kMaxPortalTriangles + 1), Vec3(1, 0, 0));
  for (size_t k = 0; k < c.size(); k += 3) c[k] = Vec3(0, 0, float(k)), c[k + 2] = Vec3(0, 1, float(k));
  EXPECT_THROW(BuildPortals(c), SceneError);
}

// --env-portal-mix auto: the portals' share follows the sky's concentration, kPortalMixMax (1) under a constant sky (as
// a colour or a map) and 0 under a sun that holds most of the power (env_test_scenes.h's sun: 80% of it in one texel).
TEST(Portals, AutomaticMixFollowsTheSky) {
  SceneData d;
  d.environment = Vec3(1.0f);
  UpdateEnvironmentShare(d);
  EXPECT_FLOAT_EQ(d.env.params.portalMix, kPortalMixMax);
  SetEnvironmentMap(d, test::ConstantMap(64, 32, 2.0f), 1.0f, 0.0f);
  EXPECT_NEAR(EnvConcentration(d.env), 0.0, 1e-3);
  EXPECT_NEAR(d.env.params.portalMix, kPortalMixMax, 2e-3f);
  SetEnvironmentMap(d, test::SkyWithSun(64, 32, 40, 8, 2000.0f), 1.0f, 0.0f);
  const double k = EnvConcentration(d.env);
  std::printf("a sky with a sun: concentration %.3f, portal share %.3f\n", k, d.env.params.portalMix);
  EXPECT_GT(k, 0.7);
  EXPECT_EQ(d.env.params.portalMix, 0.0f);
  SetEnvironmentMap(d, test::SkyWithSun(64, 32, 40, 8, 20.0f), 1.0f, 0.0f);  // a faint sun: portals mostly
  EXPECT_GT(d.env.params.portalMix, 0.5f);
  EXPECT_LT(d.env.params.portalMix, kPortalMixMax);
}

// The convex cube under a constant sky (env_light_checks.h) with a portal above it reads its exact answer with
// portals (the default) and without.
TEST(Portals, ConvexDiffuseObjectReadsHalf) {
  test::ExpectConvexDiffuseObjectReadsHalf(
      [](const SceneData& d, const RenderOptions& o) { return RenderCpu(d, o).rgb; },
      {EnvSampling::kPortals, EnvSampling::kImportance}, test::kPortalAboveCube);
}

// The same cube inside a box of six portals: the turned cube's faces draw portal samples from their facings' tables,
// and its BSDF-sampled rays, all of which leave the scene, must weigh their directions with the same tables (a miss
// weighed with the sphere's table instead read 0.5 +- several percent).
TEST(Portals, ConvexDiffuseObjectInABoxOfPortalsReadsHalf) {
  test::ExpectConvexDiffuseObjectReadsHalf(
      [](const SceneData& d, const RenderOptions& o) { return RenderCpu(d, o).rgb; }, {EnvSampling::kPortals},
      test::PortalBoxAroundCube());
}

// An open box lit through a hole in its lid: the inside of [-1, 1] x [0, 2] x [-1, 1] (diffuse, albedo 0.5), the
// lid at y = 2 holed over |x|, |z| < 0.3, with a portal quad over the hole at y = 2.2 (above the lid, as a window's
// portal may lie beyond its opening); dir/openbox.obj, returned.
std::string WriteOpenBox(const std::string& dir) {
  test::WriteFile(dir + "/openbox.mtl", "newmtl wall\nKd 0.5 0.5 0.5\nKs 0 0 0\n");
  std::string obj = "mtllib openbox.mtl\nusemtl wall\no box\n";
  int n = 0;
  auto quad = [&](Vec3 a, Vec3 b, Vec3 c, Vec3 d) {
    for (Vec3 v : {a, b, c, d})
      obj += "v " + std::to_string(v.x) + " " + std::to_string(v.y) + " " + std::to_string(v.z) + "\n";
    obj += "f " + std::to_string(n + 1) + " " + std::to_string(n + 2) + " " + std::to_string(n + 3) + " " +
           std::to_string(n + 4) + "\n";
    n += 4;
  };
  for (const std::array<Vec3, 4>& q : test::OpenBoxQuads(false)) quad(q[0], q[1], q[2], q[3]);
  const float h = test::kOpenBoxHole;
  obj += "o portal_lid\n";
  quad(Vec3(-h, 2.2f, -h), Vec3(h, 2.2f, -h), Vec3(h, 2.2f, h), Vec3(-h, 2.2f, h));
  test::WriteFile(dir + "/openbox.obj", obj);
  return dir + "/openbox.obj";
}

// ExpectPortalsAgreeWithLessNoise (env_light_checks.h) on the CPU.
void ExpectPortalsAgreeWithLessNoise(const SceneData& d, RenderOptions opt, int seeds, double maxRatio,
                                     const char* what) {
  test::ExpectPortalsAgreeWithLessNoise(
      [](const SceneData& sd, const RenderOptions& o) { return RenderCpu(sd, o).rgb; }, d, opt, seeds, maxRatio, what);
}

// The open box under a constant sky, seen from inside: portals and importance agree, portals with less noise (pixel
// variance measured 0.52 times importance's; 0.7 leaves room for the estimate's noise over 8 seeds, and renders that
// did not use the portals would read about 1).
TEST(Portals, OpenBoxMeanAgreesWithLessNoise) {
  const std::string dir = test::MakeTempDir();
  const int w = 24, h = 24;
  const SceneData d =
      test::LoadWithMap(WriteOpenBox(dir), Vec3(0, 1, 0.9f), Vec3(0, 0.6f, -1), 70.0f, w, h, nullptr, 0.0f, Vec3(1.0f));
  ASSERT_EQ(d.portals.size(), 1u) << "the quad's two triangles, one piece";
  ExpectPortalsAgreeWithLessNoise(d, test::QuietRender(w, h, 8, 5), 8, 0.7, "open box");
  test::RemoveTree(dir);
}

// The open box again with a sheet of diffuse transmission under its hole and a second window below it
// (env_light_checks.h's TransmittingSheetInAnOpenBox): a transmitting BSDF draws its portal samples with the sphere's
// table (kPortalAnyFacing), for the directions through it as for those above it, and its rays that leave through a
// window are weighed with that table too. Portals and importance agree (16 seeds: with next-event estimation drawing
// from the hemisphere's table while the path kept the sphere's, the portals' mean read 12 standard errors low),
// portals with less noise (measured 0.51; 0.7 as above).
TEST(Portals, TransmittingSheetInAnOpenBoxAgrees) {
  const std::string dir = test::MakeTempDir();
  const SceneData d = test::TransmittingSheetInAnOpenBox(dir, 32, 32);
  ASSERT_EQ(d.portals.size(), 2u);
  ExpectPortalsAgreeWithLessNoise(d, test::QuietRender(32, 32, 8, 5), 16, 0.7, "transmitting sheet");
  test::RemoveTree(dir);
}

// The hall of make_skyhall.py (15 portal quads, all rectangles) under a constant sky: the same at 32 x 18 pixels, with
// points by solid angle and (--naive-portal-point) by area.
TEST(Portals, HallMeanAgreesWithLessNoise) {
  const int w = 32, h = 18;
  const SceneData d = test::LoadWithMap(test::ProjectScenesDir() + "/skyhall.obj", Vec3(2.5f, 4, 10), Vec3(38, 6, 10),
                                        60.0f, w, h, nullptr, 0.0f, Vec3(1.0f));
  ASSERT_EQ(d.portals.size(), 15u) << "15 quads, a piece each";
  for (const PortalPiece& p : d.portals) ASSERT_EQ(p.e2.w, 2.0f) << "a rectangle";
  RenderOptions o = test::QuietRender(w, h, 8, 5);
  ExpectPortalsAgreeWithLessNoise(d, o, 6, 0.45, "hall");
  o.envPortalAreaPoints = true;
  EXPECT_EQ(MakeRenderParams(o).envPortalAreaPoints, 1);
  ExpectPortalsAgreeWithLessNoise(d, o, 6, 0.45, "hall, points by area");
}

}  // namespace
}  // namespace tracer
