// @file light_tiles.h: per-item pieces of tile-guided light selection, shared by the CPU builder and the
// CUDA kernels: the primary-hit G-buffer, the statistics sample, the tile dissimilarity, and one tile's
// cluster distribution p(c|t) = (1 - alpha) p_power(c) + alpha softmin(C[t]).
//
// Statistics: for the primary hit of each pixel of tile t, one emitter of cluster c is sampled and a shadow
// ray traced; the unoccluded contribution Le cos_s cos_l / (d^2 p_area) (Le with its map_Ke texel; an estimate of the
// cluster's irradiance there) goes into E[t][c], and the sample into N[t][c]. The environment, when next-event
// estimation samples it, is the last cluster, and the point, spot and distant lights one before it (see light.h). The
// cost is C = -log(E/N + eps), +inf where (t, c) has no sample. Min-plus propagation then lets each tile borrow the
// cost of similar tiles, paying D[t][k] (a log-space penalty) for the difference.
#pragma once
#include "tracer/core/light.h"
#include "tracer/core/rng.h"

namespace tracer {

constexpr float kTileCostEpsilon = 1e-6f;

// One pixel's primary hit through the pixel centre: (position, 1) and (geometric normal facing the camera, depth);
// w = 0 in the first when the ray leaves the scene. Like every ray of the guide it traverses the binary BVH with the
// render's cut-out test, so it passes through holes as paths do. The geometric normal, not the shading one: the
// statistics need the surface's own hemisphere, and their rays leave from an offset along it (OffsetRayOrigin's
// contract); a vertex, bump or normal map's normal can point below the surface, whence rays would start inside it.
template <bool kLdg>
TRACER_HD void GBufferItem(const SceneView& s, int px, int py, Float4& posValid, Float4& normalDepth) {
  Ray r = s.camera.Generate(px, py, 0.5f, 0.5f);
  HitRecord h = BinaryBvhTraversal::Trace<false, kLdg>(s, r);
  if (h.tri < 0) {
    posValid = Float4{0, 0, 0, 0};
    normalDepth = Float4{0, 0, 0, 0};
    return;
  }
  const Surface sf = GetSurface<kLdg>(s, h);
  Vec3 n = Dot(sf.ng, r.d) > 0.0f ? -sf.ng : sf.ng;
  posValid = Float4{sf.p.x, sf.p.y, sf.p.z, 1.0f};
  normalDepth = Float4{n.x, n.y, n.z, h.t};
}

// A statistics sample before its shadow ray: the unoccluded contribution and the ray that must reach the light
// unoccluded for it to count (trace false: nothing to count).
struct TileStatRay {
  bool trace;
  float value;
  Ray ray;
};

// The environment cluster (the last, TileGuideView::envCluster) samples a direction by SampleEnvironment: the
// estimate Le cos_s / pdf of the environment's irradiance at p, in the same units as an emitter cluster's.
TRACER_HD TileStatRay EnvStatRay(const SceneView& s, Vec3 p, Vec3 n, float u1, float u2) {
  TileStatRay t{false, 0.0f, Ray{}};
  const EnvSample es = SampleEnvironment(s.env, s.environment, u1, u2);
  const float cosS = Dot(n, es.wi);
  if (!(es.pdf > 0.0f) || cosS <= 0.0f) return t;
  t = TileStatRay{true, Luminance(es.le) * cosS / es.pdf, ShadowRayTo(p, n, es.wi, p, true, s.offsetFloor)};
  return t;
}

// The delta lights' cluster (TileGuideView::deltaCluster) picks one of them by power: E cos_s / pmf, E the
// irradiance it gives a surface facing it (the same units again).
template <bool kLdg>
TRACER_HD TileStatRay DeltaStatRay(const SceneView& s, Vec3 p, Vec3 n, float uPick) {
  TileStatRay t{false, 0.0f, Ray{}};
  float pmf;
  const DeltaIncidence di = DeltaLightAt<kLdg>(s.deltaLights + PickDeltaLight(s, uPick, pmf), p);
  const float cosS = Dot(n, di.wi);
  if (!(pmf > 0.0f) || cosS <= 0.0f || IsBlack(di.li)) return t;
  t = TileStatRay{true, Luminance(di.li) * cosS / pmf, ShadowRayTo(p, n, di.wi, di.target, di.infinite, s.offsetFloor)};
  return t;
}

// An emitter cluster picks an emitter by its alias table and a point on it: Le cos_s cos_l / (d^2 p_area).
template <bool kLdg>
TRACER_HD TileStatRay EmitterStatRay(const SceneView& s, Vec3 p, Vec3 n, int c, float uPick, float u1, float u2) {
  const TileGuideView& g = s.tiles;
  TileStatRay t{false, 0.0f, Ray{}};
  const int start = g.clusterStart[c], count = g.clusterStart[c + 1] - start;
  if (count <= 0) return t;
  float pe;
  const int e = start + SampleAlias(g.clusterAlias + start, count, uPick, pe);
  const int tri = s.emitterTri[e];
  Vec3 v0, v1, v2;
  LoadTriangle<kLdg>(s.bvh.tris, tri, v0, v1, v2);
  float b1, b2;
  SampleTriangle(u1, u2, b1, b2);
  const Vec3 q = v0 * (1.0f - b1 - b2) + v1 * b1 + v2 * b2;
  const Vec3 cr = Cross(v1 - v0, v2 - v0);
  const float area2 = Length(cr);
  if (!(area2 > 0.0f) || !(pe > 0.0f)) return t;
  const Vec3 nl = cr / area2;
  Vec3 d = q - p;
  const float dist2 = Dot(d, d);
  if (!(dist2 > 0.0f)) return t;
  const float dist = sqrtf(dist2);
  d = d / dist;
  const float cosS = Dot(n, d), cosL = EmitterCosine(s, tri, nl, -d);
  if (cosS <= 0.0f || cosL <= 0.0f) return t;
  const float value = Luminance(EmittedRadianceAt<kLdg>(s, tri, b1, b2)) * cosS * cosL / dist2 * (0.5f * area2) / pe;
  t = TileStatRay{true, value, ShadowRayTo(p, n, d, q, false, s.offsetFloor)};
  return t;
}

// One statistics sample toward cluster c from a primary hit (p, n). Returns the luminance of the
// unoccluded contribution (0 when occluded or facing away), an estimate of the cluster's irradiance at p. One shadow
// ray whatever the cluster, so that the kernel inlines one traversal.
template <bool kLdg>
TRACER_HD float TileStatSample(const SceneView& s, Vec3 p, Vec3 n, int c, float uPick, float u1, float u2) {
  const TileGuideView& g = s.tiles;
  const TileStatRay t = g.deltaCluster && c == TileEmitterClusters(g) ? DeltaStatRay<kLdg>(s, p, n, uPick)
                        : g.envCluster && c == g.numClusters - 1      ? EnvStatRay(s, p, n, u1, u2)
                                                                      : EmitterStatRay<kLdg>(s, p, n, c, uPick, u1, u2);
  if (!t.trace) return 0.0f;
  return BinaryBvhTraversal::Trace<true, kLdg>(s, t.ray).tri < 0 ? t.value : 0.0f;
}

// One sample of the environment guide's statistics (core/env_guide.h) for pixel (px, py): the camera ray through
// the point (jx, jy) of the pixel, and from its first hit a direction drawn (u1, u2) from the guide learned so far
// (guide, tile: SampleEnvGuided; tile -1: the environment's own sampling), traced. Returns that direction's guide bin
// and the luminance of the unoccluded estimate Le cos / pdf (0 when the camera ray leaves the scene, or the direction
// is under the surface or occluded): in expectation, the bin's part of the irradiance at the hit, so a tile's sums over
// its pixels are the histogram the guide samples in proportion.
template <bool kLdg>
TRACER_HD float EnvGuideStatSample(const SceneView& s, const EnvGuideView& guide, int tile, int px, int py, float jx,
                                   float jy, float u1, float u2, int& bin) {
  bin = 0;
  Ray r = s.camera.Generate(px, py, jx, jy);
  const HitRecord h = BinaryBvhTraversal::Trace<false, kLdg>(s, r);
  if (h.tri < 0) return 0.0f;
  const Surface sf = GetSurface<kLdg>(s, h);
  const Vec3 n = Dot(sf.ng, r.d) > 0.0f ? -sf.ng : sf.ng;
  const EnvSample es = SampleEnvGuided(s.env, s.environment, guide, tile, u1, u2);
  bin = EnvGuideBin(es.wi);
  const float cosS = Dot(n, es.wi);
  if (!(es.pdf > 0.0f) || cosS <= 0.0f) return 0.0f;
  r.o = OffsetRayOrigin(sf.p, n, es.wi, s.offsetFloor);
  r.d = es.wi;
  r.tmax = kInf;
  r.index = 0;
  return BinaryBvhTraversal::Trace<true, kLdg>(s, r).tri < 0 ? Luminance(es.le) * cosS / es.pdf : 0.0f;
}

// Weights of the dissimilarity, in units of cost (-log of the light estimate): a tile one tile away pays
// kTileDistWeight, a normal turned by 90 degrees kTileNormalWeight, a relative depth change of 1
// kTileDepthWeight. Tiles further than kTileRadius tiles apart, or without primary hits, are not neighbours.
constexpr float kTileDistWeight = 0.5f;
constexpr float kTileNormalWeight = 4.0f;
constexpr float kTileDepthWeight = 4.0f;
constexpr int kTileRadius = 6;

// info = (mean normal.xyz, mean depth); w of the mean depth <= 0 when the tile has no primary hit.
TRACER_HD float TileDissimilarity(int t, int k, int tilesX, Float4 a, Float4 b) {
  if (t == k) return 0.0f;
  if (!(a.w > 0.0f) || !(b.w > 0.0f)) return kInf;
  const int dx = t % tilesX - k % tilesX, dy = t / tilesX - k / tilesX;
  const int adx = dx < 0 ? -dx : dx, ady = dy < 0 ? -dy : dy;
  if (adx > kTileRadius || ady > kTileRadius) return kInf;
  const float dist = sqrtf(static_cast<float>(dx * dx + dy * dy));
  const float nd = 1.0f - (a.x * b.x + a.y * b.y + a.z * b.z);
  const float zd = fabsf(a.w - b.w) / Fmaxf(a.w, b.w);
  return kTileDistWeight * dist + kTileNormalWeight * Fmaxf(nd, 0.0f) + kTileDepthWeight * zd;
}

TRACER_HD float TileCost(float sum, float count) { return count > 0.0f ? -logf(sum / count + kTileCostEpsilon) : kInf; }

// Writes one tile's cumulative distribution over the clusters. softmin(C)_c = exp(-C_c) / sum exp(-C_k) over
// finite costs; mixing with the power pdf keeps every cluster with power reachable (unbiasedness).
TRACER_HD void TileCdfRow(const float* cost, const float* powerPmf, int K, float alpha, float* cdf) {
  float cmin = kInf;
  for (int c = 0; c < K; ++c) cmin = Fminf(cmin, cost[c]);
  float total = 0.0f;
  if (cmin < kInf)
    for (int c = 0; c < K; ++c) total += cost[c] < kInf ? expf(cmin - cost[c]) : 0.0f;
  const float a = total > 0.0f ? alpha : 0.0f;
  float acc = 0.0f;
  for (int c = 0; c < K; ++c) {
    const float soft = (total > 0.0f && cost[c] < kInf) ? expf(cmin - cost[c]) / total : 0.0f;
    acc += (1.0f - a) * powerPmf[c] + a * soft;
    cdf[c] = acc;
  }
  // Normalise so the last entry is exactly 1: rounding must not leave a gap that no u falls into.
  const float inv = acc > 0.0f ? 1.0f / acc : 0.0f;
  for (int c = 0; c < K - 1; ++c) cdf[c] = Fminf(cdf[c] * inv, 1.0f);
  cdf[K - 1] = 1.0f;
}

// Sample index of the statistics rays of one round: above any index a render pass uses, so the guide's
// random numbers are independent of the image's.
TRACER_HD uint32_t TileStatSampleIndex(int refresh, int round) {
  return 0x80000000u + static_cast<uint32_t>(refresh) * 4096u + static_cast<uint32_t>(round);
}

// The cluster that round r of refresh f tests from tile t: a different pseudo-random cluster per tile and
// round, so that over rounds every tile samples a spread of clusters. With an environment cluster (the last, envCluster
// 1), round 0 of every refresh tests it in every tile: among up to 256 emitter clusters it would otherwise be one
// round's chance in K, and until a tile has its statistics the guide gives the sky only the power mix's part of its
// share. The delta lights' cluster (deltaCluster 1, just before the environment's) is tested in every tile by the
// next round, for the same reason: a sun through a window is one cluster among hundreds.
TRACER_HD int TileRoundCluster(int t, int round, int refresh, int K, int envCluster, int deltaCluster) {
  if (envCluster && round == 0) return K - 1;
  if (deltaCluster && round == envCluster) return K - 1 - envCluster;
  uint64_t h =
      Mix64((static_cast<uint64_t>(refresh) << 48) ^ (static_cast<uint64_t>(round) << 32) ^ static_cast<uint32_t>(t));
  return static_cast<int>(h % static_cast<uint64_t>(K));
}

}  // namespace tracer
