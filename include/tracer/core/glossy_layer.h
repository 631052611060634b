// @file glossy_layer.h: the glossy class's GGX specular layer over a Lambertian base, coupled by its albedos: the
// class's own BSDF (material.h) and the principled lobe's base (principled.h), which reads the same albedos from its
// own table where it is anisotropic.
#pragma once
#include "tracer/core/bsdf.h"
#include "tracer/core/ggx_albedo_lookup.h"
#include "tracer/core/microfacet.h"

namespace tracer {

// The smallest GGX alpha of the glossy class: below it the lobe is too sharp for light sampling to be of use
// (the loader makes smoother conductors mirrors).
constexpr float kMinGlossyAlpha = 0.02f;

// ---- the glossy class: a GGX specular layer over a Lambertian base ------------------------------------------
// f = f_ss + f_ms + f_base, with F = f0 + (f90 - f0)(1 - wo.h)^5 (Schlick) and, writing E, E5 for the table's
// albedos at a direction and Eavg, E5avg for their averages (Kulla and Conty 2017, "Revisiting Physically Based
// Shading at Imageworks", sections on multiple scattering and on layering):
//   f_ss   = F D G1(wo) G1(wi) / (4 cos_o cos_i)                   single scattering;
//   f_ms   = Fms (1 - E(wo)) (1 - E(wi)) / (pi (1 - Eavg))       the energy single scattering loses with
//            Fms = Favg^2 Eavg / (1 - Favg (1 - Eavg)), Favg = f0 + (f90 - f0) / 21   (Fresnel-weighted);
//   Es(w)  = f0 (E - E5) + f90 E5 + Fms (1 - E)                     the specular layer's albedo at w;
//   f_base = kd / pi (1 - Es(wo)) (1 - Es(wi)) / (1 - EsAvg)        the base gets what the layer does not reflect.
// So int f cos dwi = Es(wo) + kd (1 - Es(wo)) <= 1 for kd, f0, f90 <= 1, and = 1 for white kd or white f0
// (up to the tables' interpolation error); the form is reciprocal in (wo, wi).
struct GlossyLayer {
  GgxAlbedoRow row;
  Vec3 fms;  // Fms, per channel
  float oneMinusEavg;
  Vec3 esAvg;  // EsAvg
};
// The layer's constants from its averages (Eavg, E5avg).
TRACER_HD GlossyLayer GlossyLayerFrom(const SurfaceBsdf& b, GgxAlbedo avg) {
  GlossyLayer l;
  l.row = GgxAlbedoRow{0, 0.0f};  // GlossyLayerOf sets it; a layer with its own albedos has none
  Vec3 fAvg = b.ks + (Vec3(b.f90) - b.ks) * (1.0f / 21.0f);
  l.oneMinusEavg = Fmaxf(1.0f - avg.e, 1e-6f);
  Vec3 denom = Vec3(1.0f) - fAvg * l.oneMinusEavg;
  l.fms = fAvg * fAvg * avg.e / Max(denom, Vec3(1e-6f));
  l.esAvg = b.ks * (avg.e - avg.e5) + Vec3(b.f90 * avg.e5) + l.fms * (1.0f - avg.e);
  return l;
}
// The class's layer: its averages from the GGX table's row of b.alpha.
TRACER_HD GlossyLayer GlossyLayerOf(const SurfaceBsdf& b) {
  const GgxAlbedoRow row = GgxAlbedoRowOf(b.alpha);
  GlossyLayer l = GlossyLayerFrom(b, LookupGgxAlbedoAvg(row));
  l.row = row;
  return l;
}
// What the layer does at one direction: its single-scattering albedo Ess and total albedo Es, and 1 - E.
struct GlossyAt {
  Vec3 ess, es;
  float oneMinusE;
};
// ... from the albedos (E, E5) at that direction.
TRACER_HD GlossyAt GlossyAtFrom(const SurfaceBsdf& b, const GlossyLayer& l, GgxAlbedo a) {
  GlossyAt g;
  g.ess = b.ks * (a.e - a.e5) + Vec3(b.f90 * a.e5);
  g.oneMinusE = Fmaxf(1.0f - a.e, 0.0f);
  g.es = g.ess + l.fms * g.oneMinusE;
  return g;
}
TRACER_HD GlossyAt GlossyAtDir(const SurfaceBsdf& b, const GlossyLayer& l, float mu) {
  return GlossyAtFrom(b, l, LookupGgxAlbedo(l.row, mu));
}
// Probability of sampling the single-scattering lobe (by D(h) cos); the rest (multiple scattering and the
// base, both close to cosine-shaped) is sampled by the cosine. In proportion to their albedos at wo.
TRACER_HD float GlossySpecularWeight(const SurfaceBsdf& b, const GlossyLayer& l, const GlossyAt& o) {
  float ls = Luminance(o.ess);
  float lc = Luminance(l.fms * o.oneMinusE + b.kd * (Vec3(1.0f) - o.es));
  return ls + lc > 0.0f ? ls / (ls + lc) : 1.0f;
}
}  // namespace tracer
