// @file light.h: picking a light for next-event estimation (an emitter and a point on it, a delta light, or the
// environment), and the pdf of doing so (for MIS).
// Emitters are triangles with a positive Ke. They emit on the side their winding faces, except those of pbrt's
// "twosided" area lights (SceneView::emitterTwoSided), which emit the same radiance on both sides: their power counts
// twice in selection, and their cosines (on hit, in next-event estimation and in its pdf) are taken as |cos|.
//
// Next-event estimation picks the environment with probability EnvPick; otherwise a delta light (core/delta_lights.h)
// with probability DeltaShare, else an emitter. So a delta light's pick probability is (1 - EnvPick) DeltaShare times
// its own among them (by power, SceneView::deltaAlias), and an emitter's (1 - EnvPick) (1 - DeltaShare) times
// EmitterPmf (the emitter's probability given that an emitter is picked). By power, EnvPick is the environment's power
// share (SceneView::env.p.pick) and DeltaShare the delta lights' share of the rest (SceneView::deltaShare); a distant
// light's power is pi r^2 E, r the radius of the scene's bounding sphere, as pbrt-v4 counts it. Without delta lights
// DeltaShare is 0 and nothing about them is read.
//
// Under tile guiding the environment is one more cluster, the last of the tile's cdf (TileGuideView::envCluster), and
// the delta lights, when there are any, one cluster before it (TileGuideView::deltaCluster): their statistics sample
// the environment, or a delta light by power, like any cluster's, and EnvPick and DeltaShare come from those clusters'
// probabilities in the path's tile. So a tile that sees the sky picks it more often than one indoors, and a tile the
// sun reaches through a window picks the sun more often than one in its shadow; one cluster for all delta lights keeps
// the min-plus pass's cluster count, and its cost, as it was (a scene has few of them; inside the cluster they go by
// power).
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

// The guide's emitter clusters: the first ones, before the delta lights' and the environment's.
TRACER_HD int TileEmitterClusters(const TileGuideView& g) { return g.numClusters - g.envCluster - g.deltaCluster; }

// The probability of tile t's clusters [0, n): its cdf's entry n - 1 (0 for n = 0).
TRACER_HD float TileMassBelow(const TileGuideView& g, int tile, int n) {
  return n > 0 ? g.cdf[static_cast<size_t>(tile) * g.numClusters + n - 1] : 0.0f;
}

// The emitter clusters' share of tile t's cdf (the delta lights' and the environment's clusters hold the rest).
TRACER_HD float TileEmitterMass(const TileGuideView& g, int tile) {
  return TileMassBelow(g, tile, TileEmitterClusters(g));
}

// Probability that next-event estimation samples the environment rather than another light, for a path in `tile`.
TRACER_HD float EnvPick(const SceneView& s, const RenderParams& rp, int tile) {
  if (rp.envBsdfOnly) return 0.0f;
  if (tile >= 0 && s.tiles.numClusters > 0 && s.tiles.envCluster)
    return 1.0f - TileMassBelow(s.tiles, tile, s.tiles.numClusters - 1);
  return s.env.p.pick;
}

// The portals' share of environment samples (core/portals.h): rp.envPortalMix, or the environment's own where that is
// negative (auto), where the scene has portals; else 0 (the environment's own sampling alone). Next-event estimation
// and the MIS weight of a ray that leaves the scene must agree on it.
TRACER_HD float EnvPortalMix(const SceneView& s, const RenderParams& rp) {
  if (s.portals.count == 0) return 0.0f;
  return rp.envPortalMix < 0.0f ? s.env.p.portalMix : rp.envPortalMix;
}

// How portal samples are drawn (core/portals.h's kPortalPickByArea and kPortalAreaPoints: the naive twins).
TRACER_HD int PortalMode(const RenderParams& rp) {
  return (rp.envPortalByArea ? kPortalPickByArea : 0) | (rp.envPortalAreaPoints ? kPortalAreaPoints : 0);
}

// Probability that next-event estimation samples a delta light, given that it does not sample the environment, for a
// path in `tile`: the delta cluster's share of the clusters before the environment's, or by power.
TRACER_HD float DeltaShare(const SceneView& s, int tile) {
  if (s.numDeltaLights == 0) return 0.0f;
  if (tile >= 0 && s.tiles.numClusters > 0 && s.tiles.deltaCluster) {
    const int emitterClusters = TileEmitterClusters(s.tiles);
    const float below = TileMassBelow(s.tiles, tile, emitterClusters);
    const float through = TileMassBelow(s.tiles, tile, emitterClusters + 1);
    return through > 0.0f ? (through - below) / through : 0.0f;
  }
  return s.deltaShare;
}

// Picks a delta light by power from u in [0, 1); pmf: its probability among them.
TRACER_HD int PickDeltaLight(const SceneView& s, float u, float& pmf) {
  return SampleAlias(s.deltaAlias, s.numDeltaLights, u, pmf);
}

// Whether emitter triangle `tri` (BVH order) emits on both sides. Reads nothing when no emitter does.
TRACER_HD bool EmitterTwoSided(const SceneView& s, int tri) {
  if (!s.emitterTwoSided) return false;
  const int e = s.triEmitter[tri];
  return e >= 0 && s.emitterTwoSided[e] != 0;
}

// The cosine at an emitter between its geometric normal n and a unit direction w leaving it toward the receiver: a
// one-sided emitter's Dot(n, w) (not positive: no light that way), a two-sided one's |Dot(n, w)|.
TRACER_HD float EmitterCosine(const SceneView& s, int tri, Vec3 n, Vec3 w) {
  const float c = Dot(n, w);
  return c < 0.0f && EmitterTwoSided(s, tri) ? -c : c;
}

// The shadow ray of a light sample from p (geometric normal ng, on wi's side) along unit wi: to `target`, stopping
// just short of it, or to infinity (a distant light, the environment). index 0.
TRACER_HD Ray ShadowRayTo(Vec3 p, Vec3 ng, Vec3 wi, Vec3 target, bool infinite, float offsetFloor) {
  Ray r;
  r.o = OffsetRayOrigin(p, ng, wi, offsetFloor);
  if (infinite) {
    r.d = wi;
    r.tmax = kInf;
  } else {
    const Vec3 toL = target - r.o;
    const float len = Length(toL);
    r.d = toL / len;
    r.tmax = len * (1.0f - 1e-4f);
  }
  r.index = 0;
  return r;
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
  const int nc = TileEmitterClusters(s.tiles);
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
