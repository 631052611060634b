// @file portals.cpp: the environment portals' records and the lattice of their pick probabilities (core/portals.h).
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <string>

#include "tracer/host/scene_data.h"
#include "tracer/host/thread_pool.h"

namespace tracer {

namespace {

Float4 Record(Vec3 v, float w) { return Float4{v.x, v.y, v.z, w}; }

bool Same(Vec3 p, Vec3 q) { return p.x == q.x && p.y == q.y && p.z == q.z; }

// Whether triangles (a0, a1, a2) and (b0, b1, b2) share an edge and form a parallelogram together: then its corner
// `corner` (the first triangle's vertex off the shared edge) and edges e1, e2 to the shared edge's ends. The second
// triangle must hold both ends of the edge at two of its vertices and, at its third, the fourth corner corner + e1 +
// e2 within 1e-5 of the shorter edge's length.
bool Parallelogram(const Vec3* a, const Vec3* b, Vec3& corner, Vec3& e1, Vec3& e2) {
  for (int i = 0; i < 3; ++i) {  // a[i]: the vertex off the shared edge a[i + 1] a[i + 2]
    const Vec3 s1 = a[(i + 1) % 3], s2 = a[(i + 2) % 3];
    for (int k1 = 0; k1 < 3; ++k1)
      for (int k2 = 0; k2 < 3; ++k2) {
        if (k1 == k2 || !Same(b[k1], s1) || !Same(b[k2], s2)) continue;
        const Vec3 other = b[3 - k1 - k2];
        corner = a[i], e1 = s1 - a[i], e2 = s2 - a[i];
        return Length(corner + e1 + e2 - other) <= 1e-5f * std::min(Length(e1), Length(e2));
      }
  }
  return false;
}

double Dot3(const double* u, const double* v) { return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]; }

void Cross3(const double* u, const double* v, double* out) {
  out[0] = u[1] * v[2] - u[2] * v[1], out[1] = u[2] * v[0] - u[0] * v[2], out[2] = u[0] * v[1] - u[1] * v[0];
}

// The solid angle of triangle (a, b, c) seen from x, from either side (Van Oosterom and Strackee 1983:
// tan(omega / 2) = |a.(b x c)| / (|a||b||c| + (a.b)|c| + (a.c)|b| + (b.c)|a|), the corners taken from x).
double TriangleSolidAngle(const double a[3], const double b[3], const double c[3]) {
  double bc[3];
  Cross3(b, c, bc);
  const double la = std::sqrt(Dot3(a, a)), lb = std::sqrt(Dot3(b, b)), lc = std::sqrt(Dot3(c, c));
  const double num = std::fabs(Dot3(a, bc));
  const double den = la * lb * lc + Dot3(a, b) * lc + Dot3(a, c) * lb + Dot3(b, c) * la;
  return 2.0 * std::atan2(num, den);
}

// The projected solid angle of the convex polygon `poly` (m corners taken from x) about the unit normal n: the
// integral of n.w over the directions w through it on n's side. The polygon is clipped to that side (Sutherland and
// Hodgman 1974); then Lambert's formula, |n . sum over the edges (a, b) of angle(a, b) (a x b) / |a x b|| / 2.
double ProjectedSolidAngle(const double (*poly)[3], int m, const double n[3]) {
  double clipped[8][3];
  int k = 0;
  for (int j = 0; j < m; ++j) {
    const double* a = poly[j];
    const double* b = poly[(j + 1) % m];
    const double da = Dot3(n, a), db = Dot3(n, b);
    if (da >= 0.0) std::copy(a, a + 3, clipped[k++]);
    if ((da >= 0.0) != (db >= 0.0)) {
      const double t = da / (da - db);
      for (int c = 0; c < 3; ++c) clipped[k][c] = a[c] + t * (b[c] - a[c]);
      ++k;
    }
  }
  double sum = 0.0;
  for (int j = 0; j < k; ++j) {
    const double* a = clipped[j];
    const double* b = clipped[(j + 1) % k];
    double c[3];
    Cross3(a, b, c);
    const double len = std::sqrt(Dot3(c, c));
    if (len > 0.0) sum += std::atan2(len, Dot3(a, b)) * Dot3(n, c) / len;
  }
  return 0.5 * std::fabs(sum);
}

// A piece's corners (3 or 4), in order around it, taken from (px, py, pz), in double.
int PieceCorners(const PortalPiece& t, double px, double py, double pz, double (*out)[3]) {
  const double p[3] = {px, py, pz};
  const Vec3 v0 = PortalVec(t.v0), e1 = PortalVec(t.e1), e2 = PortalVec(t.e2);
  const bool parallelogram = t.e2.w != 0.0f;
  for (int c = 0; c < 3; ++c) {
    out[0][c] = v0[c] - p[c];
    out[1][c] = out[0][c] + e1[c];
    out[2][c] = out[0][c] + e1[c] + e2[c];  // a parallelogram's far corner; a triangle's third is out[0] + e2
    out[3][c] = out[0][c] + e2[c];
  }
  if (!parallelogram) std::copy(out[3], out[3] + 3, out[2]);
  return parallelogram ? 4 : 3;
}

// One lattice vertex's tables (kPortalFacings of n cumulative pick probabilities) at (px, py, pz).
void PortalVertexTables(const std::vector<PortalPiece>& portals, double px, double py, double pz, float* out) {
  const size_t n = portals.size();
  std::vector<double> omega(n), projected(n * 6);
  for (size_t i = 0; i < n; ++i) {
    double poly[4][3];
    const bool parallelogram = PieceCorners(portals[i], px, py, pz, poly) == 4;
    omega[i] = TriangleSolidAngle(poly[0], poly[1], poly[2]);
    if (parallelogram) omega[i] += TriangleSolidAngle(poly[0], poly[2], poly[3]);
    if (!std::isfinite(omega[i])) omega[i] = 0.0;
    for (int f = 0; f < 6; ++f) {
      double axis[3] = {0.0, 0.0, 0.0};
      axis[f / 2] = f % 2 ? -1.0 : 1.0;
      const double psa = ProjectedSolidAngle(poly, parallelogram ? 4 : 3, axis);
      projected[static_cast<size_t>(f) * n + i] = std::isfinite(psa) ? psa : 0.0;
    }
  }
  double total = std::accumulate(omega.begin(), omega.end(), 0.0);
  if (!(total > 0.0)) {  // in the plane of every portal: by area
    for (size_t i = 0; i < n; ++i) omega[i] = static_cast<double>(portals[i].e1.w);
    total = std::accumulate(omega.begin(), omega.end(), 0.0);
  }
  for (int f = 0; f < kPortalFacings; ++f) {
    const double* psa = f < 6 ? &projected[static_cast<size_t>(f) * n] : nullptr;
    // Where the vertex lies in the plane of every portal, Lambert's sum is rounding (about 1e-17), not a share.
    const double psaSum = psa ? std::accumulate(psa, psa + n, 0.0) : 0.0, psaTotal = psaSum > 1e-12 ? psaSum : 0.0;
    float* row = out + static_cast<size_t>(f) * n;
    double acc = 0.0;
    for (size_t i = 0; i < n; ++i) {
      acc += psaTotal > 0.0 ? (1.0 - kPortalSphereShare) * psa[i] / psaTotal + kPortalSphereShare * omega[i] / total
                            : omega[i] / total;
      row[i] = i + 1 == n ? 1.0f : static_cast<float>(std::min(acc, 1.0));
    }
  }
}

// Whether two convex polygons in (nearly) one plane of unit normal n share more than their edges: no edge of either
// separates them by more than -tol along its in-plane normal (the separating axis theorem).
bool CoplanarOverlap(const double (*a)[3], int na, const double (*b)[3], int nb, const double n[3], double tol) {
  for (int side = 0; side < 2; ++side) {
    const double(*p)[3] = side ? b : a;
    const int m = side ? nb : na;
    for (int j = 0; j < m; ++j) {
      double edge[3], axis[3];
      for (int c = 0; c < 3; ++c) edge[c] = p[(j + 1) % m][c] - p[j][c];
      Cross3(n, edge, axis);
      const double len = std::sqrt(Dot3(axis, axis));
      if (!(len > 0.0)) continue;
      double lo[2] = {HUGE_VAL, HUGE_VAL}, hi[2] = {-HUGE_VAL, -HUGE_VAL};
      for (int k = 0; k < na + nb; ++k) {
        const double x = Dot3(axis, k < na ? a[k] : b[k - na]) / len;
        const int which = k < na ? 0 : 1;
        lo[which] = std::min(lo[which], x), hi[which] = std::max(hi[which], x);
      }
      if (hi[0] <= lo[1] + tol || hi[1] <= lo[0] + tol) return false;
    }
  }
  return true;
}

}  // namespace

std::vector<PortalPiece> BuildPortals(const std::vector<Vec3>& positions) {
  std::vector<PortalPiece> portals;
  std::vector<double> area;
  size_t triangles = 0;
  for (size_t t = 0; t + 2 < positions.size(); t += 3) {
    const Vec3 v0 = positions[t], e1 = positions[t + 1] - v0, e2 = positions[t + 2] - v0;
    const float twice = Length(Cross(e1, e2));
    if (!(twice > 0.0f) || !std::isfinite(twice)) continue;  // crosses no ray: never sampled
    ++triangles;
    Vec3 corner, q1, q2;
    if (t + 5 < positions.size() && Parallelogram(&positions[t], &positions[t + 3], corner, q1, q2)) {
      ++triangles;
      t += 3;  // the pair is one piece
      // A rectangle (edges at right angles within 1e-5 of their lengths' product) is drawn by solid angle.
      const bool rectangle = std::fabs(Dot(q1, q2)) <= 1e-5f * Length(q1) * Length(q2);
      portals.push_back(PortalPiece{Record(corner, 0.0f), Record(q1, twice), Record(q2, rectangle ? 2.0f : 1.0f)});
      area.push_back(static_cast<double>(twice));
      continue;
    }
    portals.push_back(PortalPiece{Record(v0, 0.0f), Record(e1, 0.5f * twice), Record(e2, 0.0f)});
    area.push_back(0.5 * static_cast<double>(twice));
  }
  if (triangles > static_cast<size_t>(kMaxPortalTriangles))
    throw SceneError(std::to_string(triangles) + " portal triangles; at most " + std::to_string(kMaxPortalTriangles) +
                     " are supported (every environment sample loops over them): merge coplanar portals into fewer, "
                     "larger quads");
  // Cumulative fractions in double, the last exactly 1, so that no u in [0, 1) falls past the end.
  const double total = std::accumulate(area.begin(), area.end(), 0.0);
  double acc = 0.0;
  for (size_t i = 0; i < portals.size(); ++i) {
    acc += area[i];
    portals[i].v0.w = i + 1 == portals.size() ? 1.0f : static_cast<float>(acc / total);
  }
  return portals;
}

double PortalArea(const std::vector<PortalPiece>& portals) {
  double area = 0.0;
  for (const PortalPiece& p : portals) area += static_cast<double>(p.e1.w);
  return area;
}

PortalLattice PortalLatticeFor(Vec3 lo, Vec3 hi, size_t pieces) {
  Vec3 ext = hi - lo;
  if (!(ext.x >= 0.0f && ext.y >= 0.0f && ext.z >= 0.0f && ext.x + ext.y + ext.z < 1e30f)) ext = Vec3(0.0f);  // none
  const float longest = std::max(std::max(ext.x, ext.y), std::max(ext.z, 1e-30f));
  PortalLattice l{};
  for (int most : {64, 48, 32, 24, 16, 12, 8, 6, 4, 2, 1}) {
    auto vertices = [&](float e) {
      const int c = static_cast<int>(std::ceil(e / longest * static_cast<float>(most) - 1e-3f));
      return std::min(std::max(c, 1), most) + 1;
    };
    l.nx = vertices(ext.x), l.ny = vertices(ext.y), l.nz = vertices(ext.z);
    if (static_cast<double>(l.nx) * l.ny * l.nz * static_cast<double>(pieces) * kPortalFacings * sizeof(float) <=
        kPortalLatticeBytes)
      break;
  }
  l.lo = lo;
  const float sx = ext.x / static_cast<float>(l.nx - 1), sy = ext.y / static_cast<float>(l.ny - 1),
              sz = ext.z / static_cast<float>(l.nz - 1);
  l.step = Vec3(sx > 0.0f ? sx : 1.0f, sy > 0.0f ? sy : 1.0f, sz > 0.0f ? sz : 1.0f);
  l.inv = Vec3(1.0f / l.step.x, 1.0f / l.step.y, 1.0f / l.step.z);
  return l;
}

std::vector<float> BuildPortalLattice(const std::vector<PortalPiece>& portals, Vec3 boundsMin, Vec3 boundsMax,
                                      ThreadPool& pool) {
  if (portals.empty()) return {};
  const PortalLattice l = PortalLatticeFor(boundsMin, boundsMax, portals.size());
  const size_t perVertex = portals.size() * kPortalFacings, rows = static_cast<size_t>(l.ny) * l.nz;
  std::vector<float> cdf(rows * l.nx * perVertex);
  pool.ParallelFor(rows, 1, [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      const size_t y = r % l.ny, z = r / l.ny;
      for (int x = 0; x < l.nx; ++x)
        PortalVertexTables(portals, l.lo.x + static_cast<double>(x) * l.step.x,
                           l.lo.y + static_cast<double>(y) * l.step.y, l.lo.z + static_cast<double>(z) * l.step.z,
                           cdf.data() + (r * l.nx + x) * perVertex);
    }
  });
  return cdf;
}

std::vector<Float4> BuildPortalSides(const std::vector<PortalPiece>& portals) {
  const size_t n = portals.size();
  std::vector<std::array<double, 12>> corners(n);
  std::vector<int> count(n);
  double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  for (size_t i = 0; i < n; ++i) {
    count[i] = PieceCorners(portals[i], 0.0, 0.0, 0.0, reinterpret_cast<double(*)[3]>(corners[i].data()));
    for (int k = 0; k < count[i]; ++k)
      for (int c = 0; c < 3; ++c)
        lo[c] = std::min(lo[c], corners[i][3 * k + c]), hi[c] = std::max(hi[c], corners[i][3 * k + c]);
  }
  const double extent = n ? std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]}) : 0.0;
  const double far = n ? std::max({-lo[0], -lo[1], -lo[2], hi[0], hi[1], hi[2]}) : 0.0;
  // The corners are floats: far from the world's origin their rounding (6e-8 of the coordinate) sets the tolerance.
  const double tol = std::max(kPortalPlaneTolerance * extent, 1e-6 * far);
  auto at = [&](size_t i) { return reinterpret_cast<const double(*)[3]>(corners[i].data()); };
  const std::vector<Float4> never = {Float4{0.0f, 0.0f, 0.0f, 1.0f}};
  std::vector<Float4> sides;
  for (size_t i = 0; i < n; ++i) {
    const Vec3 e1 = PortalVec(portals[i].e1), e2 = PortalVec(portals[i].e2);
    const double u[3] = {e1.x, e1.y, e1.z}, v[3] = {e2.x, e2.y, e2.z};
    double normal[3];
    Cross3(u, v, normal);
    const double len = std::sqrt(Dot3(normal, normal));
    for (double& x : normal) x /= len;
    const double c = Dot3(normal, at(i)[0]);
    bool above = false, below = false;  // some other piece's corner off the plane on n's side, on the other
    for (size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      bool off = false;
      for (int k = 0; k < count[j]; ++k) {
        const double d = Dot3(normal, at(j)[k]) - c;
        above = above || d > tol, below = below || d < -tol, off = off || std::fabs(d) > tol;
      }
      if (!off && CoplanarOverlap(at(i), count[i], at(j), count[j], normal, tol)) return never;
    }
    if (above && below) return never;
    if (!above && !below) continue;  // every other piece in its plane: a ray crossing it crosses no other
    const double sign = above ? 1.0 : -1.0;
    const Float4 side{static_cast<float>(sign * normal[0]), static_cast<float>(sign * normal[1]),
                      static_cast<float>(sign * normal[2]), static_cast<float>(sign * c)};
    auto same = [&](const Float4& s) {
      return std::fabs(s.x - side.x) + std::fabs(s.y - side.y) + std::fabs(s.z - side.z) < 1e-5f &&
             std::fabs(s.w - side.w) <= 2.0 * tol;
    };
    const auto found = std::find_if(sides.begin(), sides.end(), same);
    if (found == sides.end())
      sides.push_back(side);
    else
      found->w = std::max(found->w, side.w);  // the stricter of two that count as one
  }
  if (n && sides.empty()) sides.push_back(Float4{0.0f, 0.0f, 0.0f, 0.0f});  // all in one plane: every origin
  return sides;
}

std::string DescribePortalSides(const std::vector<Float4>& sides) {
  if (sides.size() == 1 && sides[0].x == 0.0f && sides[0].y == 0.0f && sides[0].z == 0.0f)
    return sides[0].w > 0.0f ? "the loop everywhere (portals overlap, or lie on both sides of one)"
                             : "a ray crosses at most one portal everywhere (all in one plane)";
  return std::to_string(sides.size()) + " half-spaces bound where a ray crosses at most one portal";
}

}  // namespace tracer
