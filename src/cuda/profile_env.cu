// @file profile_env.cu: --profile's quality measurements (MeasureQuality) and the environment guide's and portals'
// rows.
#include <cstdio>
#include <string>
#include <vector>

#include "tracer/cuda/profile_env.h"
#include "tracer/host/backends.h"
#include "tracer/host/timing.h"

namespace tracer {

QualityPair MeasureQuality(const SceneData& data, RenderOptions ref, RenderOptions naive, RenderOptions opt,
                           int refFactor, int repeats) {
  QualityPair q;
  for (RenderOptions* o : {&ref, &naive, &opt}) {
    o->quiet = true;
    o->collectStats = false;
  }
  ref.spp = opt.spp * refFactor;
  ref.seed = 987654u;
  const std::vector<float> reference = RenderCuda(data, ref).rgb;
  auto rmse = [&](const std::vector<float>& img) {
    double e = 0.0;
    for (size_t i = 0; i < img.size(); ++i) e += (img[i] - reference[i]) * (static_cast<double>(img[i]) - reference[i]);
    return std::sqrt(e / img.size());
  };
  auto run = [&](RenderOptions v, double& err, double& ms) {
    const uint32_t seed = v.seed;
    RenderCuda(data, v);  // warm-up
    std::vector<double> times, errs;
    for (int r = 0; r < repeats; ++r) {
      v.seed = seed + 17u * r;  // independent images; the error is averaged over them
      RenderResult res = RenderCuda(data, v);
      times.push_back(res.stats.seconds * 1e3);
      errs.push_back(rmse(res.rgb));
    }
    ms = Median(times);
    double sq = 0;
    for (double x : errs) sq += x * x;
    err = std::sqrt(sq / errs.size());
  };
  run(naive, q.rmseNaive, q.msNaive);
  run(opt, q.rmseOpt, q.msOpt);
  return q;
}

namespace {

// --env-sampling importance (the naive twin) against `other` on the profiled scene, the reference at 16 times the spp
// by importance, or (refByOther) by `other`: the reference's own noise adds to both RMSEs in quadrature, and weighs
// more on the smaller one (on the sky-lit hall a reference by importance read portals at 0.47x importance's RMSE at
// equal spp, where 262,144 spp read 0.42x; one by portals 0.43x, and 0.49x at equal time).
QualityPair MeasureAgainstImportance(const SceneData& data, const RenderOptions& o, EnvSampling other, int repeats,
                                     bool refByOther = false) {
  RenderOptions importance = o, opt = o;
  importance.envSampling = EnvSampling::kImportance;
  opt.envSampling = other;
  return MeasureQuality(data, refByOther ? opt : importance, importance, opt, 16, repeats);
}

}  // namespace

EnvGuideProfileRow ProfileEnvGuide(const SceneData& data, const RenderOptions& o, int repeats) {
  std::fprintf(stderr, "  measuring the environment guide (importance vs guided, reference at 16x)\n");
  const QualityPair q = MeasureAgainstImportance(data, o, EnvSampling::kGuided, repeats);
  char ev[256];
  std::snprintf(ev, sizeof ev,
                "RMSE at equal spp: importance %.4g, guided %.4g (%.2fx); at equal time guided/importance %.2fx "
                "(guide tiles %d px, mix %.2f; its learning not in the time)",
                q.rmseNaive, q.rmseOpt, q.rmseOpt / q.rmseNaive, q.EqualTimeRatio(), o.envGuideTile, o.envGuideMix);
  return EnvGuideProfileRow{q.msNaive, q.msOpt, ev};
}

EnvPortalsProfileRow ProfileEnvPortals(const SceneData& data, const RenderOptions& o, int repeats) {
  std::fprintf(stderr, "  measuring environment portals (importance vs portals, reference by portals at 16x)\n");
  const QualityPair q = MeasureAgainstImportance(data, o, EnvSampling::kPortals, repeats, true);
  const float mix = o.envPortalMix < 0.0f ? data.env.params.portalMix : o.envPortalMix;
  char ev[256];
  std::snprintf(ev, sizeof ev,
                "RMSE at equal spp: importance %.4g, portals %.4g (%.2fx); at equal time portals/importance %.2fx "
                "(%zu portal pieces, mix %.2f%s)",
                q.rmseNaive, q.rmseOpt, q.rmseOpt / q.rmseNaive, q.EqualTimeRatio(), data.portals.size(), mix,
                o.envPortalByArea ? ", picked by area" : "");
  std::fprintf(stderr, "  measuring the portal pdf (the loop over the pieces vs the drawn piece's term)\n");
  RenderOptions drawn = o, loop = o;
  drawn.envSampling = loop.envSampling = EnvSampling::kPortals;
  drawn.envPortalLoop = false;
  loop.envPortalLoop = true;
  const QualityPair p = MeasureQuality(data, drawn, loop, drawn, 16, repeats);
  const std::string where = DescribePortalSides(data.portalSides);
  char pev[256];
  std::snprintf(pev, sizeof pev, "RMSE at equal spp: loop %.4g, drawn piece %.4g (the same estimator); %s", p.rmseNaive,
                p.rmseOpt, where.c_str());
  std::fprintf(stderr, "  measuring the portal points (uniform in area vs in solid angle)\n");
  RenderOptions byArea = drawn, solid = drawn;
  byArea.envPortalAreaPoints = true;
  solid.envPortalAreaPoints = false;
  const QualityPair pts = MeasureQuality(data, solid, byArea, solid, 16, repeats);
  char qev[256];
  std::snprintf(qev, sizeof qev,
                "RMSE at equal spp: by area %.4g, by solid angle %.4g (%.2fx); at equal time solid angle/area %.2fx",
                pts.rmseNaive, pts.rmseOpt, pts.rmseOpt / pts.rmseNaive, pts.EqualTimeRatio());
  return EnvPortalsProfileRow{q.msNaive, q.msOpt, ev, p.msNaive, p.msOpt, pev, pts.msNaive, pts.msOpt, qev};
}

}  // namespace tracer
