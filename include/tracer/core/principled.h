// @file principled.h: the principled lobe of the glossy class: Blender's Principled BSDF as an MTL's PBR keys give
// it (Pr, Pm, Ps, Pc, Pcr, aniso, anisor and map_Pr, map_Pm, map_Ps), layered as Cycles layers it.
//
// From the top (Blender 4's Principled BSDF, Cycles' svm_closure.h): a sheen of weight s, a clear coat of weight c
// (a GGX dielectric of index 1.5, Blender's default Coat IOR), and the base: the glossy class's layer (glossy_layer.h:
// GGX with Schlick's Fresnel over a Lambertian base, Kulla and Conty's multiple scattering) and a metal of f0 = the
// base colour, weighted 1 - m and m by the metallic weight (PrincipledAt says how; m is per hit point, so map_Pm can
// vary it). Each layer passes down what it does not reflect at wo ("albedo scaling"):
//   f = s f_sheen + (1 - s Es(mu_o)) [c f_coat + (1 - c Rc(mu_o)) f_base]
// with Es and Rc the sheen's and the coat's directional albedos. The albedo at wo is then
//   s Es + (1 - s Es) (c Rc + (1 - c Rc) A_base(wo)) <= 1,
// and 1 for a base that keeps everything: energy is conserved whatever the base, a conductor (Pm 1) included. What
// albedo scaling leaves out is what the coat does to the light below it (refraction, inter-reflection), as Cycles
// does; it is not reciprocal (the scale follows wo only), which a path tracer that samples from the camera does not
// need. Directions are local, as in material.h.
//
// Anisotropy as Cycles maps it: alpha_x = alpha / a along the tangent, alpha_y = alpha a across it, with aspect
// a = sqrt(1 - 0.9 aniso), and the tangent turned about the normal by 2 pi anisor (integrator.h's shading frame). The
// GGX albedo tables of the glossy class are isotropic, and no one isotropic alpha gives an anisotropic lobe's
// albedo (alpha 0.3, aniso 1: 0.55 at normal incidence, 0.88 at the two alphas' geometric mean and 0.67 at their
// mean; measured by quadrature, the rms alpha was off by up to 0.15 elsewhere); an anisotropic base reads
// its E and E5 per direction from its own table instead (FillPrincipledTable), over the azimuth.
#pragma once
#include <algorithm>

#include "tracer/core/bsdf.h"
#include "tracer/core/glossy_layer.h"
#include "tracer/core/lobes.h"
#include "tracer/core/microfacet.h"
#include "tracer/core/sampling.h"

namespace tracer {

constexpr float kPrincipledCoatEta = 1.5f;          // Blender's default Coat IOR (the MTL has no key for it)
constexpr int kPrincipledTableRes = kCoatTableRes;  // texels per table row, at sqrt(mu) = j / (res - 1)
constexpr int kBaseTableAzimuths = 9;               // an anisotropic base's rows per roughness (BaseTableAzimuth)
constexpr int kBaseTableRoughnessRows = 17;         // ... and its roughnesses r = i / 16 under a roughness map

// ---- anisotropy ---------------------------------------------------------------------------------------------------
TRACER_HD float AnisotropyAspect(float aniso) { return sqrtf(1.0f - 0.9f * Clamp(aniso, 0.0f, 1.0f)); }
// The base's alphas along the tangent and across it from its isotropic alpha (at least the glossy class's minimum,
// which the aspect then divides and multiplies: an anisotropic lobe may be narrower across).
TRACER_HD GgxAlphas PrincipledAlphas(float alpha, float aspect) {
  const float a = Fmaxf(alpha, kMinGlossyAlpha);
  return {a / aspect, a * aspect};
}

// The metal the metallic weight mixes in: f0 = the base colour, f90 = 1 (Schlick's Fresnel, as Blender's generalised
// Schlick for its metallic closure), no diffuse base.
TRACER_HD SurfaceBsdf MetalOf(const SurfaceBsdf& b) {
  SurfaceBsdf m = b;
  m.ks = b.kd;
  m.f90 = 1.0f;
  m.kd = Vec3(0.0f);
  return m;
}
// The base's alphas and its table's row coordinate from the layer's alpha (b.alpha, after map_Pr) and the aspect.
TRACER_HD void SetPrincipledAlphas(SurfaceBsdf& b, float aspect) {
  b.roughness = SafeSqrt(Fmaxf(b.alpha, kMinGlossyAlpha));
  const GgxAlphas a = PrincipledAlphas(b.alpha, aspect);
  b.alpha = a.x;
  b.alphaY = a.y;
}

// ---- sheen --------------------------------------------------------------------------------------------------------
// Estevez and Kulla 2017 ("Production Friendly Microfacet Sheen BRDF"): the "Charlie" distribution of fibres
// D(h) = (2 + 1/r) sin(theta_h)^(1/r) / (2 pi), here at r = 0.5 (a moderate sheen; the MTL has no sheen roughness):
// D = 2 sin^2(theta_h) / pi; with the visibility term of Neubelt and Pettineo 2013 ("Crafting a Next-Gen Material
// Pipeline for The Order: 1886"), f = D / (4 (cos_i + cos_o - cos_i cos_o)). White, as Blender's default Sheen Tint;
// its albedo, in the table, is 0.08 at normal incidence and 0.7 at grazing.
TRACER_HD float SheenEval(Vec3 wo, Vec3 wi, Vec3 h) {
  const float d = 2.0f * kInvPi * Fmaxf(1.0f - h.z * h.z, 0.0f);
  return d / (4.0f * (wi.z + wo.z - wi.z * wo.z));
}

// ---- the table ----------------------------------------------------------------------------------------------------
// One texture per material, kPrincipledTableRes texels a row, each row linear in sqrt(mu):
//   row 0: (the coat's directional reflectance Rc(mu), the sheen's albedo Es(mu), 0, 0);
//   an anisotropic base's rows after it, 1 + i kBaseTableAzimuths + k for roughness row i and azimuth row k:
//   (E, E5, Eavg, E5avg) of its GGX lobe as glossy_layer.h reads them, Eavg and E5avg the same along a row.
// baseRows is 0 for an isotropic base (the GGX table serves it), 1 at the material's roughness, or
// kBaseTableRoughnessRows at r = i / 16 under a roughness map. (TableRowAt, lobes.h, reads a row.)
//
// Where direction w falls between an anisotropic base's azimuth rows: its projected alpha
// alpha_w = sqrt(alpha_x^2 cos^2(phi) + alpha_y^2 sin^2(phi)) (the alpha of w's masking), as a fraction of the way from
// alpha_y to alpha_x. The albedo follows alpha_w smoothly; over cos^2(phi) it changes fastest where alpha_w does, near
// the narrow axis (there 5 rows linear in cos^2(phi) left the furnace 6% off at grazing, measured).
TRACER_HD float BaseTableAzimuth(Vec3 w, GgxAlphas a) {
  const float p2 = w.x * w.x + w.y * w.y;
  if (!(p2 > 0.0f) || !(a.x > a.y)) return 0.0f;  // at the pole any row holds the same albedo
  const float aw = sqrtf((Sqr(a.x * w.x) + Sqr(a.y * w.y)) / p2);
  return Clamp((aw - a.y) / (a.x - a.y), 0.0f, 1.0f);
}
// cos^2(phi) of the direction at azimuth fraction t (BaseTableAzimuth's inverse).
inline float BaseTableCos2Phi(float t, GgxAlphas a) {
  const float aw = a.y + t * (a.x - a.y);
  return Clamp((aw * aw - a.y * a.y) / (a.x * a.x - a.y * a.y), 0.0f, 1.0f);
}
// An anisotropic base's (E, E5, Eavg, E5avg) at direction w: trilinear in (roughness row, azimuth fraction,
// sqrt(mu)), one texel at a time (so that the shade kernel does not hold eight at once).
TRACER_HD Float4 BaseTableAt(const Float4* table, int rows, float roughness, Vec3 w, GgxAlphas a) {
  const float y = rows > 1 ? Clamp(roughness, 0.0f, 1.0f) * static_cast<float>(rows - 1) : 0.0f;
  const float x = BaseTableAzimuth(w, a) * static_cast<float>(kBaseTableAzimuths - 1);
  const float z = SafeSqrt(Clamp(w.z, 0.0f, 1.0f)) * static_cast<float>(kPrincipledTableRes - 1);
  int i = static_cast<int>(y), k = static_cast<int>(x), j = static_cast<int>(z);
  i = rows > 1 ? (i > rows - 2 ? rows - 2 : i) : 0;
  k = k > kBaseTableAzimuths - 2 ? kBaseTableAzimuths - 2 : k;
  j = j > kPrincipledTableRes - 2 ? kPrincipledTableRes - 2 : j;
  const float ty = y - static_cast<float>(i), tx = x - static_cast<float>(k), tz = z - static_cast<float>(j);
  Float4 sum{0.0f, 0.0f, 0.0f, 0.0f};
  for (int c = 0; c < 8; ++c) {
    const int di = c >> 2, dk = (c >> 1) & 1, dj = c & 1;
    const float weight = (di ? ty : 1.0f - ty) * (dk ? tx : 1.0f - tx) * (dj ? tz : 1.0f - tz);
    if (weight == 0.0f) continue;
    const Float4 v = table[(1 + (i + di) * kBaseTableAzimuths + k + dk) * kPrincipledTableRes + j + dj];
    sum = Float4{sum.x + weight * v.x, sum.y + weight * v.y, sum.z + weight * v.z, sum.w + weight * v.w};
  }
  return sum;
}
// The base's GGX albedos (E, E5) at w, and their averages: from the GGX table when isotropic, else its own.
TRACER_HD GgxAlbedo BaseAlbedoAt(const SurfaceBsdf& b, Vec3 w, GgxAlbedo& avg) {
  if (b.baseRows == 0) {
    const GgxAlbedoRow row = GgxAlbedoRowOf(b.alpha);
    avg = LookupGgxAlbedoAvg(row);
    return LookupGgxAlbedo(row, w.z);
  }
  const Float4 t = BaseTableAt(b.coatTable, b.baseRows, b.roughness, w, GgxAlphas{b.alpha, b.alphaY});
  avg = {t.z, t.w};
  return {t.x, t.y};
}

// ---- the lobe -----------------------------------------------------------------------------------------------------
TRACER_HD GgxAlphas BaseAlphas(const SurfaceBsdf& b) { return {b.alpha, b.alphaY}; }
TRACER_HD GgxAlphas CoatAlphas(const SurfaceBsdf& b) { return {b.coatAlpha, b.coatAlpha}; }
TRACER_HD bool CoatIsSmooth(const SurfaceBsdf& b) { return b.coatAlpha <= kSmoothAlpha; }

// The base: the dielectric layer (kd, ks, f90; glossy_layer.h) and the metal (MetalOf), weighted 1 - m and m as Blender
// weights its closures. Their single-scattering lobes share D and G, and Schlick's F is linear in f0 and f90, so
// together they are one lobe of f0 = (1 - m) ks + m kd and f90 = (1 - m) f90 + m; their multiple-scattering lobes share
// (1 - E(wo)) (1 - E(wi)) / (pi (1 - Eavg)), so they are one of Fms = (1 - m) Fms_dielectric + m Fms_metal; and the
// dielectric keeps its diffuse base, weighted 1 - m. (Mixing f0, f90 and kd instead, as the glossy class does for Pm,
// keeps 0.77 of a white base at m 0.4 where the mix keeps all of it.)
//
// What the layers do at wo, and how the lobe is sampled there: the coat, the sheen and the base in proportion to the
// albedo each returns at wo, and within the base its specular lobe in proportion to its single scattering. Only what
// the evaluation at a wi needs is kept (the shade kernel holds it beside everything else).
struct PrincipledAt {
  Vec3 fms;         // the dielectric layer's Fms, for its Es(wi)
  Vec3 fmsMix;      // (1 - m) Fms + m Fms_metal
  Vec3 diffuse;     // (1 - m) kd (1 - Es(wo)) / (pi (1 - EsAvg)): the diffuse base's part at wo
  float msScale;    // (1 - E(wo)) / (pi (1 - Eavg)): the multiple scattering's part at wo
  float coatRc;     // Rc(mu_o)
  float pass;       // (1 - s Es(mu_o)) (1 - c Rc(mu_o)): what the sheen and the coat pass down to the base
  float sheenPass;  // 1 - s Es(mu_o): what the sheen passes down to the coat
  float pCoat, pSheen, pSpec;
};
TRACER_HD PrincipledAt PrincipledAtDir(const SurfaceBsdf& b, Vec3 wo) {
  PrincipledAt p;
  GgxAlbedo avg;
  const GgxAlbedo e = BaseAlbedoAt(b, wo, avg);
  const float m = b.metallic;
  const SurfaceBsdf metal = MetalOf(b);
  const GlossyLayer l = GlossyLayerFrom(b, avg), lm = GlossyLayerFrom(metal, avg);
  const GlossyAt o = GlossyAtFrom(b, l, e), om = GlossyAtFrom(metal, lm, e);
  p.fms = l.fms;
  p.fmsMix = l.fms * (1.0f - m) + lm.fms * m;
  p.diffuse = b.kd * (1.0f - m) * (Vec3(1.0f) - o.es) * kInvPi / Max(Vec3(1.0f) - l.esAvg, Vec3(1e-6f));
  p.msScale = o.oneMinusE * kInvPi / l.oneMinusEavg;
  const Float4 t = TableRowAt(b.coatTable, wo.z);
  p.coatRc = t.x;
  const float sheen = b.sheen * t.y, coat = b.coatWeight * t.x;
  p.sheenPass = 1.0f - sheen;
  p.pass = p.sheenPass * (1.0f - coat);
  // The base's albedo at wo, and the part of it the single-scattering lobe returns.
  const float single = Luminance(o.ess * (1.0f - m) + om.ess * m);
  const float all = Luminance((o.es + b.kd * (Vec3(1.0f) - o.es)) * (1.0f - m) + om.es * m);
  p.pSpec = all > 0.0f ? Fminf(single / all, 1.0f) : 1.0f;
  const float total = sheen + p.sheenPass * coat + p.pass * all;
  p.pCoat = total > 0.0f ? p.sheenPass * coat / total : 0.0f;
  p.pSheen = total > 0.0f ? sheen / total : 0.0f;
  return p;
}
// The base's single-scattering lobe: Schlick's F of the mixed f0 and f90, anisotropic D and the separable G1 G1 its
// albedos were made with.
TRACER_HD Vec3 PrincipledSpecular(const SurfaceBsdf& b, Vec3 wo, Vec3 wi, Vec3 h) {
  const GgxAlphas a = BaseAlphas(b);
  const float m = b.metallic;
  return SchlickFresnel(b.ks * (1.0f - m) + b.kd * m, b.f90 * (1.0f - m) + m, Dot(wo, h)) *
         (GgxAnisoD(h, a) * GgxAnisoG1(wo, a) * GgxAnisoG1(wi, a) / (4.0f * wo.z * wi.z));
}
// The non-delta part (a smooth coat's mirror reflection is PrincipledSample's alone), given the layers at wo and the
// half vector h of wo and wi (both above the surface).
TRACER_HD Vec3 PrincipledEvalAt(const SurfaceBsdf& b, const PrincipledAt& p, Vec3 wo, Vec3 wi, Vec3 h) {
  // The base at wi: the dielectric layer's Es(wi) (glossy_layer.h's GlossyAtFrom) and 1 - E(wi).
  GgxAlbedo avgI;
  const GgxAlbedo e = BaseAlbedoAt(b, wi, avgI);
  const float oneMinusE = Fmaxf(1.0f - e.e, 0.0f);
  const Vec3 es = b.ks * (e.e - e.e5) + Vec3(b.f90 * e.e5) + p.fms * oneMinusE;
  const Vec3 base =
      PrincipledSpecular(b, wo, wi, h) + p.fmsMix * (p.msScale * oneMinusE) + p.diffuse * (Vec3(1.0f) - es);
  Vec3 f = base * p.pass;
  if (b.coatWeight > 0.0f && !CoatIsSmooth(b))
    f += Vec3(p.sheenPass * b.coatWeight * FresnelDielectric(Dot(wo, h), kPrincipledCoatEta) *
              GgxReflectionNoFresnel(wo, wi, h, CoatAlphas(b)));
  if (b.sheen > 0.0f) f += Vec3(b.sheen * SheenEval(wo, wi, h));
  return f;
}
TRACER_HD float PrincipledPdfAt(const SurfaceBsdf& b, const PrincipledAt& p, Vec3 wo, Vec3 wi, Vec3 h) {
  const float cosine = CosineHemispherePdf(wi.z);
  const float pBase = Fmaxf(1.0f - p.pCoat - p.pSheen, 0.0f);
  float pdf = pBase * (p.pSpec * GgxReflectionPdf(wo, h, BaseAlphas(b)) + (1.0f - p.pSpec) * cosine);
  pdf += p.pSheen * cosine;
  if (p.pCoat > 0.0f && !CoatIsSmooth(b)) pdf += p.pCoat * GgxReflectionPdf(wo, h, CoatAlphas(b));
  return pdf;
}
TRACER_HD Vec3 PrincipledEval(const SurfaceBsdf& b, Vec3 wo, Vec3 wi) {
  Vec3 h;
  if (!HalfVector(wo, wi, h)) return Vec3(0.0f);
  return PrincipledEvalAt(b, PrincipledAtDir(b, wo), wo, wi, h);
}
TRACER_HD float PrincipledPdf(const SurfaceBsdf& b, Vec3 wo, Vec3 wi) {
  Vec3 h;
  if (!HalfVector(wo, wi, h)) return 0.0f;
  return PrincipledPdfAt(b, PrincipledAtDir(b, wo), wo, wi, h);
}
// uLobe picks the coat, the sheen (by the cosine) or the base (then, rescaled, its specular lobe or the cosine).
TRACER_HD BsdfSample PrincipledSample(const SurfaceBsdf& b, Vec3 wo, float uLobe, float u1, float u2) {
  if (!(wo.z > 0.0f)) return NoSample();
  const PrincipledAt p = PrincipledAtDir(b, wo);
  BsdfSample s = NoSample();
  if (uLobe < p.pCoat) {
    if (CoatIsSmooth(b)) return DeltaSample(MirrorOf(wo), Vec3(p.sheenPass * b.coatWeight * p.coatRc / wo.z), p.pCoat);
    s.wi = ReflectAbout(wo, SampleGgxVisibleNormal(wo, CoatAlphas(b), u1, u2));
  } else if (uLobe < p.pCoat + p.pSheen) {
    s.wi = SampleCosineHemisphere(u1, u2);
  } else {
    const float pBase = 1.0f - p.pCoat - p.pSheen;
    const float u = pBase > 0.0f ? (uLobe - p.pCoat - p.pSheen) / pBase : 0.0f;
    s.wi = u < p.pSpec ? ReflectAbout(wo, SampleGgxVisibleNormal(wo, BaseAlphas(b), u1, u2))
                       : SampleCosineHemisphere(u1, u2);
  }
  Vec3 h;
  if (!HalfVector(wo, s.wi, h)) return s;
  s.f = PrincipledEvalAt(b, p, wo, s.wi, h);
  s.pdf = PrincipledPdfAt(b, p, wo, s.wi, h);
  s.valid = s.pdf > 0.0f;
  return s;
}

// ---- the table's numbers (host code: the loader, once per material) -----------------------------------------------
// The sheen's albedo at mu: int f_sheen cos dwi by the midpoint rule in (cos theta_i, phi), n x 2n over the half of
// the hemisphere on one side of wo's plane (f is symmetric about it).
inline double SheenAlbedo(float mu, int n) {
  const float c = Fmaxf(mu, 1e-4f);
  const Vec3 wo(SafeSqrt(1.0f - c * c), 0.0f, c);
  double sum = 0.0;
  for (int i = 0; i < n; ++i) {
    const float ci = (static_cast<float>(i) + 0.5f) / static_cast<float>(n), si = SafeSqrt(1.0f - ci * ci);
    for (int j = 0; j < 2 * n; ++j) {
      const float phi = kPi * (static_cast<float>(j) + 0.5f) / static_cast<float>(2 * n);
      const Vec3 wi(si * cosf(phi), si * sinf(phi), ci);
      Vec3 h;
      if (HalfVector(wo, wi, h)) sum += double(SheenEval(wo, wi, h)) * ci;
    }
  }
  return sum * 2.0 * kPi / (double(n) * 2.0 * n);  // (d cos) (d phi) = (1 / n) (pi / 2n), twice for the other side
}
// An anisotropic GGX lobe's (E, E5) at cos theta mu and cos^2(phi) u: as host/ggx_albedo.cpp tabulates them for the
// isotropic one, with h from wo's visible normals (weight G1(wi)) on an n x n midpoint grid.
inline GgxAlbedo AnisotropicGgxAlbedo(float mu, float u, GgxAlphas a, int n) {
  const float c = Fmaxf(mu, 1e-4f), s = SafeSqrt(1.0f - c * c);
  const Vec3 wo(s * SafeSqrt(u), s * SafeSqrt(1.0f - u), c);
  double sum = 0.0, sum5 = 0.0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const Vec3 h = SampleGgxVisibleNormal(wo, a, (i + 0.5f) / n, (j + 0.5f) / n);
      const float oh = Dot(wo, h);
      if (oh <= 0.0f) continue;
      const Vec3 wi = ReflectAbout(wo, h);
      if (wi.z <= 0.0f) continue;
      const double w = GgxAnisoG1(wi, a);
      sum += w;
      sum5 += w * SchlickWeight(oh);
    }
  const double e = std::min(1.0, sum / (double(n) * n));
  return {static_cast<float>(e), static_cast<float>(std::min(e, sum5 / (double(n) * n)))};
}
// Texels of a material's table: rows times kPrincipledTableRes.
inline int PrincipledTableRows(int baseRows) { return 1 + baseRows * kBaseTableAzimuths; }
// Fills the table (row 0 always; baseRows roughness rows of an anisotropic base, at `alpha` when one, else at
// r = i / (baseRows - 1)). The averages integrate the table as BaseTableAt reads it (midpoint, 512 cosines by 64
// azimuths), so that the base's coupling (glossy_layer.h) conserves what the renderer's E says.
inline void FillPrincipledTable(float coatAlpha, float alpha, float aspect, int baseRows, Float4* table) {
  const int res = kPrincipledTableRes;
  for (int j = 0; j < res; ++j) {
    const float mu = Sqr(static_cast<float>(j) / static_cast<float>(res - 1));
    const float rc =
        static_cast<float>(CoatInterfaceAlbedo(mu, kPrincipledCoatEta, GgxAlphas{coatAlpha, coatAlpha}, 64).reflected);
    table[j] = Float4{rc, static_cast<float>(SheenAlbedo(mu, 128)), 0.0f, 0.0f};
  }
  for (int i = 0; i < baseRows; ++i) {
    const float rowAlpha = baseRows == 1 ? alpha : Sqr(static_cast<float>(i) / static_cast<float>(baseRows - 1));
    const GgxAlphas a = PrincipledAlphas(rowAlpha, aspect);
    for (int k = 0; k < kBaseTableAzimuths; ++k)
      for (int j = 0; j < res; ++j) {
        const float mu = Sqr(static_cast<float>(j) / static_cast<float>(res - 1));
        const float t = static_cast<float>(k) / (kBaseTableAzimuths - 1);
        const GgxAlbedo e = AnisotropicGgxAlbedo(mu, BaseTableCos2Phi(t, a), a, 48);
        table[(1 + i * kBaseTableAzimuths + k) * res + j] = Float4{e.e, e.e5, 0.0f, 0.0f};
      }
    double avg = 0.0, avg5 = 0.0;
    const int nm = 512, np = 64;
    for (int m = 0; m < nm; ++m) {
      const float mu = (static_cast<float>(m) + 0.5f) / nm;
      for (int q = 0; q < np; ++q) {
        const float phi = 0.5f * kPi * (static_cast<float>(q) + 0.5f) / np;
        const float sn = SafeSqrt(1.0f - mu * mu);
        const Float4 t =
            BaseTableAt(table + i * kBaseTableAzimuths * res, 1, 0.0f, Vec3(sn * cosf(phi), sn * sinf(phi), mu), a);
        avg += 2.0 * mu * t.x / (double(nm) * np);
        avg5 += 2.0 * mu * t.y / (double(nm) * np);
      }
    }
    for (int k = 0; k < kBaseTableAzimuths * res; ++k) {
      Float4& t = table[(1 + i * kBaseTableAzimuths) * res + k];
      t.z = static_cast<float>(avg);
      t.w = static_cast<float>(avg5);
    }
  }
}

}  // namespace tracer
