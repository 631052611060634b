// @file lobes.h: the BSDFs of pbrt-v4's materials that the classes' own do not cover (SurfaceBsdf::lobe, bsdf.h):
// the conductor with the exact Fresnel, the rough and the thin dielectric, the coated diffuse and the diffuse
// transmitter. material.h's BsdfEval, BsdfPdf and BsdfSampleDir dispatch here.
//
// Directions are local, as in material.h. The GGX lobes are anisotropic (alpha along the frame's s axis, alphaY along
// t), use the height-correlated masking-shadowing and are sampled by their visible normals (microfacet.h), as
// pbrt-v4's are; none adds multiple scattering, which pbrt-v4 does not have either.
#pragma once
#include <algorithm>
#include <cmath>

#include "tracer/core/bsdf.h"
#include "tracer/core/ggx_albedo_lookup.h"
#include "tracer/core/microfacet.h"
#include "tracer/core/sampling.h"

namespace tracer {

TRACER_HD GgxAlphas AlphasOf(const SurfaceBsdf& b) { return {b.alpha, b.alphaY}; }
TRACER_HD bool IsSmooth(const SurfaceBsdf& b) { return Fmaxf(b.alpha, b.alphaY) <= kSmoothAlpha; }

TRACER_HD BsdfSample NoSample() {
  BsdfSample s;
  s.wi = Vec3(0.0f, 0.0f, 1.0f);
  s.f = Vec3(0.0f);
  s.pdf = 0.0f;
  s.delta = false;
  s.valid = false;
  return s;
}
TRACER_HD BsdfSample DeltaSample(Vec3 wi, Vec3 f, float pdf) {
  BsdfSample s;
  s.wi = wi;
  s.f = f;
  s.pdf = pdf;
  s.delta = true;
  s.valid = pdf > 0.0f;
  return s;
}
TRACER_HD Vec3 MirrorOf(Vec3 w) { return Vec3(-w.x, -w.y, w.z); }
TRACER_HD Vec3 ReflectAbout(Vec3 w, Vec3 h) { return h * (2.0f * Dot(w, h)) - w; }
// w refracted through the facet of normal h by Snell's law, from w's side (eta: the inside's index over the
// outside's, +z outside); false under total internal reflection.
TRACER_HD bool RefractAbout(Vec3 w, Vec3 h, float eta, Vec3& t) {
  float c = Dot(w, h);
  if (c < 0.0f) {
    eta = 1.0f / eta;
    c = -c;
    h = -h;
  }
  const float sin2T = (1.0f - c * c) / (eta * eta);
  if (sin2T >= 1.0f) return false;
  t = -w / eta + h * (c / eta - SafeSqrt(1.0f - sin2T));
  return true;
}

// ---- GGX reflection (the conductor, and the coat's surface) ---------------------------------------------------------
// f = F D(h) G2(wo, wi) / (4 cos_o cos_i) without F, and its pdf when h is drawn from wo's visible normals:
// D_wo(h) / (4 wo.h) (the reflection's Jacobian, Walter et al. 2007, eq. 14).
TRACER_HD float GgxReflectionNoFresnel(Vec3 wo, Vec3 wi, Vec3 h, GgxAlphas a) {
  return GgxAnisoD(h, a) * GgxAnisoG2(wo, wi, a) / (4.0f * wo.z * wi.z);
}
TRACER_HD float GgxReflectionPdf(Vec3 wo, Vec3 h, GgxAlphas a) {
  const float oh = Dot(wo, h);
  return oh > 0.0f ? GgxVisibleNormalPdf(wo, h, a) / (4.0f * oh) : 0.0f;
}
// The half vector of two directions above the surface, or false when they cancel.
TRACER_HD bool HalfVector(Vec3 wo, Vec3 wi, Vec3& h) {
  if (!(wo.z > 0.0f) || !(wi.z > 0.0f)) return false;
  h = wo + wi;
  const float len = Length(h);
  if (!(len > 0.0f)) return false;
  h = h / len;
  return true;
}

// ---- conductor (glossy class: rough; mirror class: smooth)
// ------------------------------------------------------------ pbrt-v4's ConductorBxDF: f = F(wo.h) D G2 / (4 cos_o
// cos_i) with F the exact conductor Fresnel per channel (eta = kd, k = b.k); a smooth one reflects F(cos) in the mirror
// direction.
TRACER_HD Vec3 ConductorEval(const SurfaceBsdf& b, Vec3 wo, Vec3 wi) {
  Vec3 h;
  if (!HalfVector(wo, wi, h)) return Vec3(0.0f);
  return FresnelConductor(Dot(wo, h), b.kd, b.k) * GgxReflectionNoFresnel(wo, wi, h, AlphasOf(b));
}
TRACER_HD float ConductorPdf(const SurfaceBsdf& b, Vec3 wo, Vec3 wi) {
  Vec3 h;
  return HalfVector(wo, wi, h) ? GgxReflectionPdf(wo, h, AlphasOf(b)) : 0.0f;
}
TRACER_HD BsdfSample ConductorSample(const SurfaceBsdf& b, Vec3 wo, float u1, float u2) {
  if (!(wo.z > 0.0f)) return NoSample();
  if (b.cls == kMirror) return DeltaSample(MirrorOf(wo), FresnelConductor(wo.z, b.kd, b.k) / wo.z, 1.0f);
  BsdfSample s = NoSample();
  s.wi = ReflectAbout(wo, SampleGgxVisibleNormal(wo, AlphasOf(b), u1, u2));
  if (!(s.wi.z > 0.0f)) return s;
  s.f = ConductorEval(b, wo, s.wi);
  s.pdf = ConductorPdf(b, wo, s.wi);
  s.valid = s.pdf > 0.0f;
  return s;
}

// ---- coated diffuse (glossy class) ----------------------------------------------------------------------------------
// A dielectric coat of index eta (a GGX surface, or a smooth one), an absorbing layer of optical thickness tau under it
// and a Lambertian base of albedo rho: the model of Kelemen and Szirmay-Kalos 2001 and Weidlich and Wilkie 2007, with
// the layer's inter-reflections summed in closed form. Writing mu for a cosine outside, mu_t for its refracted
// cosine, Rc(mu) for the coat's directional reflectance, T(mu) = 1 - Rc(mu) and A(mu) = exp(-tau / mu_t):
//   f = f_coat + T(mu_o) A(mu_o) T(mu_i) A(mu_i) rho S(rho r) / (pi eta^2)
// f_coat is pbrt-v4's rough dielectric reflection F(wo.h) D G2 / (4 cos_o cos_i), exact Fresnel (a delta lobe
// F(mu_o) when smooth), and Rc its albedo; T is what the coat transmits (1 - Rc when smooth; a rough coat also loses
// some, CoatInterfaceAlbedo). Light crosses the coat and the layer into the base, whose diffuse light
// leaves through them; 1 / eta^2 spreads its radiance over the wider outside solid angle. Of that diffuse light, a
// part r goes back down to the base each trip (total internal reflection and the coat's reflectance, twice
// absorbed), so the base's reflections sum to S(x) = 1 + x + x^2 + ... = 1 / (1 - x), x = rho r, or to the first N
// terms, (1 - x^N) / (1 - x), where pbrt-v4's random walk stops (N = CoatLayer::bounces). By reciprocity
// e = (1 / eta^2) int 2 mu T A dmu is the part that leaves per trip, and for a smooth coat with tau = 0, r + e = 1: a
// white base under a clear coat reflects everything, Rc(mu) + T(mu) rho e / (1 - rho r) = 1 at rho = 1.
// Rc and T A per material are a table (the loader fills it, FillCoatTable, as a one-row texture; SurfaceBsdf::coatTable
// points at it): for a rough coat they are integrals over its lobes that no closed form gives (Schlick-weighted GGX
// tables with a Fresnel correction were up to 5% off at grazing, measured, and then white surfaces gained energy).
constexpr int kCoatTableRes = 32;  // texels at sqrt(mu) = i / (kCoatTableRes - 1): (Rc, T A, 0, 0)
struct CoatAt {
  float rc, ta;
};
TRACER_HD Float4 LerpF4(Float4 a, Float4 b, float t) {
  return {a.x + t * (b.x - a.x), a.y + t * (b.y - a.y), a.z + t * (b.z - a.z), a.w + t * (b.w - a.w)};
}
// A table row of kCoatTableRes texels at sqrt(mu) = i / (kCoatTableRes - 1), read at mu (linear in sqrt(mu)); the
// principled lobe's tables (principled.h) have rows of the same kind.
TRACER_HD Float4 TableRowAt(const Float4* row, float mu) {
  const float x = SafeSqrt(Clamp(mu, 0.0f, 1.0f)) * static_cast<float>(kCoatTableRes - 1);
  int i = static_cast<int>(x);
  i = i > kCoatTableRes - 2 ? kCoatTableRes - 2 : i;
  return LerpF4(row[i], row[i + 1], x - static_cast<float>(i));
}
TRACER_HD CoatAt CoatTableAt(const Float4* table, float mu) {
  const Float4 t = TableRowAt(table, mu);
  return {t.x, t.y};
}
TRACER_HD float RefractedCos(float mu, float eta) { return SafeSqrt(1.0f - (1.0f - mu * mu) / (eta * eta)); }
// S(x): the base's reflections summed, all of them (n = 0) or the first n.
TRACER_HD float CoatBounceSum(float x, int32_t n) {
  if (n <= 0) return 1.0f / Fmaxf(1.0f - x, 1e-6f);
  return 1.0f - x < 1e-6f ? static_cast<float>(n) : (1.0f - powf(x, static_cast<float>(n))) / (1.0f - x);
}
// rho S(rho r) / (pi eta^2), per channel.
TRACER_HD Vec3 CoatedBaseScale(const SurfaceBsdf& b) {
  const Vec3 rho = b.kd;
  const float r = b.coat.internal;
  const int32_t n = b.coat.bounces;
  const Vec3 s(rho.x * CoatBounceSum(rho.x * r, n), rho.y * CoatBounceSum(rho.y * r, n),
               rho.z * CoatBounceSum(rho.z * r, n));
  return s * (kInvPi / (b.ior * b.ior));
}
// What the coated surface does at wo: the coat's reflectance and T A there, and the probability of sampling the coat
// (the rest samples the base by the cosine), in proportion to the two albedos, Rc and T A rho S e.
struct CoatedAt {
  CoatAt at;
  Vec3 base;  // CoatedBaseScale
  float pCoat;
};
TRACER_HD CoatedAt CoatedAtDir(const SurfaceBsdf& b, float mu) {
  CoatedAt c;
  c.at = CoatTableAt(b.coatTable, mu);
  c.base = CoatedBaseScale(b);
  const float baseAlbedo = Luminance(c.base) * kPi * b.ior * b.ior * c.at.ta * b.coat.escape;
  c.pCoat = c.at.rc + baseAlbedo > 0.0f ? c.at.rc / (c.at.rc + baseAlbedo) : 1.0f;
  return c;
}
// The non-delta part: the base, and the coat when rough.
TRACER_HD Vec3 CoatedEval(const SurfaceBsdf& b, Vec3 wo, Vec3 wi) {
  Vec3 h;
  if (!HalfVector(wo, wi, h)) return Vec3(0.0f);
  const CoatedAt o = CoatedAtDir(b, wo.z);
  Vec3 f = o.base * (o.at.ta * CoatTableAt(b.coatTable, wi.z).ta);
  if (!IsSmooth(b)) f += Vec3(FresnelDielectric(Dot(wo, h), b.ior) * GgxReflectionNoFresnel(wo, wi, h, AlphasOf(b)));
  return f;
}
TRACER_HD float CoatedPdf(const SurfaceBsdf& b, Vec3 wo, Vec3 wi) {
  Vec3 h;
  if (!HalfVector(wo, wi, h)) return 0.0f;
  const float p = CoatedAtDir(b, wo.z).pCoat;
  const float base = (1.0f - p) * CosineHemispherePdf(wi.z);
  return IsSmooth(b) ? base : base + p * GgxReflectionPdf(wo, h, AlphasOf(b));
}
TRACER_HD BsdfSample CoatedSample(const SurfaceBsdf& b, Vec3 wo, float uLobe, float u1, float u2) {
  if (!(wo.z > 0.0f)) return NoSample();
  const CoatedAt o = CoatedAtDir(b, wo.z);
  const bool coat = uLobe < o.pCoat;
  if (coat && IsSmooth(b)) return DeltaSample(MirrorOf(wo), Vec3(o.at.rc / wo.z), o.pCoat);
  BsdfSample s = NoSample();
  s.wi = coat ? ReflectAbout(wo, SampleGgxVisibleNormal(wo, AlphasOf(b), u1, u2)) : SampleCosineHemisphere(u1, u2);
  if (!(s.wi.z > 0.0f)) return s;
  s.f = CoatedEval(b, wo, s.wi);
  s.pdf = CoatedPdf(b, wo, s.wi);
  s.valid = s.pdf > 0.0f;
  return s;
}

// ---- the coat's table and layer (host code: the loader, once per material) --------------------------------------
// What the coat's interface (pbrt-v4's dielectric: exact Fresnel, GGX with G2, no multiple scattering) reflects and
// transmits of the energy arriving from w, on either side: a smooth one the Fresnel reflectance and the rest; a rough
// one loses some (shadowed facets, directions sent under the surface), as pbrt-v4's does at every crossing of its
// random walk. By an n x n midpoint grid over the visible-normal sampler's square: with h drawn from w's visible
// normals each reflection or refraction carries F G2 / G1(w) or (1 - F) G2 / G1(w) of the energy (the lobes' f |cos|
// / pdf, lobes.h, without the radiance factor); an anisotropic interface is averaged over 8 azimuths of w.
struct InterfaceAlbedo {
  double reflected, transmitted;
};
inline InterfaceAlbedo CoatInterfaceAlbedo(float cosine, float eta, GgxAlphas a, int n) {
  const float c = Clamp(cosine, -1.0f, 1.0f);
  if (Fmaxf(a.x, a.y) <= kSmoothAlpha) {
    const double f = FresnelDielectricSigned(c, eta);
    return {f, 1.0 - f};
  }
  const int azimuths = a.x == a.y ? 1 : 8;
  const float s = SafeSqrt(1.0f - c * c), z = c < 0.0f ? Fminf(c, -1e-4f) : Fmaxf(c, 1e-4f);
  InterfaceAlbedo sum{0.0, 0.0};
  for (int k = 0; k < azimuths; ++k) {
    const float phi = kPi * static_cast<float>(k) / static_cast<float>(azimuths);
    const Vec3 w(s * cosf(phi), s * sinf(phi), z);
    const float g1 = GgxAnisoG1(w, a);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const Vec3 h = SampleGgxVisibleNormal(w, a, (i + 0.5f) / n, (j + 0.5f) / n);
        const float f = FresnelDielectricSigned(Dot(w, h), eta);
        const Vec3 r = ReflectAbout(w, h);
        if (r.z * w.z > 0.0f) sum.reflected += f * GgxAnisoG2(w, r, a) / g1;
        Vec3 t;
        if (RefractAbout(w, h, eta, t) && t.z * w.z < 0.0f) sum.transmitted += (1.0f - f) * GgxAnisoG2(w, t, a) / g1;
      }
  }
  const double count = double(n) * n * azimuths;
  return {sum.reflected / count, sum.transmitted / count};
}
// The table SurfaceBsdf::coatTable points at: kCoatTableRes texels of (Rc, T A) at outside cosines mu, T what the
// interface transmits into the layer and A = exp(-tau / mu_t), mu_t Snell's refracted cosine.
inline void FillCoatTable(float eta, GgxAlphas a, float tau, Float4* table) {
  for (int i = 0; i < kCoatTableRes; ++i) {
    const float mu = Sqr(static_cast<float>(i) / static_cast<float>(kCoatTableRes - 1));
    const InterfaceAlbedo at = CoatInterfaceAlbedo(mu, eta, a, 64);
    const float absorbed = tau > 0.0f ? expf(-tau / Fmaxf(RefractedCos(mu, eta), 1e-6f)) : 1.0f;
    table[i] = Float4{static_cast<float>(at.reflected), static_cast<float>(at.transmitted) * absorbed, 0.0f, 0.0f};
  }
}
// The layer's internal and escape parts. Diffuse light inside meets the coat at inside cosines m (density 2 m dm);
// the interface sends a part R(m) back (all of it beyond the critical angle of a smooth coat), which crosses the
// layer twice, exp(-2 tau / m). What leaves towards an outside mu is, by reciprocity, the table's T A at mu over
// eta^2 (m dm = mu dmu / eta^2). So
//   internal = int_0^1 2 m R(m) exp(-2 tau / m) dm,   escape = (1 / eta^2) int_0^1 2 mu T(mu) A(mu) dmu,
// by the midpoint rule (escape in 4096 steps over the table, so that it agrees with the renderer's T A; internal in
// 4096 steps for a smooth coat, 256 for a rough one, whose R(m) takes a 32 x 32 grid each). A smooth coat over a
// clear layer has internal + escape = 1 within 1e-4.
inline CoatLayer CoatedLayerOf(float eta, GgxAlphas a, float tau, int32_t bounces, const Float4* table) {
  CoatLayer c;
  c.tau = tau;
  c.bounces = bounces;
  const bool smooth = Fmaxf(a.x, a.y) <= kSmoothAlpha;
  const int nm = smooth ? 4096 : 256, n = 4096;
  double internal = 0.0, escape = 0.0;
  for (int i = 0; i < nm; ++i) {
    const double m = (i + 0.5) / nm;
    const double r = CoatInterfaceAlbedo(-static_cast<float>(m), eta, a, 32).reflected;
    internal += 2.0 * m * r * (tau > 0.0f ? std::exp(-2.0 * tau / m) : 1.0) / nm;
  }
  for (int i = 0; i < n; ++i) {
    const float mu = (static_cast<float>(i) + 0.5f) / static_cast<float>(n);
    escape += 2.0 * mu * CoatTableAt(table, mu).ta / (double(eta) * eta * n);
  }
  c.internal = static_cast<float>(internal);
  c.escape = static_cast<float>(escape);
  return c;
}

// ---- rough dielectric (dielectric class) ----------------------------------------------------------------------------
// Walter et al. 2007, "Microfacet Models for Refraction through Rough Surfaces", as pbrt-v4's DielectricBxDF: eta =
// b.ior is the inside's index over the outside's (+z is outside), wo may be on either side. With eta' = 1 for
// reflection and the index ratio across the surface for transmission, the generalised half vector is
// h = +-normalize(wo + eta' wi) (turned up); facets that face away from wo or wi are discarded. With F = F(wo.h):
//   reflection    f = F D(h) G2 / |4 cos_o cos_i|
//   transmission  f = (1 - F) D(h) G2 |wi.h wo.h| / (|cos_o cos_i| (wi.h + wo.h / eta')^2) / eta'^2
// (the 1 / eta'^2 carries radiance across the interface, Veach 1997, ch. 5), times the tint kd. Sampling draws h from
// wo's visible normals and reflects with probability F, else refracts.
struct DielectricHalf {
  Vec3 h;
  float etap;
  bool reflect, ok;
};
TRACER_HD DielectricHalf DielectricHalfOf(const SurfaceBsdf& b, Vec3 wo, Vec3 wi) {
  DielectricHalf d;
  d.ok = false;
  d.reflect = wo.z * wi.z > 0.0f;
  d.etap = d.reflect ? 1.0f : (wo.z > 0.0f ? b.ior : 1.0f / b.ior);
  if (wo.z == 0.0f || wi.z == 0.0f) return d;
  d.h = wi * d.etap + wo;
  const float len = Length(d.h);
  if (!(len > 0.0f)) return d;
  d.h = d.h / len;
  if (d.h.z < 0.0f) d.h = -d.h;
  d.ok = !(Dot(d.h, wi) * wi.z < 0.0f || Dot(d.h, wo) * wo.z < 0.0f);
  return d;
}
TRACER_HD Vec3 RoughDielectricEval(const SurfaceBsdf& b, Vec3 wo, Vec3 wi) {
  const DielectricHalf d = DielectricHalfOf(b, wo, wi);
  if (!d.ok) return Vec3(0.0f);
  const GgxAlphas a = AlphasOf(b);
  const float f = FresnelDielectricSigned(Dot(wo, d.h), b.ior);
  const float dg = GgxAnisoD(d.h, a) * GgxAnisoG2(wo, wi, a);
  if (d.reflect) return Vec3(f * dg / fabsf(4.0f * wo.z * wi.z));
  const float oh = Dot(wo, d.h), ih = Dot(wi, d.h);
  const float denom = Sqr(ih + oh / d.etap) * wo.z * wi.z;
  return b.kd * ((1.0f - f) * dg * fabsf(ih * oh / denom) / (d.etap * d.etap));
}
TRACER_HD float RoughDielectricPdf(const SurfaceBsdf& b, Vec3 wo, Vec3 wi) {
  const DielectricHalf d = DielectricHalfOf(b, wo, wi);
  if (!d.ok) return 0.0f;
  const float oh = Dot(wo, d.h), ih = Dot(wi, d.h);
  const float r = FresnelDielectricSigned(oh, b.ior);
  const float pdfH = GgxVisibleNormalPdf(wo, d.h, AlphasOf(b));
  if (d.reflect) return r * pdfH / (4.0f * fabsf(oh));
  return (1.0f - r) * pdfH * fabsf(ih) / Sqr(ih + oh / d.etap);
}
TRACER_HD BsdfSample RoughDielectricSample(const SurfaceBsdf& b, Vec3 wo, float uLobe, float u1, float u2) {
  BsdfSample s = NoSample();
  if (wo.z == 0.0f) return s;
  const Vec3 h = SampleGgxVisibleNormal(wo, AlphasOf(b), u1, u2);
  const bool reflect = uLobe < FresnelDielectricSigned(Dot(wo, h), b.ior);
  if (reflect)
    s.wi = ReflectAbout(wo, h);
  else if (!RefractAbout(wo, h, b.ior, s.wi))
    return s;
  // A reflection that leaves under the surface, or a refraction that stays on wo's side, has no path.
  if (SameHemisphere(wo, s.wi) != reflect || s.wi.z == 0.0f) return s;
  s.f = RoughDielectricEval(b, wo, s.wi);
  s.pdf = RoughDielectricPdf(b, wo, s.wi);
  s.valid = s.pdf > 0.0f && IsFinite(s.f);
  return s;
}

// ---- thin dielectric (dielectric class) -----------------------------------------------------------------------------
// pbrt-v4's ThinDielectricBxDF: a slab whose two faces are parallel and close, so light leaves it undeflected. With R
// one face's Fresnel reflectance and T = 1 - R, the inter-reflections sum to R' = R + T^2 R / (1 - R^2) and T' = 1 - R'
// (T' = T^2 / (1 - R^2)); it reflects R' in the mirror direction and transmits T' (times the tint kd) along -wo.
TRACER_HD BsdfSample ThinDielectricSample(const SurfaceBsdf& b, Vec3 wo, float uLobe) {
  const float c = fabsf(wo.z);
  if (!(c > 0.0f)) return NoSample();
  float r = FresnelDielectric(c, b.ior);
  if (r < 1.0f) r += Sqr(1.0f - r) * r / (1.0f - r * r);
  if (uLobe < r) return DeltaSample(MirrorOf(wo), Vec3(r / c), r);
  return DeltaSample(-wo, b.kd * ((1.0f - r) / c), 1.0f - r);
}

// ---- diffuse transmission (diffuse class) ---------------------------------------------------------------------------
// pbrt-v4's DiffuseTransmissionBxDF: kd / pi on wo's side, ks / pi on the other; a side is sampled in proportion to
// the largest channel of its colour, then the cosine.
TRACER_HD float DiffuseReflectChance(const SurfaceBsdf& b) {
  const float pr = MaxComponent(b.kd), pt = MaxComponent(b.ks);
  return pr + pt > 0.0f ? pr / (pr + pt) : -1.0f;
}
TRACER_HD Vec3 DiffuseTransmissionEval(const SurfaceBsdf& b, Vec3 wo, Vec3 wi) {
  if (wo.z == 0.0f || wi.z == 0.0f) return Vec3(0.0f);
  return (SameHemisphere(wo, wi) ? b.kd : b.ks) * kInvPi;
}
TRACER_HD float DiffuseTransmissionPdf(const SurfaceBsdf& b, Vec3 wo, Vec3 wi) {
  const float pr = DiffuseReflectChance(b);
  if (pr < 0.0f || wo.z == 0.0f || wi.z == 0.0f) return 0.0f;
  return (SameHemisphere(wo, wi) ? pr : 1.0f - pr) * AbsCosTheta(wi) * kInvPi;
}
TRACER_HD BsdfSample DiffuseTransmissionSample(const SurfaceBsdf& b, Vec3 wo, float uLobe, float u1, float u2) {
  BsdfSample s = NoSample();
  const float pr = DiffuseReflectChance(b);
  if (pr < 0.0f || wo.z == 0.0f) return s;
  s.wi = SampleCosineHemisphere(u1, u2);
  if ((uLobe < pr) != (wo.z > 0.0f)) s.wi.z = -s.wi.z;
  s.f = DiffuseTransmissionEval(b, wo, s.wi);
  s.pdf = DiffuseTransmissionPdf(b, wo, s.wi);
  s.valid = s.pdf > 0.0f;
  return s;
}

// ---- dispatch (material.h calls these for b.lobe != kLobeClass) -----------------------------------------------------
TRACER_HD Vec3 LobeEval(const SurfaceBsdf& b, Vec3 wo, Vec3 wi) {
  switch (b.lobe) {
    case kLobeConductor:
      return b.cls == kMirror ? Vec3(0.0f) : ConductorEval(b, wo, wi);
    case kLobeCoated:
      return CoatedEval(b, wo, wi);
    case kLobeRoughDielectric:
      return RoughDielectricEval(b, wo, wi);
    case kLobeDiffuseTransmission:
      return DiffuseTransmissionEval(b, wo, wi);
    default:
      return Vec3(0.0f);  // delta lobes
  }
}
TRACER_HD float LobePdf(const SurfaceBsdf& b, Vec3 wo, Vec3 wi) {
  switch (b.lobe) {
    case kLobeConductor:
      return b.cls == kMirror ? 0.0f : ConductorPdf(b, wo, wi);
    case kLobeCoated:
      return CoatedPdf(b, wo, wi);
    case kLobeRoughDielectric:
      return RoughDielectricPdf(b, wo, wi);
    case kLobeDiffuseTransmission:
      return DiffuseTransmissionPdf(b, wo, wi);
    default:
      return 0.0f;
  }
}
TRACER_HD BsdfSample LobeSample(const SurfaceBsdf& b, Vec3 wo, float uLobe, float u1, float u2) {
  switch (b.lobe) {
    case kLobeConductor:
      return ConductorSample(b, wo, u1, u2);
    case kLobeCoated:
      return CoatedSample(b, wo, uLobe, u1, u2);
    case kLobeRoughDielectric:
      return RoughDielectricSample(b, wo, uLobe, u1, u2);
    case kLobeThinDielectric:
      return ThinDielectricSample(b, wo, uLobe);
    case kLobeDiffuseTransmission:
      return DiffuseTransmissionSample(b, wo, uLobe, u1, u2);
    default:
      return NoSample();
  }
}

}  // namespace tracer
