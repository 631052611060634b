// @file integrator.h: the stages of the wavefront path tracer as per-item functions.
//
// Unidirectional path tracing with next-event estimation and multiple importance sampling (power
// heuristic, Veach 1997; delta lights by next-event estimation alone), Russian roulette, and a maximum depth. The CPU
// renderer and the CUDA kernels both call these functions; they differ only in how they loop over queues and push
// results.
#pragma once
#include "tracer/core/film.h"
#include "tracer/core/light.h"
#include "tracer/core/rng.h"

namespace tracer {

// ---- generate -----------------------------------------------------------------------------------------
// Work item w of a pass covers pixel w % P of the pass's P pixels (every pixel, or adaptive sampling's active ones)
// and sample sampleBase + w / P.
TRACER_HD void GenerateItem(const SceneView& s, const RenderParams& rp, uint64_t work, Ray& ray, PathState& ps) {
  const uint64_t pixels = PassPixels(rp);
  const uint32_t index = static_cast<uint32_t>(work % pixels);
  const uint32_t pixel = rp.activeCount ? rp.activePixels[index] : index;
  const uint32_t sample = rp.sampleBase + static_cast<uint32_t>(work / pixels);
  PathRng rng{rp.seed, pixel, sample};
  int px = static_cast<int>(pixel % static_cast<uint32_t>(rp.width));
  int py = static_cast<int>(pixel / static_cast<uint32_t>(rp.width));
  const bool lens = s.camera.lensRadius > 0.0f;
  ray = s.camera.Generate(px, py, rng.Get(kDimPixelX), rng.Get(kDimPixelY), lens ? rng.Get(kDimLensU) : 0.5f,
                          lens ? rng.Get(kDimLensV) : 0.5f);
  ps.throughput = Vec3(1.0f);
  ps.bsdfPdf = 0.0f;
  ps.pixel = pixel;
  ps.sample = sample;
  ps.depth = 0;
  ps.flags = kPathSpecular;  // the camera "bounce" counts as specular: emitters seen directly get full weight
}

// ---- miss -----------------------------------------------------------------------------------------------
// The environment seen along the ray r that left the scene, MIS-weighted against next-event estimation of it when the
// path's last bounce was not specular (with portals, by the mixture's pdf from r's origin, as next-event estimation
// from the same vertex computed it).
TRACER_HD void MissItem(const SceneView& s, const RenderParams& rp, const FilmView& film, const PathState& ps,
                        const Ray& r) {
  float pdfEnv;
  const Vec3 le = EnvRadianceGuided(s.env, s.environment, s.envGuide, EnvGuideTile(s.envGuide, ps.pixel, ps.depth - 1u),
                                    r.d, pdfEnv);
  const float envPick = EnvPick(s, rp, GuideTile(s, rp, ps.pixel));
  float w = 1.0f;
  if (!(ps.flags & kPathSpecular) && envPick > 0.0f) {
    const float mix = EnvPortalMix(s, rp);
    const int facing = static_cast<int>((ps.flags & kPathFacingMask) >> kPathFacingShift);
    const float pdf = mix > 0.0f ? PortalMixturePdf(s.portals, PortalMode(rp), mix, r.o, facing, r.d, pdfEnv) : pdfEnv;
    w = PowerHeuristic(ps.bsdfPdf, envPick * pdf);
  }
  FilmAdd(film, rp, ps.pixel, FilmTag(ps.depth, ps.sample), ps.throughput * le * w);
}

// ---- shade ----------------------------------------------------------------------------------------------
struct ShadeOutput {
  bool continues;
  Ray next;
  PathState nextState;
  bool hasShadow;
  Shadow shadow;  // ray.index = pixel
  Vec3 emitted;   // to add to the film now (emission reached by the BSDF sample, MIS-weighted)
};

// The cosine with ng of wo's mirror direction about n, 2 (n.wo) n - wo.
TRACER_HD float MirrorCosine(Vec3 n, Vec3 ng, Vec3 wo) { return 2.0f * Dot(n, wo) * Dot(n, ng) - Dot(wo, ng); }

// Shading normals (interpolated vn, bump and normal maps) are not the surface's own. Seen from wo, the mirror
// direction about ns can point under the geometric surface, and wo itself can fall under ns's horizon, where every
// reflective BSDF is zero: black fringes at silhouettes and on steep bumps. So where the mirror direction R of wo
// about ns leaves at a cosine with ng below t = min(0.01, 0.9 wo.ng), it is lifted to R', the direction of R's
// azimuth about ng at cosine t, and the normal becomes the half-vector of wo and R', so that R' is wo's mirror
// direction (the remedy Cycles calls ensure_valid_reflection; this closed form is ours). Directions under the
// geometric surface stay rejected, so no light leaks through. Needs wo.ng >= 0 (the shade step's frame flip sees
// to it); returns ns itself where nothing needs bending.
TRACER_HD Vec3 BendShadingNormal(Vec3 ns, Vec3 ng, Vec3 wo) {
  const float cosO = Dot(wo, ng), t = Fminf(0.01f, 0.9f * cosO);
  const Vec3 r = ns * (2.0f * Dot(ns, wo)) - wo;
  const float cosR = Dot(r, ng);
  if (cosR >= t) return ns;
  Vec3 side = r - ng * cosR;  // R's direction along the surface
  float len = Length(side);
  if (!(len > 1e-6f)) {  // R along -ng: take the side opposite wo's
    side = ng * cosO - wo;
    len = Length(side);
    if (!(len > 1e-6f)) return ng;
  }
  const Vec3 lifted = side * (SafeSqrt(1.0f - t * t) / len) + ng * t;
  const Vec3 h = wo + lifted;
  const float hl = Length(h);
  // At grazing views (wo.ng below about 1e-3) wo and the lifted direction nearly cancel and h is rounding error:
  // then ng itself, whose mirror direction leaves at wo.ng >= t.
  const Vec3 n = hl > 0.0f ? h / hl : ng;
  return Dot(n, wo) > 0.0f && MirrorCosine(n, ng, wo) >= 0.0f ? n : ng;
}

// Emission reached by the previous BSDF sample, MIS-weighted against light sampling (zero for the back face of a
// one-sided emitter). deltaShare (light.h's DeltaShare) leaves the emitters 1 - deltaShare of what the environment
// leaves of next-event estimation.
template <bool kLdg>
TRACER_HD Vec3 EmittedRadiance(const SceneView& s, const HitRecord& hit, const PathState& ps, const Surface& sf,
                               Vec3 le, Vec3 wo, int tile, float envPick, float deltaShare) {
  if (IsBlack(le)) return Vec3(0.0f);
  const float cosL = EmitterCosine(s, hit.tri, sf.ng, wo);
  if (!(cosL > 0.0f)) return Vec3(0.0f);
  float w = 1.0f;
  if (!(ps.flags & kPathSpecular)) {
    int e = s.triEmitter[hit.tri];
    Vec3 v0, v1, v2;
    LoadTriangle<kLdg>(s.bvh.tris, hit.tri, v0, v1, v2);
    float triArea = TriangleArea(v0, v1, v2);
    float pdfLight = (e >= 0 && triArea > 0.0f) ? (1.0f - envPick) * (1.0f - deltaShare) * EmitterPmf(s, e, tile) /
                                                      triArea * hit.t * hit.t / cosL
                                                : 0.0f;
    w = PowerHeuristic(ps.bsdfPdf, pdfLight);
  }
  return ps.throughput * le * w;
}

// Where a shaded point is, in the shading frame: the frame, wo in it, and the geometric normal on the frame's side.
struct ShadingPoint {
  Frame frame;
  Vec3 woL;
  Vec3 ng;
};

// The facing (core/portals.h's PortalFacing) that a vertex draws portal samples with: its geometric normal's, on wo's
// side; the sphere's for a BSDF that transmits, whose directions leave on both sides.
TRACER_HD int VertexFacing(const SurfaceBsdf& bsdf, const ShadingPoint& sp) {
  return TransmitsLight(bsdf) ? kPortalAnyFacing : PortalFacing(sp.ng);
}

// Next-event estimation: a direction toward one light: the environment with probability envPick (through the portals
// with probability portalMix, core/portals.h), else a delta light with probability deltaShare (light.h's DeltaShare),
// else a point on one emitter; MIS-weighted against BSDF sampling, except for a delta light, which BSDF sampling never
// reaches. Fills out.shadow (and sets out.hasShadow) when the light contributes.
template <bool kLdg>
TRACER_HD void SampleLightShadow(const SceneView& s, const PathState& ps, const PathRng& rng, const Surface& sf,
                                 const SurfaceBsdf& bsdf, const ShadingPoint& sp, int tile, float envPick,
                                 float deltaShare, const RenderParams& rp, ShadeOutput& out) {
  const uint32_t d = ps.depth;
  const float portalMix = EnvPortalMix(s, rp);
  const float uPick = rng.Bounce(d, kDimLightPick), u1 = rng.Bounce(d, kDimLightU), u2 = rng.Bounce(d, kDimLightV);
  Vec3 wi, le, target;
  float pdfLight = 0.0f;  // solid angle, pick probability included (a delta light: its pick probability)
  bool infinite = false, delta = false;
  if (uPick < envPick) {
    const EnvSample es = portalMix > 0.0f ? SampleEnvPortals(s.env, s.environment, s.portals, PortalMode(rp), portalMix,
                                                             sf.p, sp.ng, VertexFacing(bsdf, sp), s.offsetFloor, u1, u2,
                                                             rp.envPortalLoop != 0, !TransmitsLight(bsdf))
                                          : SampleEnvGuided(s.env, s.environment, s.envGuide,
                                                            EnvGuideTile(s.envGuide, ps.pixel, d), u1, u2);
    wi = es.wi;
    le = es.le;
    pdfLight = envPick * es.pdf;
    target = sf.p;  // (unused: to infinity)
    infinite = true;
  } else {
    const float u = (uPick - envPick) / (1.0f - envPick);  // in [0, 1): which of the other lights
    // A delta light below deltaShare; always when the emitters have no share or there are none (rounding may bring
    // u up to 1, and the emitters' remapping must not divide by 1 - deltaShare = 0).
    if (deltaShare > 0.0f && (u < deltaShare || deltaShare >= 1.0f || s.numEmitters == 0)) {
      float pmf;
      const int k = PickDeltaLight(s, Fminf(u / deltaShare, 0.99999994f), pmf);
      const DeltaIncidence di = DeltaLightAt<kLdg>(s.deltaLights + k, sf.p);
      wi = di.wi;
      le = di.li;
      target = di.target;
      infinite = di.infinite;
      delta = true;
      pdfLight = (1.0f - envPick) * deltaShare * pmf;
    } else {
      const LightSample ls = SampleLight<kLdg>(s, tile, (u - deltaShare) / (1.0f - deltaShare), u1, u2);
      const Vec3 toL = ls.p - sf.p;
      const float dist2 = Dot(toL, toL);
      if (dist2 > 0.0f && ls.pdfArea > 0.0f) {
        wi = toL / sqrtf(dist2);
        const float cosL = EmitterCosine(s, ls.tri, ls.n, -wi);
        if (cosL > 0.0f) pdfLight = (1.0f - envPick) * (1.0f - deltaShare) * ls.pdfArea * dist2 / cosL;
      }
      le = ls.le;
      target = ls.p;
    }
  }
  if (!(pdfLight > 0.0f)) return;
  // wi must leave on wo's side, or, for a BSDF that transmits, on the side its local direction says.
  const Vec3 wiL = sp.frame.ToLocal(wi);
  const float side = Dot(wi, sp.ng);
  if (!(TransmitsLight(bsdf) ? side * wiL.z > 0.0f : side > 0.0f)) return;
  const Vec3 f = BsdfEval(bsdf, sp.woL, wiL);
  if (IsBlack(f)) return;
  const float w = delta ? 1.0f : PowerHeuristic(pdfLight, BsdfPdf(bsdf, sp.woL, wiL));
  const Vec3 c = ps.throughput * f * le * (fabsf(wiL.z) * w / pdfLight);
  if (IsBlack(c)) return;
  out.hasShadow = true;
  out.shadow.ray = ShadowRayTo(sf.p, sp.ng, wi, target, infinite, s.offsetFloor);
  out.shadow.ray.index = static_cast<int32_t>(ps.pixel);
  out.shadow.contribution = c;
  out.shadow.depth = FilmTag(d, ps.sample);  // (FilmAdd's tag)
}

// Samples the BSDF for the continuation, with Russian roulette on the throughput; fills out.next and out.nextState
// (and sets out.continues) when the path goes on.
TRACER_HD void ContinuePath(const RenderParams& rp, const PathState& ps, const PathRng& rng, const Surface& sf,
                            const SurfaceBsdf& bsdf, const ShadingPoint& sp, float offsetFloor, ShadeOutput& out) {
  const uint32_t d = ps.depth;
  BsdfSample bs =
      BsdfSampleDir(bsdf, sp.woL, rng.Bounce(d, kDimBsdfLobe), rng.Bounce(d, kDimBsdfU), rng.Bounce(d, kDimBsdfV));
  if (!bs.valid || bs.pdf <= 0.0f) return;
  Vec3 wi = sp.frame.ToWorld(bs.wi);
  Vec3 beta = ps.throughput * bs.f * (fabsf(bs.wi.z) / bs.pdf);
  if (IsBlack(beta) || !IsFinite(beta)) return;
  // A reflected direction must leave on the side it came from, a transmitted one on the other (dielectrics, whose
  // frame is not turned to wo, are not checked).
  if (bsdf.cls != kDielectric && (bs.wi.z < 0.0f ? Dot(wi, sp.ng) >= 0.0f : Dot(wi, sp.ng) <= 0.0f)) return;

  // Russian roulette on the throughput.
  if (static_cast<int32_t>(d) + 1 >= rp.rouletteDepth) {
    float q = Fminf(MaxComponent(beta), 0.95f);
    if (rng.Bounce(d, kDimRoulette) >= q) return;
    beta = beta / q;
  }
  out.continues = true;
  out.next.o = OffsetRayOrigin(sf.p, sf.ng, wi, offsetFloor);
  out.next.d = wi;
  out.next.tmax = kInf;
  out.next.index = 0;
  out.nextState = ps;
  out.nextState.throughput = beta;
  out.nextState.bsdfPdf = bs.delta ? 0.0f : bs.pdf;
  out.nextState.depth = d + 1;
  out.nextState.flags =
      (bs.delta ? kPathSpecular : 0u) | (static_cast<uint32_t>(VertexFacing(bsdf, sp)) << kPathFacingShift);
}

// One path vertex: emission reached, a shadow ray toward a light, and the continuation.
template <bool kLdg>
TRACER_HD ShadeOutput ShadeItem(const SceneView& s, const RenderParams& rp, const Ray& ray, const HitRecord& hit,
                                const PathState& ps) {
  ShadeOutput out;
  out.continues = false;
  out.hasShadow = false;
  Surface sf = GetSurface<kLdg>(s, hit);
  Vec3 le;
  const SurfaceBsdf bsdf = GetBsdf<kLdg>(s, sf, le);
  const Vec3 wo = -ray.d;
  const PathRng rng{rp.seed, ps.pixel, ps.sample};
  const int tile = GuideTile(s, rp, ps.pixel);
  const float envPick = EnvPick(s, rp, tile), deltaShare = DeltaShare(s, tile);
  out.emitted = EmittedRadiance<kLdg>(s, hit, ps, sf, le, wo, tile, envPick, deltaShare);
  if (static_cast<int32_t>(ps.depth) >= rp.maxDepth) return out;

  // Shading frame on the side of the incoming ray (two-sided surfaces), except for dielectrics,
  // which need to know whether the ray enters or leaves.
  const bool dielectric = bsdf.cls == kDielectric;
  Vec3 n = sf.ns, ng = sf.ng;
  if (!dielectric && Dot(ng, wo) < 0.0f) {
    n = -n;
    ng = -ng;
  }
  if (!dielectric) n = BendShadingNormal(n, ng, wo);
  ShadingPoint sp;
  // An anisotropic lobe's alphas lie along a tangent and its normal's cross product with it (ShadingFrame).
  sp.frame = ShadingFrame<kLdg>(s, sf, bsdf, n);
  sp.woL = sp.frame.ToLocal(wo);
  sp.ng = ng;

  if (!IsDeltaBsdf(bsdf) && (s.numEmitters > 0 || envPick > 0.0f || s.numDeltaLights > 0))
    SampleLightShadow<kLdg>(s, ps, rng, sf, bsdf, sp, tile, envPick, deltaShare, rp, out);
  ContinuePath(rp, ps, rng, sf, bsdf, sp, s.offsetFloor, out);
  return out;
}

// ---- intersect -------------------------------------------------------------------------------------
// Returns the material class of the hit surface, or -1 for a miss.
template <bool kLdg>
TRACER_HD int32_t ClassOfHit(const SceneView& s, const HitRecord& hit) {
  if (hit.tri < 0) return -1;
  const int32_t m = TriangleMaterial<kLdg>(s, hit.tri);
  const int32_t cls = LoadRO<kLdg>(&s.materials[m].info.x);
  if (cls != kMixMaterial) return cls;
  return LoadRO<kLdg>(&s.materials[ResolveMix<kLdg>(s, m, hit.tri, hit.b1, hit.b2)].info.x);
}

}  // namespace tracer
