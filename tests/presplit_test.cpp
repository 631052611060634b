// @file presplit_test.cpp: the per-triangle logic of pre-splitting (core/presplit.h), on the CPU: the grid's planes,
// the priority (zero for degenerate and tiny triangles, larger across coarser planes), the budget's exact share-out,
// and the pieces, whose boxes must together hold every point of their triangle and each be the bounds of the triangle
// clipped to its cell (checked against a clipper of the test's own, in long double).
#include "tracer/core/presplit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace tracer {
namespace {

PresplitGrid UnitGrid() { return PresplitGrid::Make(Vec3(0.0f), Vec3(1.0f)); }

// ---- the test's own clipper: a triangle clipped to a box, in long double -------------------------------------------

struct ExactBox {
  long double lo[3], hi[3];
  bool empty;
};

// The bounds of triangle v clipped to the box [lo, hi] (Sutherland-Hodgman by its six planes, long double).
ExactBox ClipToCell(const Vec3* v, Vec3 lo, Vec3 hi) {
  std::vector<std::array<long double, 3>> poly;
  for (int k = 0; k < 3; ++k) poly.push_back({v[k].x, v[k].y, v[k].z});
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side) {
      const long double bound = side == 0 ? lo[a] : hi[a];
      auto in = [&](const std::array<long double, 3>& p) { return side == 0 ? p[a] >= bound : p[a] <= bound; };
      std::vector<std::array<long double, 3>> out;
      for (size_t k = 0; k < poly.size(); ++k) {
        const auto& q = poly[k];
        const auto& r = poly[(k + 1) % poly.size()];
        if (in(q)) out.push_back(q);
        if (in(q) != in(r)) {
          const long double t = (bound - q[a]) / (r[a] - q[a]);
          std::array<long double, 3> c;
          for (int i = 0; i < 3; ++i) c[i] = i == a ? bound : q[i] + (r[i] - q[i]) * t;
          out.push_back(c);
        }
      }
      poly = out;
    }
  ExactBox b{{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}, poly.empty()};
  for (const auto& p : poly)
    for (int a = 0; a < 3; ++a) b.lo[a] = std::min(b.lo[a], p[a]), b.hi[a] = std::max(b.hi[a], p[a]);
  return b;
}

float Get(Vec3 v, int a) { return a == 0 ? v.x : a == 1 ? v.y : v.z; }

// Checks the k pieces of triangle v: each box is the bounds of the triangle clipped to the piece's cell (holding
// them, and within two float steps of them: a box of the cell's halves, or of the triangle's whole box, is not), the
// cells lie in the grid box, and every sampled point of the triangle lies in some piece's box. Returns the pieces.
std::vector<PresplitPieceBox> ExpectSoundPieces(const Vec3* v, const PresplitGrid& g, int k, const char* what) {
  std::vector<PresplitPieceBox> pieces;
  for (int j = 0; j < k; ++j) pieces.push_back(PresplitPiece(v, g, k, j));
  for (int j = 0; j < k; ++j) {
    const PresplitPieceBox& p = pieces[static_cast<size_t>(j)];
    const ExactBox e = ClipToCell(v, p.cellLo, p.cellHi);
    EXPECT_FALSE(e.empty) << what << ": piece " << j << " of " << k << " has an empty cell";
    if (e.empty) continue;
    for (int a = 0; a < 3; ++a) {
      const float lo = Get(p.lo, a), hi = Get(p.hi, a);
      // Within two float steps of the exact bounds, outward only (a float step is 2^-23 of the magnitude).
      const long double slack = 2.5e-7L * std::max(std::fabs(e.lo[a]), std::fabs(e.hi[a])) + 1e-30L;
      EXPECT_LE(lo, e.lo[a]) << what << ": piece " << j << " of " << k << " axis " << a;
      EXPECT_GE(hi, e.hi[a]) << what << ": piece " << j << " of " << k << " axis " << a;
      EXPECT_GE(lo, e.lo[a] - slack) << what << ": piece " << j << " of " << k << " axis " << a << " too loose";
      EXPECT_LE(hi, e.hi[a] + slack) << what << ": piece " << j << " of " << k << " axis " << a << " too loose";
      EXPECT_GE(Get(p.cellLo, a), g.lo[a]);
      EXPECT_LE(Get(p.cellHi, a), g.lo[a] + g.extent[a]);
    }
  }
  // Points of the triangle on a barycentric lattice and at random, in double: each in some box (up to 1e-9 of the
  // grid's size, for the rounding of the sample itself next to a face at a vertex's coordinate).
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double tol = 1e-9 * std::max({g.extent[0], g.extent[1], g.extent[2]});
  int missed = 0;
  for (int s = 0; s < 4000; ++s) {
    double b1, b2;
    if (s < 861) {  // the lattice i/40, j/40 with i + j <= 40
      int i = 0, rest = s;
      while (rest > 40 - i) rest -= 41 - i, ++i;
      b1 = i / 40.0, b2 = rest / 40.0;
    } else {
      b1 = u(rng), b2 = u(rng);
      if (b1 + b2 > 1.0) b1 = 1.0 - b1, b2 = 1.0 - b2;
    }
    double x[3];
    for (int a = 0; a < 3; ++a)
      x[a] = Get(v[0], a) + (Get(v[1], a) - static_cast<double>(Get(v[0], a))) * b1 +
             (Get(v[2], a) - static_cast<double>(Get(v[0], a))) * b2;
    bool inside = false;
    for (const PresplitPieceBox& p : pieces) {
      bool in = true;
      for (int a = 0; a < 3; ++a) in = in && x[a] >= Get(p.lo, a) - tol && x[a] <= Get(p.hi, a) + tol;
      inside = inside || in;
    }
    missed += !inside;
  }
  EXPECT_EQ(missed, 0) << what << ": points of the triangle in no piece's box (k = " << k << ")";
  return pieces;
}

// Distinct cells: a triangle that the grid can cut is cut into k different pieces (none repeated).
int DistinctCells(const std::vector<PresplitPieceBox>& pieces) {
  int distinct = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    bool seen = false;
    for (size_t j = 0; j < i; ++j)
      seen = seen || (pieces[i].cellLo == pieces[j].cellLo && pieces[i].cellHi == pieces[j].cellHi);
    distinct += !seen;
  }
  return distinct;
}

// ---- the grid -------------------------------------------------------------------------------------------------------

TEST(Presplit, CoarsestPlaneInsideABox) {
  const PresplitGrid g = UnitGrid();
  PresplitPlane p = PresplitAxisPlane(g, 0, 0.1f, 0.9f);
  EXPECT_EQ(p.at, 0.5f);
  EXPECT_EQ(p.bit, 3 * 20 + 0);  // the middle plane, the Morton code's highest bit on x
  p = PresplitAxisPlane(g, 1, 0.3f, 0.45f);
  EXPECT_EQ(p.at, 0.375f);  // 3/8: level 18 of 20
  EXPECT_EQ(p.bit, 3 * 18 + 1);
  // Strictly inside: the bounds' own planes do not count.
  p = PresplitAxisPlane(g, 2, 0.25f, 0.5f);
  EXPECT_EQ(p.at, 0.375f);
  EXPECT_EQ(p.bit, 3 * 18 + 2);
  // The finest cell is 2^-21 wide: a box inside one crosses nothing.
  const float cell = std::ldexp(1.0f, -21);
  EXPECT_LT(PresplitAxisPlane(g, 0, 0.5f + 0.1f * cell, 0.5f + 0.9f * cell).bit, 0);
  EXPECT_EQ(PresplitAxisPlane(g, 0, 0.5f + 0.5f * cell, 0.5f + 1.5f * cell).at, 0.5f + cell);
  EXPECT_EQ(PresplitAxisPlane(g, 0, 0.5f + 0.5f * cell, 0.5f + 1.5f * cell).bit, 0);
  // Outside the grid or flat: none.
  EXPECT_LT(PresplitAxisPlane(g, 0, 1.5f, 2.0f).bit, 0);
  EXPECT_LT(PresplitAxisPlane(g, 0, 0.5f, 0.5f).bit, 0);
  // Across axes the highest Morton bit: z's level-19 plane (bit 59) over x's level-19 plane (bit 57).
  const PresplitPlane b = PresplitBoxPlane(g, Vec3(0.2f, 0.6f, 0.2f), Vec3(0.3f, 0.7f, 0.3f));
  EXPECT_EQ(b.axis, 2);
  EXPECT_EQ(b.at, 0.25f);
  EXPECT_EQ(b.bit, 3 * 19 + 2);
}

// ---- the priority ---------------------------------------------------------------------------------------------------

TEST(Presplit, DegenerateAndTinyTrianglesHaveNoPriority) {
  const PresplitGrid g = UnitGrid();
  // On the diagonal: a box of half area 3 * 0.5^2, no area of its own. (Between 0.1f and 0.9f it would be a sliver:
  // their midpoint is not 0.5f.)
  const Vec3 collinear[3] = {Vec3(0.25f), Vec3(0.75f), Vec3(0.5f)};
  EXPECT_EQ(PresplitPriority(collinear, g), 0.0);
  const Vec3 collinearOffAxis[3] = {Vec3(0.125f, 0.25f, 0.375f), Vec3(0.375f, 0.25f, 0.875f),
                                    Vec3(0.25f, 0.25f, 0.625f)};
  EXPECT_EQ(PresplitPriority(collinearOffAxis, g), 0.0);
  const Vec3 repeated[3] = {Vec3(0.1f, 0.2f, 0.3f), Vec3(0.8f, 0.7f, 0.9f), Vec3(0.1f, 0.2f, 0.3f)};
  EXPECT_EQ(PresplitPriority(repeated, g), 0.0);
  const float c = std::ldexp(1.0f, -23);  // a quarter of the finest cell; 0.25 lies on a plane
  const Vec3 tiny[3] = {Vec3(0.25f + c, 0.25f + c, 0.25f + c), Vec3(0.25f + 3 * c, 0.25f + c, 0.25f + 2 * c),
                        Vec3(0.25f + c, 0.25f + 3 * c, 0.25f + 3 * c)};
  EXPECT_EQ(PresplitPriority(tiny, g), 0.0);
  const Vec3 nan[3] = {Vec3(0.1f), Vec3(0.9f, 0.1f, 0.5f), Vec3(NAN, 0.5f, 0.5f)};
  EXPECT_EQ(PresplitPriority(nan, g), 0.0);
  // Not degenerate: a long diagonal sliver, 1e-3 wide, has a box far larger than itself.
  const Vec3 sliver[3] = {Vec3(0.1f), Vec3(0.9f), Vec3(0.5f, 0.501f, 0.5f)};
  EXPECT_GT(PresplitPriority(sliver, g), 0.0);
}

TEST(Presplit, PriorityGrowsWithWasteAndWithTheCoarsenessOfThePlaneCrossed) {
  const PresplitGrid g = UnitGrid();
  // The same sliver along the diagonal of a small box, across the middle planes and then moved off them (across
  // level-18 planes only): the coarser the plane, the higher the priority (2^(i/3): 2^2 per level and axis).
  auto sliver = [](Vec3 o) { return std::array<Vec3, 3>{o, o + Vec3(0.1f), o + Vec3(0.05f, 0.052f, 0.05f)}; };
  const auto across = sliver(Vec3(0.45f)), off = sliver(Vec3(0.26f));
  const double pa = PresplitPriority(across.data(), g), po = PresplitPriority(off.data(), g);
  EXPECT_GT(pa, 3.0 * po) << pa << " " << po;
  EXPECT_NEAR(PresplitExcess(across.data(), g), PresplitExcess(off.data(), g), 1e-6);
  // A flat, axis-aligned right triangle wastes half its box; the diagonal sliver across the same planes most of it.
  const Vec3 flat[3] = {Vec3(0.45f, 0.45f, 0.5f), Vec3(0.55f, 0.45f, 0.5f), Vec3(0.45f, 0.55f, 0.5f)};
  const double flatBox = 0.1 * 0.1;
  EXPECT_NEAR(PresplitExcess(flat, g), 0.5 * flatBox / 3.0, 1e-7);
  EXPECT_GT(PresplitExcess(across.data(), g), 5.0 * PresplitExcess(flat, g));
}

// ---- the budget -----------------------------------------------------------------------------------------------------

// Shares out `extra` over weights by inclusive prefix sums, as the kernels do: returns each triangle's extras.
std::vector<uint32_t> ShareOut(const std::vector<uint64_t>& w, uint32_t extra) {
  uint64_t total = 0;
  for (uint64_t x : w) total += x;
  std::vector<uint32_t> out;
  uint64_t prefix = 0;
  uint32_t before = 0;
  for (uint64_t x : w) {
    prefix += x;
    const uint32_t upto = PresplitExtrasUpTo(prefix, total, extra);
    EXPECT_GE(upto, before) << "the share-out went backwards";
    out.push_back(upto - before);
    before = upto;
  }
  return out;
}

TEST(Presplit, BudgetIsMetExactly) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 5000);
    const int scale = PresplitWeightScale(static_cast<uint32_t>(n));
    std::vector<uint64_t> w(static_cast<size_t>(n));
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (auto& x : w) {
      const int kind = static_cast<int>(rng() % 4);  // zeros, small, ordinary and the largest priorities
      const double pr = kind == 0 ? 0.0 : kind == 1 ? 1e-3 * u(rng) : kind == 2 ? u(rng) : std::ldexp(u(rng), 20);
      x = PresplitWeight(pr, scale);
    }
    const float budget = static_cast<float>(u(rng));
    const uint32_t extra = PresplitBudgetRefs(static_cast<uint32_t>(n), budget);
    EXPECT_EQ(extra, static_cast<uint32_t>(std::floor(n * static_cast<double>(budget))));
    const std::vector<uint32_t> got = ShareOut(w, extra);
    uint64_t sum = 0, total = 0;
    for (size_t t = 0; t < got.size(); ++t) {
      sum += got[t];
      total += w[t];
      if (w[t] == 0) {
        EXPECT_EQ(got[t], 0u) << "a triangle without priority got pieces";
      }
    }
    EXPECT_EQ(sum, total ? extra : 0u) << "trial " << trial;
  }
  // The largest weights (2^(62/3)) of the most triangles (2^30) still add up below 2^63.
  const int scale = PresplitWeightScale(1u << 30);
  EXPECT_LT(static_cast<double>(PresplitWeight(std::cbrt(std::ldexp(1.0, 62)), scale)) * std::ldexp(1.0, 30),
            std::ldexp(1.0, 63));
  // Out-of-range budgets are clamped.
  EXPECT_EQ(PresplitBudgetRefs(1000, -0.5f), 0u);
  EXPECT_EQ(PresplitBudgetRefs(1000, 5.0f), 1000u);
}

TEST(Presplit, BudgetGoesToTheTrianglesWithTheHighestPriority) {
  const std::vector<uint64_t> w = {1, 0, 10, 1, 1000, 5, 0, 100};  // total 1117
  const std::vector<uint32_t> got = ShareOut(w, 111);
  EXPECT_EQ(got[4], 99u);  // 1000 / 1117 of 111 = 99.4 (a floor of differences: within one)
  EXPECT_EQ(got[7], 10u);
  EXPECT_EQ(got[1] + got[6], 0u);
  EXPECT_EQ(got[0] + got[1] + got[2] + got[3] + got[4] + got[5] + got[6] + got[7], 111u);
}

// ---- the pieces -----------------------------------------------------------------------------------------------------

TEST(Presplit, PiecesBoundTheirPartsAndCoverTheTriangle) {
  const PresplitGrid g = PresplitGrid::Make(Vec3(-2.0f, -1.0f, 0.5f), Vec3(3.0f, 4.0f, 7.0f));
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  auto inGrid = [&]() { return Vec3(-2.0f + 5.0f * u(rng), -1.0f + 5.0f * u(rng), 0.5f + 6.5f * u(rng)); };
  for (int trial = 0; trial < 60; ++trial) {
    std::array<Vec3, 3> v;
    if (trial % 3 == 0) {  // a long thin one: two far points and one near their middle
      v[0] = inGrid(), v[1] = inGrid();
      v[2] = (v[0] + v[1]) * 0.5f + Vec3(0.01f * u(rng), 0.01f * u(rng), 0.01f * u(rng));
    } else if (trial % 3 == 1) {  // axis-aligned (flat on y)
      v[0] = inGrid(), v[1] = inGrid(), v[2] = inGrid();
      v[1].y = v[2].y = v[0].y;
    } else {
      v[0] = inGrid(), v[1] = inGrid(), v[2] = inGrid();
    }
    for (int k : {1, 2, 3, 5, 8, 13, 40}) {
      const std::string what = "trial " + std::to_string(trial);
      const std::vector<PresplitPieceBox> pieces = ExpectSoundPieces(v.data(), g, k, what.c_str());
      EXPECT_EQ(DistinctCells(pieces), k) << what << ": the grid should cut a triangle this large into " << k;
    }
  }
}

// The pieces' boxes are the clipped parts' bounds, not halves of the box: along a diagonal they shrink on every axis,
// so that k pieces of a thin diagonal triangle have boxes whose areas add up to far less than its box's. The grid's
// planes are dyadic, so pieces are not all equal: each within 1.5 times an even share of the length (a box cut at one
// plane only, or a piece left unsplit, is at least twice that).
TEST(Presplit, PiecesOfADiagonalSliverShrinkOnEveryAxis) {
  const PresplitGrid g = UnitGrid();
  const Vec3 v[3] = {Vec3(0.05f), Vec3(0.95f), Vec3(0.5f, 0.505f, 0.5f)};
  const double whole = PresplitHalfArea(Vec3(0.05f), Vec3(0.95f));
  for (int k : {2, 4, 16}) {
    const std::vector<PresplitPieceBox> pieces = ExpectSoundPieces(v, g, k, "diagonal sliver");
    double sum = 0.0;
    for (const PresplitPieceBox& p : pieces) {
      sum += PresplitHalfArea(p.lo, p.hi);
      for (int a = 0; a < 3; ++a) EXPECT_LT(Get(p.hi, a) - Get(p.lo, a), 0.9f / static_cast<float>(k) * 1.5f);
    }
    EXPECT_LT(sum, 1.3 * whole / k) << k << " pieces";  // about 1/k of it: each piece's box is about 1/k^2
  }
}

// A triangle the grid cannot cut (inside one finest cell) gives k copies of its own box: never wrong, only wasted.
TEST(Presplit, AnUncuttableTriangleRepeatsItsBox) {
  const PresplitGrid g = UnitGrid();
  const float c = std::ldexp(1.0f, -23);
  const Vec3 v[3] = {Vec3(0.25f + c), Vec3(0.25f + 3 * c, 0.25f + c, 0.25f + c),
                     Vec3(0.25f + c, 0.25f + 3 * c, 0.25f + 2 * c)};
  const std::vector<PresplitPieceBox> pieces = ExpectSoundPieces(v, g, 4, "tiny");
  for (const PresplitPieceBox& p : pieces) {
    EXPECT_EQ(p.lo, Min(v[0], Min(v[1], v[2])));
    EXPECT_EQ(p.hi, Max(v[0], Max(v[1], v[2])));
  }
}

TEST(Presplit, ShareGivesEachSideAPiece) {
  EXPECT_EQ(PresplitShare(2, 1.0, 1000.0, 1.0, 1.0), 1);
  EXPECT_EQ(PresplitShare(2, 1000.0, 1.0, 1.0, 1.0), 1);
  EXPECT_EQ(PresplitShare(10, 3.0, 1.0, 1.0, 1.0), 8);  // 7.5 rounds up
  EXPECT_EQ(PresplitShare(10, 0.0, 0.0, 1.0, 4.0), 2);  // no waste on either side: by the boxes' areas
  EXPECT_EQ(PresplitShare(9, 0.0, 0.0, 0.0, 0.0), 5);   // nothing to go by: evenly (4.5 rounds up)
  EXPECT_EQ(PresplitShare(100, 1.0, 0.0, 1.0, 1.0), 99);
}

}  // namespace
}  // namespace tracer
