// @file delta_light_checks.h: the delta-light and two-sided area-light checks with known answers, run on the CPU
// (delta_lights_test.cpp) and on the GPU (delta_lights_gpu_test.cu) alike. Each scene is a pbrt-v4 file (loaded by the
// loader, so its parameters are pbrt's): a diffuse floor of albedo rho at y = 0 seen from straight above, lit by
// point, spot and distant lights, a constant environment and rectangular area lights. The floor's radiance is
// rho / pi times its irradiance, which this file computes from pbrt's parameters by its own formulas (not the
// renderer's): I cos / d^2 for a point light, times the spot's smoothstep falloff, E cos for a distant light, pi L
// for an unoccluded environment, and pi L F for a rectangle parallel to the floor, F its configuration factor (a
// differential area to a parallel rectangle, from the corner formula: Howell, "A Catalog of Radiation Heat Transfer
// Configuration Factors", C-11). The expected value of a pixel is the mean over a 16 x 16 grid of camera rays across
// it (the film's box filter), and so is the spread of that radiance within the pixel.
//
// Tolerances:
// - One light alone: the render's only randomness is where in the pixel each sample lands (the floor reflects into
//   an empty sky, and a delta light's sample is exact). So each pixel must be within 5 standard errors of its
//   expected value, the standard error from the radiance's spread within the pixel over the samples
//   (sqrt(var / spp)), plus 1e-3 relative for float rounding and the grid's quadrature error. 5 sigma over 1024
//   pixels leaves a false alarm below 1e-3 per image even for the non-Gaussian mean of a few samples.
// - Several lights, or area lights: light selection and MIS add noise. Region means (the whole image and its four
//   quadrants) are compared with 5 standard errors estimated from 8 independent seeds (Student's t with 7 degrees of
//   freedom: a false alarm below 0.5% per comparison). A light picked with the wrong probability biases each
//   region by its share of the light, tens of standard errors at these sample counts.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "pbrt_loader_test_util.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/tile_guide.h"

namespace tracer::test {

constexpr double kDeltaPi = 3.14159265358979323846;
constexpr double kFloorAlbedo = 0.5;

struct V3 {
  double x, y, z;
};
inline V3 Sub(V3 a, V3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline double Dot3(V3 a, V3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline double Len3(V3 a) { return std::sqrt(Dot3(a, a)); }

// The lights of a floor scene, in pbrt's terms (the camera's "Scale -1 1 1" keeps pbrt's world as the Scene's).
struct FloorLights {
  struct Point {
    V3 from;
    V3 i;  // I times scale
  };
  struct Spot {
    V3 from, to;
    V3 i;
    double cone, delta;  // degrees
  };
  struct Distant {
    V3 from, to;
    V3 l;  // L times scale
  };
  // A rectangle [x0, x1] x [z0, z1] at height y emitting L downward (one-sided, or two-sided with its normal up).
  struct Rect {
    double x0, x1, z0, z1, y;
    V3 l;
    bool facingDown, twoSided;
  };
  std::vector<Point> points;
  std::vector<Spot> spots;
  std::vector<Distant> distants;
  std::vector<Rect> rects;
  double environment = 0.0;  // a constant grey "infinite" light
  std::string extraShapes;   // pbrt text of more shapes (occluders)

  static std::string Num(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.9g", v);
    return b;
  }
  static std::string Vec(V3 v) { return "[" + Num(v.x) + " " + Num(v.y) + " " + Num(v.z) + "]"; }

  // The pbrt text of the lights.
  std::string Pbrt() const {
    std::string s;
    for (const Point& p : points)
      s += "LightSource \"point\" \"point3 from\" " + Vec(p.from) + " \"rgb I\" " + Vec(p.i) + "\n";
    for (const Spot& p : spots)
      s += "LightSource \"spot\" \"point3 from\" " + Vec(p.from) + " \"point3 to\" " + Vec(p.to) + " \"rgb I\" " +
           Vec(p.i) + " \"float coneangle\" " + Num(p.cone) + " \"float conedeltaangle\" " + Num(p.delta) + "\n";
    for (const Distant& d : distants)
      s += "LightSource \"distant\" \"point3 from\" " + Vec(d.from) + " \"point3 to\" " + Vec(d.to) + " \"rgb L\" " +
           Vec(d.l) + "\n";
    if (environment > 0.0)
      s += "LightSource \"infinite\" \"rgb L\" " + Vec({environment, environment, environment}) + "\n";
    for (const Rect& r : rects) {
      // Wound so that its normal points down (facingDown) or up.
      const std::string a = Num(r.x0) + " " + Num(r.y) + " " + Num(r.z0),
                        b = Num(r.x1) + " " + Num(r.y) + " " + Num(r.z0),
                        c = Num(r.x1) + " " + Num(r.y) + " " + Num(r.z1),
                        d = Num(r.x0) + " " + Num(r.y) + " " + Num(r.z1);
      s += "AttributeBegin\nAreaLightSource \"diffuse\" \"rgb L\" " + Vec(r.l) +
           (r.twoSided ? " \"bool twosided\" true" : "") + "\nMaterial \"diffuse\" \"rgb reflectance\" [0 0 0]\n" +
           "Shape \"trianglemesh\" \"point3 P\" [" + a + " " + b + " " + c + " " + d + "] \"integer indices\" " +
           (r.facingDown ? "[0 1 2 0 2 3]" : "[0 2 1 0 3 2]") + "\nAttributeEnd\n";
    }
    return s + extraShapes;
  }

  // pbrt-v4's SmoothStep, written out again here.
  static double Smooth(double x, double a, double b) {
    if (a == b) return x < a ? 0.0 : 1.0;
    const double t = std::min(1.0, std::max(0.0, (x - a) / (b - a)));
    return t * t * (3.0 - 2.0 * t);
  }
  // The configuration factor from a floor point to a parallel rectangle at height h whose corner lies straight above
  // it, with signed sides a and b (odd in each, so that four of them add up any rectangle).
  static double CornerFactor(double a, double b, double h) {
    const double A = a / h, B = b / h, sa = std::sqrt(1.0 + A * A), sb = std::sqrt(1.0 + B * B);
    return (A / sa * std::atan(B / sa) + B / sb * std::atan(A / sb)) / (2.0 * kDeltaPi);
  }
  static double RectFactor(const Rect& r, double x, double z) {
    const double h = r.y;
    return CornerFactor(r.x1 - x, r.z1 - z, h) - CornerFactor(r.x0 - x, r.z1 - z, h) -
           CornerFactor(r.x1 - x, r.z0 - z, h) + CornerFactor(r.x0 - x, r.z0 - z, h);
  }

  // The floor's irradiance at (x, 0, z), channel c (0, 1, 2).
  double Irradiance(double x, double z, int c) const {
    const V3 p{x, 0.0, z};
    auto ch = [c](V3 v) { return c == 0 ? v.x : (c == 1 ? v.y : v.z); };
    double e = 0.0;
    for (const Point& l : points) {
      const V3 d = Sub(l.from, p);
      const double r = Len3(d);
      e += ch(l.i) * (d.y / r) / (r * r);
    }
    for (const Spot& l : spots) {
      const V3 d = Sub(l.from, p), axis = Sub(l.to, l.from);
      const double r = Len3(d), cosAxis = -Dot3(d, axis) / (r * Len3(axis));
      const double rad = kDeltaPi / 180.0;
      const double falloff = Smooth(cosAxis, std::cos(l.cone * rad), std::cos((l.cone - l.delta) * rad));
      e += ch(l.i) * falloff * (d.y / r) / (r * r);
    }
    for (const Distant& l : distants) {
      const V3 w = Sub(l.from, l.to);
      e += ch(l.l) * std::max(0.0, w.y / Len3(w));
    }
    double blocked = 0.0;  // the environment's share that the rectangles hide
    for (const Rect& r : rects) {
      const double f = RectFactor(r, x, z);
      blocked += f;
      if (r.facingDown || r.twoSided) e += kDeltaPi * ch(r.l) * f;
    }
    return e + kDeltaPi * environment * (1.0 - blocked);
  }
};

// The floor scene's text: the camera 6 above the origin looking down (fov 50, so the floor |x|, |z| < 2.8 fills the
// image), the floor of albedo kFloorAlbedo (12 x 12: small enough that a distant light's power, pi r^2 E, does not
// outweigh the others by orders of magnitude), and the lights.
inline std::string FloorScene(const FloorLights& lights) {
  return "Scale -1 1 1\nLookAt 0 6 0  0 0 0  0 0 1\nCamera \"perspective\" \"float fov\" 50\nWorldBegin\n"
         "AttributeBegin\nMaterial \"diffuse\" \"rgb reflectance\" [0.5 0.5 0.5]\n"
         "Shape \"trianglemesh\" \"point3 P\" [-6 0 -6 6 0 -6 6 0 6 -6 0 6] \"integer indices\" "
         "[0 1 2 0 2 3]\nAttributeEnd\n" +
         lights.Pbrt();
}

// A pixel's expected value (channel by channel) and the spread of the radiance inside it.
struct ExpectedPixels {
  std::vector<double> mean, variance;  // w * h * 3
  std::vector<int> onFloor;            // 1 where every ray of the pixel's grid reaches the floor unblocked
};

// Radiance rho / pi E at each pixel's 16 x 16 grid of camera rays; rays that meet a rectangle first (seen from above:
// it shows `rectSeen`, L or 0) mark the pixel as not on the floor.
inline ExpectedPixels Expected(const FloorLights& lights, const Camera& cam, V3 rectSeen = {0, 0, 0}) {
  const int w = cam.width, h = cam.height, n = 16;
  ExpectedPixels e;
  e.mean.assign(size_t(w) * h * 3, 0.0);
  e.variance.assign(e.mean.size(), 0.0);
  e.onFloor.assign(size_t(w) * h, 1);
  for (int py = 0; py < h; ++py)
    for (int px = 0; px < w; ++px) {
      double sum[3] = {0, 0, 0}, sum2[3] = {0, 0, 0};
      for (int k = 0; k < n * n; ++k) {
        const Ray r = cam.Generate(px, py, (k % n + 0.5f) / n, (k / n + 0.5f) / n);
        const V3 o{r.o.x, r.o.y, r.o.z}, d{r.d.x, r.d.y, r.d.z};
        double v[3];
        bool rect = false;
        for (const FloorLights::Rect& q : lights.rects) {
          const double t = (q.y - o.y) / d.y, x = o.x + t * d.x, z = o.z + t * d.z;
          rect = rect || (t > 0.0 && x > q.x0 && x < q.x1 && z > q.z0 && z < q.z1);
        }
        const double t = -o.y / d.y, x = o.x + t * d.x, z = o.z + t * d.z;
        for (int c = 0; c < 3; ++c) {
          v[c] = rect ? (c == 0 ? rectSeen.x : (c == 1 ? rectSeen.y : rectSeen.z))
                      : kFloorAlbedo / kDeltaPi * lights.Irradiance(x, z, c);
          sum[c] += v[c];
          sum2[c] += v[c] * v[c];
        }
        if (rect) e.onFloor[size_t(py) * w + px] = 0;
      }
      for (int c = 0; c < 3; ++c) {
        const size_t i = (size_t(py) * w + px) * 3 + c;
        e.mean[i] = sum[c] / (n * n);
        e.variance[i] = std::max(0.0, sum2[c] / (n * n) - e.mean[i] * e.mean[i]);
      }
    }
  return e;
}

// A renderer: RenderCpu's or RenderCuda's image.
using DeltaRenderFn = std::function<std::vector<float>(const SceneData&, const RenderOptions&)>;

// The scene's render data at w x h from its pbrt text (loaded from a temporary folder).
inline SceneData FloorData(const FloorLights& lights, int w, int h) {
  PbrtDir dir;
  const Scene s = dir.Load(FloorScene(lights));
  return BuildWithSceneCamera(s, w, h, {}, s.environment.color);  // the constant sky, as the tracer applies it
}

// One light alone: every pixel within 5 standard errors of the pixel-position noise (see the top of this file).
// Returns the number of pixels checked that the light reaches.
inline int ExpectSingleLightExact(const DeltaRenderFn& render, const FloorLights& lights, const char* what,
                                  int spp = 64) {
  const int w = 32, h = 32;
  const SceneData d = FloorData(lights, w, h);
  const ExpectedPixels e = Expected(lights, d.camera);
  RenderOptions o = QuietRender(w, h, spp, 4);
  o.seed = 7;
  const std::vector<float> got = render(d, o);
  int lit = 0, bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double tol = 5.0 * std::sqrt(e.variance[i] / spp) + 1e-3 * e.mean[i] + 1e-6;
    if (std::fabs(got[i] - e.mean[i]) > tol && ++bad <= 5)
      ADD_FAILURE() << what << ": pixel " << i / 3 << " channel " << i % 3 << ": " << got[i] << ", expected "
                    << e.mean[i] << " +- " << tol;
    lit += i % 3 == 0 && e.mean[i] > 0.0;
  }
  EXPECT_EQ(bad, 0) << what;
  return lit;
}

// Region means (channel 1) over seeds: the whole image and its four quadrants, restricted to `mask` where given.
struct RegionSeries {
  std::vector<double> mean, standardError;
};
inline std::vector<double> RegionMeans(const std::vector<double>& img, int w, int h, const std::vector<int>* mask) {
  std::vector<double> s(5, 0.0), n(5, 0.0);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const size_t p = size_t(y) * w + x;
      if (mask && !(*mask)[p]) continue;
      const int q = 1 + (y >= h / 2) * 2 + (x >= w / 2);
      for (int r : {0, q}) s[r] += img[3 * p + 1], n[r] += 1.0;
    }
  for (int r = 0; r < 5; ++r) s[r] = n[r] > 0.0 ? s[r] / n[r] : 0.0;
  return s;
}
inline RegionSeries RenderRegions(const DeltaRenderFn& render, const SceneData& d, RenderOptions o, int seeds,
                                  const std::vector<int>* mask) {
  std::vector<std::vector<double>> runs;
  for (int k = 0; k < seeds; ++k) {
    o.seed = 300u + 17u * k;
    const std::vector<float> rgb = render(d, o);
    runs.push_back(RegionMeans(std::vector<double>(rgb.begin(), rgb.end()), o.width, o.height, mask));
  }
  RegionSeries s;
  for (size_t r = 0; r < runs[0].size(); ++r) {
    double m = 0.0, v = 0.0;
    for (const auto& run : runs) m += run[r] / seeds;
    for (const auto& run : runs) v += (run[r] - m) * (run[r] - m) / (seeds - 1);
    s.mean.push_back(m);
    s.standardError.push_back(std::sqrt(v / seeds));
  }
  return s;
}

// Every region's mean within 5 standard errors (and 0.2% for the expected value's quadrature) of the expected one.
inline void ExpectRegionsMatch(const RegionSeries& got, const std::vector<double>& want, const std::string& what) {
  for (size_t r = 0; r < want.size(); ++r) {
    const double tol = 5.0 * got.standardError[r] + 2e-3 * want[r];
    EXPECT_NEAR(got.mean[r], want[r], tol)
        << what << ", region " << r << " (0: all, 1-4: quadrants); standard error " << got.standardError[r];
  }
}

// The lights of the selection scene: a point, a tilted spot, a distant light, a dim grey sky and an area light out
// of the camera's view (it hides a little sky from the floor); all reach every pixel, in proportions that vary
// across the image.
inline FloorLights SelectionLights() {
  FloorLights l;
  l.points.push_back({{0.8, 2.0, 0.5}, {3.0, 4.0, 5.0}});
  l.spots.push_back({{-0.5, 2.5, -0.4}, {-0.2, 0.0, -0.4}, {20.0, 15.0, 10.0}, 40.0, 15.0});
  l.distants.push_back({{1.0, 2.0, 0.5}, {0.0, 0.0, 0.0}, {0.6, 0.5, 0.4}});
  l.environment = 0.05;
  l.rects.push_back({-4.5, -3.5, -0.5, 0.5, 3.0, {4.0, 4.0, 4.0}, true, false});
  return l;
}

// Next-event estimation chooses among the point, spot and distant lights, the area light and the sky by power (or by
// the tile guide, `tiles`), one light per vertex: the image is still the sum of what each light gives alone.
inline void ExpectSelectionUnbiased(const DeltaRenderFn& render, bool tiles) {
  const FloorLights lights = SelectionLights();
  const int w = 32, h = 32;
  SceneData d = FloorData(lights, w, h);
  RenderOptions o = QuietRender(w, h, 32, 4);
  if (tiles) {
    BuildLightClusters(d, 8);
    o.lightSampling = LightSampling::kTiles;
    o.tileSize = 8;
  }
  const ExpectedPixels e = Expected(lights, d.camera);
  ExpectRegionsMatch(RenderRegions(render, d, o, 8, nullptr), RegionMeans(e.mean, w, h, nullptr),
                     tiles ? "tile-guided selection" : "selection by power");
}

// Emission reached by a BSDF sample is MIS-weighted with the probability that next-event estimation would have
// sampled that emitter, which delta lights lower to (1 - DeltaShare) of the rest: a 1 x 1 rectangle light just above
// the floor, next to a point light of twenty times its power (below the rectangle, so that it casts no shadow of
// it). Weighting with the emitter's share before the point light's (twenty times too much) would take two thirds of
// the BSDF-sampled half of the rectangle's light away.
inline void ExpectEmitterMisWithDeltaLights(const DeltaRenderFn& render) {
  FloorLights lights;
  lights.points.push_back({{2.0, 0.5, 0.3}, {5.0, 5.0, 5.0}});
  lights.rects.push_back({-0.5, 0.5, -0.5, 0.5, 1.0, {1.0, 1.0, 1.0}, true, false});
  const int w = 32, h = 32;
  const SceneData d = FloorData(lights, w, h);
  const ExpectedPixels e = Expected(lights, d.camera);
  ExpectRegionsMatch(RenderRegions(render, d, QuietRender(w, h, 32, 4), 8, &e.onFloor),
                     RegionMeans(e.mean, w, h, &e.onFloor), "an area light beside a point light");
}

// A two-sided area light emits on both sides: a rectangle at height 1 above the floor, seen from above, with its
// normal down or up, one- or two-sided. The floor under it gets pi L F from a downward-facing one-sided or any
// two-sided one, nothing from an upward-facing one-sided one; the camera sees L on its top face when that is its
// front or it is two-sided, else black.
inline void ExpectTwoSidedEmission(const DeltaRenderFn& render) {
  const int w = 32, h = 32;
  for (bool facingDown : {true, false})
    for (bool twoSided : {false, true}) {
      FloorLights lights;
      lights.rects.push_back({-0.4, 0.6, -0.5, 0.3, 1.0, {2.0, 3.0, 4.0}, facingDown, twoSided});
      const SceneData d = FloorData(lights, w, h);
      const bool topShows = !facingDown || twoSided;
      const V3 top = topShows ? lights.rects[0].l : V3{0, 0, 0};
      const ExpectedPixels e = Expected(lights, d.camera, top);
      const std::string what = std::string(facingDown ? "facing down" : "facing up") + (twoSided ? ", two-sided" : "");
      const RenderOptions o = QuietRender(w, h, 32, 4);
      // The floor around the light.
      ExpectRegionsMatch(RenderRegions(render, d, o, 8, &e.onFloor), RegionMeans(e.mean, w, h, &e.onFloor),
                         what + ", floor");
      // The light's top face: exactly L or 0 (camera rays see emission at full weight; nothing lights the black top).
      const std::vector<float> img = render(d, o);
      int seen = 0;
      for (size_t p = 0; p < e.onFloor.size(); ++p) {
        if (e.onFloor[p]) continue;
        // Pixels whose whole grid meets the rectangle: its expected value is exactly `top`.
        const double want = e.mean[3 * p + 1];
        if (std::fabs(want - top.y) > 1e-9) continue;
        ++seen;
        EXPECT_NEAR(img[3 * p + 1], top.y, 1e-4 + 1e-5 * top.y) << what << ", pixel " << p;
      }
      EXPECT_GT(seen, 20) << what;
    }
}

}  // namespace tracer::test
