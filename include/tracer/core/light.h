// @file light.h: picking an emitter and a point on it, and the pdf of doing so (for MIS).
// Emitters are triangles with a positive Ke, one-sided: they emit on the side their winding faces.
//
// The environment (core/environment.h) is one more light: next-event estimation picks it with probability
// EnvPick and an emitter otherwise, so every emitter's pick probability is (1 - EnvPick) times EmitterPmf (the
// emitter's probability given that an emitter is picked). By power, EnvPick is the environment's power share
// (SceneView::env.p.pick). Under tile guiding the environment is one more cluster, the last of the tile's cdf
// (TileGuideView::envCluster): its statistics sample the environment like any cluster's, and EnvPick is that
// cluster's probability in the path's tile, so a tile that sees the sky picks it more often than one indoors.
#pragma once
#include "tracer/core/render_params.h"
#include "tracer/core/scene_view.h"

namespace tracer {

struct LightSample {
  Vec3 p, n, le;
  float pdfArea;  // p(emitter) / area: the area density of the sampled point
  int32_t tri;
};

// Index of the screen tile a pixel belongs to, for tile-guided light selection.
TRACER_HD int TileOfPixel(const TileGuideView& g, uint32_t pixel, int width) {
  int x = static_cast<int>(pixel % static_cast<uint32_t>(width)),
      y = static_cast<int>(pixel / static_cast<uint32_t>(width));
  return (y / g.tileSize) * g.tilesX + x / g.tileSize;
}

// The tile whose guide a path of `pixel` uses, or -1 for selection by power.
TRACER_HD int GuideTile(const SceneView& s, const RenderParams& rp, uint32_t pixel) {
  return rp.guideLights && s.tiles.numClusters > 0 ? TileOfPixel(s.tiles, pixel, rp.width) : -1;
}

// The emitter clusters' share of tile t's cdf: its entry for the last emitter cluster (1 without an environment
// cluster; the environment cluster, when there is one, is last and holds the rest).
TRACER_HD float TileEmitterMass(const TileGuideView& g, int tile) {
  const int emitterClusters = g.numClusters - g.envCluster;
  return emitterClusters > 0 ? g.cdf[static_cast<size_t>(tile) * g.numClusters + emitterClusters - 1] : 0.0f;
}

// Probability that next-event estimation samples the environment rather than an emitter, for a path in `tile`.
TRACER_HD float EnvPick(const SceneView& s, const RenderParams& rp, int tile) {
  if (rp.envBsdfOnly) return 0.0f;
  if (tile >= 0 && s.tiles.numClusters > 0 && s.tiles.envCluster) return 1.0f - TileEmitterMass(s.tiles, tile);
  return s.env.p.pick;
}

// Probability of choosing emitter e (its pick probability, before the point on it), given that an emitter is picked.
TRACER_HD float EmitterPmf(const SceneView& s, int emitter, int tile) {
  if (s.tiles.numClusters == 0 || tile < 0) return s.lightAlias[emitter].pmf;
  int c = s.tiles.emitterCluster[emitter];
  const float* cdf = s.tiles.cdf + static_cast<size_t>(tile) * s.tiles.numClusters;
  const float mass = TileEmitterMass(s.tiles, tile);
  float pc = cdf[c] - (c > 0 ? cdf[c - 1] : 0.0f);
  return mass > 0.0f ? pc / mass * s.tiles.emitterInClusterPmf[emitter] : 0.0f;
}

// Picks an emitter; tile < 0 or no tile guide means "in proportion to power".
TRACER_HD int PickEmitter(const SceneView& s, int tile, float u, float& pmf) {
  if (s.tiles.numClusters == 0 || tile < 0) return SampleAlias(s.lightAlias, s.numEmitters, u, pmf);
  // Cluster by inverting the emitter clusters' part of the tile's cdf (binary search; u scaled to their mass),
  // then an emitter inside it by its alias table; the leftover fraction of u is reused for the second choice.
  const int nc = s.tiles.numClusters - s.tiles.envCluster;
  const float* cdf = s.tiles.cdf + static_cast<size_t>(tile) * s.tiles.numClusters;
  const float mass = TileEmitterMass(s.tiles, tile);
  u *= mass;
  int lo = 0, hi = nc - 1;
  while (lo < hi) {
    int mid = (lo + hi) >> 1;
    if (u < cdf[mid])
      hi = mid;
    else
      lo = mid + 1;
  }
  float prev = lo > 0 ? cdf[lo - 1] : 0.0f;
  float pc = cdf[lo] - prev;
  float u2 = pc > 0.0f ? Clamp((u - prev) / pc, 0.0f, 0.99999994f) : 0.0f;
  int start = s.tiles.clusterStart[lo], count = s.tiles.clusterStart[lo + 1] - start;
  float pe;
  int local = SampleAlias(s.tiles.clusterAlias + start, count, u2, pe);
  pmf = mass > 0.0f ? pc / mass * pe : 0.0f;
  return start + local;  // emitters are numbered cluster by cluster
}

TRACER_HD float TriangleArea(Vec3 v0, Vec3 v1, Vec3 v2) { return 0.5f * Length(Cross(v1 - v0, v2 - v0)); }

// An emitter triangle's radiance at barycentrics (b1, b2): Ke, times the map_Ke texel there when it has one (its
// pick probability used the texture's mean).
template <bool kLdg>
TRACER_HD Vec3 EmittedRadianceAt(const SceneView& s, int tri, float b1, float b2) {
  const int mat = TriangleMaterial<kLdg>(s, tri);
  const Float4 ke = Load4<kLdg>(&s.materials[mat].ke);
  const Vec3 le(ke.x, ke.y, ke.z);
  const int32_t emissionTexture = LoadRO<kLdg>(&s.materials[mat].info.y);
  if (emissionTexture < 0) return le;
  float u, v;
  TriangleUv<kLdg>(s, tri, b1, b2, u, v);
  return le * SampleTexture(s, emissionTexture, u, v);
}

template <bool kLdg>
TRACER_HD LightSample SampleLight(const SceneView& s, int tile, float uPick, float u1, float u2) {
  LightSample ls;
  float pmf;
  int e = PickEmitter(s, tile, uPick, pmf);
  int tri = s.emitterTri[e];
  Vec3 v0, v1, v2;
  LoadTriangle<kLdg>(s.bvh.tris, tri, v0, v1, v2);
  float b1, b2;
  SampleTriangle(u1, u2, b1, b2);
  ls.p = v0 * (1.0f - b1 - b2) + v1 * b1 + v2 * b2;
  Vec3 c = Cross(v1 - v0, v2 - v0);
  float area2 = Length(c);
  ls.n = area2 > 0.0f ? c / area2 : Vec3(0, 0, 1);
  ls.pdfArea = area2 > 0.0f ? pmf / (0.5f * area2) : 0.0f;
  ls.le = EmittedRadianceAt<kLdg>(s, tri, b1, b2);
  ls.tri = tri;
  return ls;
}

}  // namespace tracer
