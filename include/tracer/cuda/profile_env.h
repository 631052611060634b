// @file profile_env.h: --profile's quality measurements of a naive twin against its optimisation (RMSE against a
// reference at equal spp, and render times), and the environment guide's and portals' rows built on them.
#pragma once
#include <cmath>
#include <string>

#include "tracer/host/render_options.h"
#include "tracer/host/scene_data.h"

namespace tracer {

// The quality of a naive twin (e.g. light selection by power, or no next-event estimation of the environment) and
// of its optimisation at equal spp: RMSE against a reference rendered as `ref` at refFactor times the spp, with their
// render times, so that equal-time quality follows from variance x time (efficiency = 1 / (RMSE^2 t)).
struct QualityPair {
  double rmseNaive = 0, rmseOpt = 0, msNaive = 0, msOpt = 0;
  double EqualTimeRatio() const {  // RMSE of the optimised over RMSE of the naive at equal render time
    return std::sqrt((rmseOpt * rmseOpt * msOpt) / (rmseNaive * rmseNaive * msNaive));
  }
};
QualityPair MeasureQuality(const SceneData& data, RenderOptions ref, RenderOptions naive, RenderOptions opt,
                           int refFactor, int repeats);

// The environment guide's row: --env-sampling guided against importance (its naive twin) on the profiled scene,
// reference by importance at 16 times the spp; evidence says the RMSEs and the equal-time ratio.
struct EnvGuideProfileRow {
  double importanceMs = 0, guidedMs = 0;
  std::string evidence;
};
EnvGuideProfileRow ProfileEnvGuide(const SceneData& data, const RenderOptions& o, int repeats);

// The portals' row: --env-sampling portals against importance (its naive twin) on the profiled scene (which has
// portals and an environment light), reference by portals at 16 times the spp (the less noisy: a bias of the portals
// would not show here; the tests compare their means with importance's); evidence says the RMSEs, the
// equal-time ratio, the portal triangles and the mix in effect. With it, the portal pdf's row: the loop over the
// pieces (--naive-portal-pdf) against the drawn piece's term alone, both with portals, reference by portals at 16 times
// the spp; pdfEvidence says both RMSEs (the same estimator) and the half-spaces. And the portal points' row: points
// uniform in area (--naive-portal-point) against uniform in solid angle, both with portals, the same reference;
// pointEvidence says the RMSEs and the equal-time ratio.
struct EnvPortalsProfileRow {
  double importanceMs = 0, portalsMs = 0;
  std::string evidence;
  double loopMs = 0, drawnMs = 0;
  std::string pdfEvidence;
  double areaPointsMs = 0, solidPointsMs = 0;
  std::string pointEvidence;
};
EnvPortalsProfileRow ProfileEnvPortals(const SceneData& data, const RenderOptions& o, int repeats);

}  // namespace tracer
