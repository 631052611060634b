// @file env_guide.h: guided next-event estimation of the environment (--env-sampling guided): per screen tile, a
// coarse directional histogram of the sky radiance that the tile's primary hits actually see (learned before the
// render from unoccluded shadow rays), mixed with the environment's own sampling by one-sample MIS.
//
// Indoors, light from the sky enters only through openings: the environment's own distribution (its luminance, or
// the uniform sphere for a constant sky) sends most shadow rays into walls. The guide learns, for each tile of
// pixels, from which directions the sky reaches the tile's surfaces, and sends a fraction `mix` of the shadow rays
// there. The estimator stays unbiased because every direction is evaluated with the mixture's pdf
//   p(w) = (1 - mix) p_env(w) + mix p_guide(w | tile),
// (one-sample MIS with the balance heuristic between the two techniques, Veach and Guibas 1995), which is positive
// wherever the environment's own pdf is; the BSDF-sampled rays that leave the scene (MissItem) take the same p(w)
// for their MIS weight.
//
// The histogram's bins are equal-area on the sphere: kEnvGuideRows bands of equal height in y (Archimedes: equal
// height, equal area) times kEnvGuideCols sectors in azimuth atan2(z, x), each 4 pi / kEnvGuideBins steradians; a
// direction is drawn uniformly inside its bin (uniform in y and in azimuth), so p_guide = pmf(bin) kEnvGuideBins /
// (4 pi). World directions, not the map's: the guide knows nothing of --env-rotate.
#pragma once
#include "tracer/core/environment.h"

namespace tracer {

constexpr int kEnvGuideRows = 16, kEnvGuideCols = 32, kEnvGuideBins = kEnvGuideRows * kEnvGuideCols;

// The guide of SceneView::envGuide; cdf null: no guide (the environment's own sampling alone).
struct EnvGuideView {
  const float* cdf;  // per guide tile: kEnvGuideBins + 1 entries from 0 to 1 (SampleCdf's layout)
  int32_t width;     // of the image, in pixels
  int32_t tileSize;  // in pixels
  int32_t tilesX;
  int32_t numTiles;
  float mix;  // probability that a sample comes from the guide rather than from the environment's own distribution
  // Path vertices of depth below this use the guide (--env-guide-depths); deeper ones sample the environment its own
  // way. The guide learned what the first hits see; later vertices lie elsewhere.
  int32_t depths;
};

// The bin of a unit world direction.
TRACER_HD int EnvGuideBin(Vec3 d) {
  int row = static_cast<int>((d.y + 1.0f) * (0.5f * kEnvGuideRows));
  int col = static_cast<int>((atan2f(d.z, d.x) * (0.5f * kInvPi) + 0.5f) * kEnvGuideCols);
  row = row < 0 ? 0 : (row >= kEnvGuideRows ? kEnvGuideRows - 1 : row);
  col = col < 0 ? 0 : (col >= kEnvGuideCols ? kEnvGuideCols - 1 : col);
  return row * kEnvGuideCols + col;
}

// The direction at fractions (fy, fphi) in [0, 1)^2 across bin `bin` (uniform in y and azimuth: uniform in area).
TRACER_HD Vec3 EnvGuideDirection(int bin, float fy, float fphi) {
  const int row = bin / kEnvGuideCols, col = bin % kEnvGuideCols;
  const float y = -1.0f + 2.0f * (static_cast<float>(row) + fy) / kEnvGuideRows;
  const float phi = kPi * (2.0f * (static_cast<float>(col) + fphi) / kEnvGuideCols - 1.0f);
  const float r = SafeSqrt(1.0f - y * y);
  return Vec3(r * cosf(phi), y, r * sinf(phi));
}

// The guide tile of a pixel for a path vertex of depth `depth`, or -1 when there is no guide or the vertex is too
// deep for it. Next-event estimation at a vertex and the MIS weight of the ray its BSDF sample sends out (MissItem:
// the path's depth minus one) must agree.
TRACER_HD int EnvGuideTile(const EnvGuideView& g, uint32_t pixel, uint32_t depth) {
  if (!g.cdf || depth >= static_cast<uint32_t>(g.depths)) return -1;
  const int x = static_cast<int>(pixel % static_cast<uint32_t>(g.width)),
            y = static_cast<int>(pixel / static_cast<uint32_t>(g.width));
  return (y / g.tileSize) * g.tilesX + x / g.tileSize;
}

// The guide's solid-angle pdf of unit world direction d in tile `tile` (>= 0).
TRACER_HD float EnvGuidePdf(const EnvGuideView& g, int tile, Vec3 d) {
  const float* cdf = g.cdf + static_cast<size_t>(tile) * (kEnvGuideBins + 1);
  const int b = EnvGuideBin(d);
  return (cdf[b + 1] - cdf[b]) * (kEnvGuideBins / (4.0f * kPi));
}

// The mixture's pdf of world direction d, given the environment's own pdf there (tile < 0: that pdf itself).
TRACER_HD float EnvMixturePdf(const EnvGuideView& g, int tile, Vec3 d, float pdfEnv) {
  return tile < 0 ? pdfEnv : (1.0f - g.mix) * pdfEnv + g.mix * EnvGuidePdf(g, tile, d);
}

// Radiance arriving from world direction d and the mixture's pdf of sampling it (EnvRadiance's guided twin).
TRACER_HD Vec3 EnvRadianceGuided(const EnvMapView& env, Vec3 constant, const EnvGuideView& g, int tile, Vec3 d,
                                 float& pdf) {
  float pdfEnv;
  const Vec3 le = EnvRadiance(env, constant, d, pdfEnv);
  pdf = EnvMixturePdf(g, tile, d, pdfEnv);
  return le;
}

// A direction toward the environment from the mixture (SampleEnvironment's guided twin): u1 below mix picks the
// guide (a bin from the tile's cdf, the rest of u1 across the bin's height, u2 across its azimuth), else the
// environment's own sampling on u1 rescaled; either way the pdf is the mixture's.
TRACER_HD EnvSample SampleEnvGuided(const EnvMapView& env, Vec3 constant, const EnvGuideView& g, int tile, float u1,
                                    float u2) {
  if (tile < 0) return SampleEnvironment(env, constant, u1, u2);
  if (u1 < g.mix) {
    float fy;
    const int bin = SampleCdf(g.cdf + static_cast<size_t>(tile) * (kEnvGuideBins + 1), kEnvGuideBins,
                              Fminf(u1 / g.mix, 0.99999994f), fy);
    EnvSample s;
    s.wi = EnvGuideDirection(bin, fy, u2);
    s.le = EnvRadianceGuided(env, constant, g, tile, s.wi, s.pdf);
    return s;
  }
  EnvSample s = SampleEnvironment(env, constant, Fminf((u1 - g.mix) / (1.0f - g.mix), 0.99999994f), u2);
  if (s.pdf > 0.0f) s.pdf = EnvMixturePdf(g, tile, s.wi, s.pdf);
  return s;
}

}  // namespace tracer
