// @file delta_lights_test.cpp: point, spot and distant lights and two-sided area lights on the CPU: rendered radiance
// of a diffuse floor against the analytic value (delta_light_checks.h says how and with what tolerance), selection by
// power and by the tile guide, shadow rays, the selection probabilities and the tile guide's delta cluster, and the
// power of two-sided emitters. delta_lights_gpu_test.cu runs the same checks on the GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "delta_light_checks.h"
#include "tracer/core/light_tiles.h"
#include "tracer/host/backends.h"
#include "tracer/host/env_map.h"

namespace tracer {
namespace {

using test::FloorLights;
using test::V3;

std::vector<float> Cpu(const SceneData& d, const RenderOptions& o) { return RenderCpu(d, o).rgb; }

FloorLights OnePoint() {
  FloorLights l;
  l.points.push_back({{0.7, 2.0, -0.4}, {2.0, 3.0, 4.0}});
  return l;
}
FloorLights OneSpot() {
  FloorLights l;  // tilted: its axis meets the floor at (0.8, 0, 0.2); inner cone 20 degrees, outer 30
  l.spots.push_back({{0.3, 2.0, 0.2}, {0.8, 0.0, 0.2}, {6.0, 5.0, 4.0}, 30.0, 10.0});
  return l;
}
FloorLights OneDistant() {
  FloorLights l;
  l.distants.push_back({{1.0, 2.0, 0.5}, {0.0, 0.0, 0.0}, {1.0, 2.0, 3.0}});
  return l;
}

TEST(DeltaLights, PointLightOnAPlane) {
  EXPECT_EQ(test::ExpectSingleLightExact(Cpu, OnePoint(), "point light"), 32 * 32);
}

TEST(DeltaLights, DistantLightOnAPlane) {
  EXPECT_EQ(test::ExpectSingleLightExact(Cpu, OneDistant(), "distant light"), 32 * 32);
}

// The spot's full cone, its falloff and the dark outside, each over many pixels: a wrong cone angle, a falloff
// that is linear or reversed, or light outside the cone fails pixels of one kind.
TEST(DeltaLights, SpotLightInsideInTheFalloffAndOutside) {
  const FloorLights l = OneSpot();
  const SceneData d = test::FloorData(l, 32, 32);
  const FloorLights::Spot& s = l.spots[0];
  int inside = 0, falloff = 0, outside = 0;
  for (int py = 0; py < 32; ++py)
    for (int px = 0; px < 32; ++px) {
      const Ray r = d.camera.Generate(px, py, 0.5f, 0.5f);
      const double t = -r.o.y / r.d.y;
      const V3 p{r.o.x + t * r.d.x, 0.0, r.o.z + t * r.d.z}, toP = test::Sub(p, s.from), axis = test::Sub(s.to, s.from);
      const double cosAxis = test::Dot3(toP, axis) / (test::Len3(toP) * test::Len3(axis)), deg = test::kDeltaPi / 180;
      const double f = FloorLights::Smooth(cosAxis, std::cos(s.cone * deg), std::cos((s.cone - s.delta) * deg));
      (f >= 1.0 ? inside : (f <= 0.0 ? outside : falloff))++;
    }
  EXPECT_GT(inside, 30);
  EXPECT_GT(falloff, 30);
  EXPECT_GT(outside, 30);
  const int lit = test::ExpectSingleLightExact(Cpu, l, "spot light");
  EXPECT_LT(lit, 32 * 32) << "outside the cone the floor is black";
}

// A distant light's shadow ray goes to infinity: a roof at y = 10 over the part of the floor in view shades it from
// the sun (the ray meets it 11.5 away, beyond the scene's radius, 10.8), but not from a point light under it (black,
// so that it reflects nothing back).
TEST(DeltaLights, ShadowRaysOfDistantLightsReachInfinity) {
  const std::string roof =
      "AttributeBegin\nMaterial \"diffuse\" \"rgb reflectance\" [0 0 0]\n"
      "Shape \"trianglemesh\" \"point3 P\" [1 10 -1 9 10 -1 9 10 6 1 10 6] "
      "\"integer indices\" [0 1 2 0 2 3]\nAttributeEnd\n";
  FloorLights sun = OneDistant(), point = OnePoint();
  sun.extraShapes = point.extraShapes = roof;
  const RenderOptions o = test::QuietRender(32, 32, 16, 1);  // direct light only: the roof reflects the floor's light
  const std::vector<float> shaded = Cpu(test::FloorData(sun, 32, 32), o);
  EXPECT_EQ(*std::max_element(shaded.begin(), shaded.end()), 0.0f);
  sun.extraShapes.clear();
  const std::vector<float> open = Cpu(test::FloorData(sun, 32, 32), o);
  EXPECT_GT(*std::min_element(open.begin(), open.end()), 0.1f) << "without the roof the sun lights every pixel";
  EXPECT_EQ(test::ExpectSingleLightExact(Cpu, point, "point light under the roof"), 32 * 32);
}

// By power, next-event estimation picks the environment with probability env / (env + area + delta) and a delta
// light with its share of the rest, delta / (delta + area), among them in proportion to each one's power: 4 pi I for
// a point light, 2 pi I (1 - (cos inner + cos outer) / 2) for a spot, pi r^2 E for a distant light (r: the bounding
// sphere's radius), pi L A for a one-sided rectangle, pi^2 r^2 L for a constant sky. Luminances of the RGB values.
TEST(DeltaLights, SelectionProbabilitiesFollowPower) {
  const FloorLights l = test::SelectionLights();
  const SceneData d = test::FloorData(l, 8, 8);
  auto lum = [](V3 v) { return 0.2126 * v.x + 0.7152 * v.y + 0.0722 * v.z; };
  const double pi = test::kDeltaPi, deg = pi / 180.0;
  const double r = 0.5 * std::sqrt(12.0 * 12.0 + 3.0 * 3.0 + 12.0 * 12.0);  // floor, and the lamp at y = 3
  const double point = 4.0 * pi * lum(l.points[0].i);
  const FloorLights::Spot& s = l.spots[0];
  const double spot = 2.0 * pi * lum(s.i) * (1.0 - 0.5 * (std::cos(s.cone * deg) + std::cos((s.cone - s.delta) * deg)));
  const double sun = pi * r * r * lum(l.distants[0].l);
  const double area = pi * lum(l.rects[0].l) * 1.0, env = pi * pi * r * r * l.environment;
  const double delta = point + spot + sun;
  EXPECT_NEAR(d.env.params.pick, env / (env + area + delta), 1e-6);
  EXPECT_NEAR(d.deltaShare, delta / (delta + area), 1e-6);
  ASSERT_EQ(d.deltaLights.size(), 3u);
  ASSERT_EQ(d.deltaAlias.size(), 3u);
  // The loader keeps pbrt's order: the point, the spot, the distant light.
  EXPECT_NEAR(d.deltaAlias[0].pmf, point / delta, 1e-6);
  EXPECT_NEAR(d.deltaAlias[1].pmf, spot / delta, 1e-6);
  EXPECT_NEAR(d.deltaAlias[2].pmf, sun / delta, 1e-6);
  const SceneView v = d.View();
  EXPECT_EQ(v.numDeltaLights, 3);
  EXPECT_EQ(v.deltaShare, d.deltaShare);
  EXPECT_EQ(DeltaShare(v, -1), d.deltaShare);
}

TEST(DeltaLights, SelectionByPowerIsUnbiased) { test::ExpectSelectionUnbiased(Cpu, false); }
TEST(DeltaLights, TileGuidedSelectionIsUnbiased) { test::ExpectSelectionUnbiased(Cpu, true); }

// Under the tile guide the delta lights are one cluster, after the emitters' and before the environment's, with the
// power share that selection by power gives them; its statistics estimate the delta lights' irradiance (E cos / pmf
// over picks by power sums their irradiances), and round 1 of every refresh tests it in every tile.
TEST(DeltaLights, TileGuideHasADeltaCluster) {
  SceneData d = test::FloorData(test::SelectionLights(), 16, 16);
  BuildLightClusters(d, 8);
  RenderOptions opt = test::QuietRender(16, 16, 1, 4);
  opt.tileSize = 8;
  ASSERT_TRUE(WantsTileGuide(d));
  const GuideClusters g = MakeGuideClusters(d, opt);
  ASSERT_EQ(g.envCluster, 1);
  ASSERT_EQ(g.deltaCluster, 1);
  ASSERT_EQ(g.Count(), d.clusters.Count() + 2);
  const float env = d.env.params.pick;
  EXPECT_FLOAT_EQ(g.powerPmf[size_t(g.Count()) - 1], env);
  EXPECT_NEAR(g.powerPmf[size_t(g.Count()) - 2], (1.0f - env) * d.deltaShare, 1e-7f);
  EXPECT_NEAR(std::accumulate(g.powerPmf.begin(), g.powerPmf.end(), 0.0), 1.0, 1e-5);
  for (int t = 0; t < 100; ++t)
    for (int refresh = 0; refresh < 3; ++refresh)
      EXPECT_EQ(TileRoundCluster(t, 1, refresh, g.Count(), 1, 1), g.Count() - 2);
  TileGuideHost guide(d, opt);
  guide.Refresh(0);
  const SceneView v = guide.View();
  ASSERT_EQ(v.tiles.deltaCluster, 1);
  const int c = TileEmitterClusters(v.tiles);
  ASSERT_EQ(c, v.tiles.numClusters - 2);
  // A floor point at the origin: the mean statistic over picks is the sum of the three lights' irradiance.
  const FloorLights l = test::SelectionLights();
  FloorLights deltas = l;
  deltas.rects.clear();
  deltas.environment = 0.0;
  const double want =
      0.2126 * deltas.Irradiance(0, 0, 0) + 0.7152 * deltas.Irradiance(0, 0, 1) + 0.0722 * deltas.Irradiance(0, 0, 2);
  // Its expectation over picks: each light's value (E cos / pmf) weighted by its pmf. Light i is picked by an alias
  // table's bin i where the bin's fraction is below prob_i.
  double sum = 0.0;
  const int n = v.numDeltaLights;
  for (int i = 0; i < n; ++i) {
    const float u = (float(i) + 0.5f * v.deltaAlias[i].prob) / float(n);
    float pmf;
    ASSERT_EQ(PickDeltaLight(v, u, pmf), i);
    sum += pmf * TileStatSample<false>(v, Vec3(0.0f), Vec3(0, 1, 0), c, u, 0.5f, 0.5f);
  }
  EXPECT_NEAR(sum, want, 1e-4 * want);
  for (int t = 0; t < guide.NumTiles(); ++t) {
    const float share = DeltaShare(v, t);
    EXPECT_GT(share, 0.0f) << "tile " << t;
    EXPECT_LT(share, 1.0f) << "tile " << t;
  }
}

// A scene lit by delta lights alone still gets a tile guide (the delta cluster), and without emitters every
// non-environment pick is a delta light.
TEST(DeltaLights, GuideWithoutEmitters) {
  SceneData d = test::FloorData(OnePoint(), 16, 16);
  BuildLightClusters(d, 8);
  EXPECT_EQ(d.clusters.Count(), 0);
  ASSERT_TRUE(WantsTileGuide(d));
  EXPECT_EQ(d.deltaShare, 1.0f);
  RenderOptions opt = test::QuietRender(16, 16, 1, 4);
  opt.tileSize = 8;
  TileGuideHost guide(d, opt);
  guide.Refresh(0);
  const SceneView v = guide.View();
  EXPECT_EQ(v.tiles.numClusters, 1);
  for (int t = 0; t < guide.NumTiles(); ++t) EXPECT_EQ(DeltaShare(v, t), 1.0f);
  opt.lightSampling = LightSampling::kTiles;
  EXPECT_EQ(test::ExpectSingleLightExact(
                [&](const SceneData& data, const RenderOptions& o) {
                  RenderOptions tiled = o;
                  tiled.lightSampling = LightSampling::kTiles;
                  tiled.tileSize = 8;
                  return Cpu(data, tiled);
                },
                OnePoint(), "point light, tile-guided"),
            32 * 32);
}

TEST(DeltaLights, EmittersMisWeightsCountTheDeltaLightsShare) { test::ExpectEmitterMisWithDeltaLights(Cpu); }

TEST(TwoSidedAreaLights, EmitOnBothSides) { test::ExpectTwoSidedEmission(Cpu); }

// A two-sided emitter's power counts twice in selection; one-sided ones (every OBJ emitter) leave the per-emitter
// flags empty, so the per-ray code reads nothing for them.
TEST(TwoSidedAreaLights, PowerCountsTwice) {
  for (bool twoSided : {false, true}) {
    FloorLights l;
    l.environment = 0.1;
    l.rects.push_back({-0.5, 0.5, -0.5, 1.5, 1.0, {2.0, 2.0, 2.0}, true, twoSided});
    const SceneData d = test::FloorData(l, 8, 8);
    const double area = test::kDeltaPi * 2.0 * 2.0 * (twoSided ? 2.0 : 1.0);  // pi L A per side
    EXPECT_NEAR(std::accumulate(d.emitterPower.begin(), d.emitterPower.end(), 0.0), area, 1e-4 * area);
    const double r = 0.5 * std::sqrt(12.0 * 12.0 + 1.0 + 12.0 * 12.0);
    const double env = test::kDeltaPi * test::kDeltaPi * r * r * 0.1;
    EXPECT_NEAR(d.env.params.pick, env / (env + area), 1e-6);
    ASSERT_EQ(d.emitterTwoSided.size(), twoSided ? d.emitterTri.size() : 0u);
    for (uint8_t f : d.emitterTwoSided) EXPECT_EQ(f, 1);
  }
  const SceneData obj = test::BuildWithSceneCamera(LoadScene(test::ProjectScenesDir() + "/cornell.obj"), 8, 8);
  EXPECT_GT(obj.emitterTri.size(), 0u);
  EXPECT_TRUE(obj.emitterTwoSided.empty());
  EXPECT_EQ(obj.View().emitterTwoSided, nullptr);
}

}  // namespace
}  // namespace tracer
