// @file microfacet.h: the GGX microfacet distribution, its Smith masking, its sampling and the Fresnel terms.
//
// Directions are local (the normal is +z). Split from material.h so that the host code that tabulates GGX's
// albedo (host/ggx_albedo.h, which writes core/ggx_albedo_table.h) uses exactly these functions without
// including the table it writes.
#pragma once
#include "tracer/core/math.h"

namespace tracer {

TRACER_HD float CosTheta(Vec3 w) { return w.z; }
TRACER_HD float AbsCosTheta(Vec3 w) { return fabsf(w.z); }
TRACER_HD bool SameHemisphere(Vec3 a, Vec3 b) { return a.z * b.z > 0.0f; }

// ---- GGX (Trowbridge and Reitz 1975; Walter et al. 2007) -------------------------------------------
TRACER_HD float GgxD(Vec3 h, float alpha) {
  float c2 = h.z * h.z;
  float a2 = alpha * alpha;
  float d = c2 * (a2 - 1.0f) + 1.0f;
  return a2 / (kPi * d * d);
}
TRACER_HD float GgxG1(Vec3 w, float alpha) {
  float c2 = w.z * w.z;
  if (c2 <= 0.0f) return 0.0f;
  float t2 = (1.0f - c2) / c2;
  return 2.0f / (1.0f + sqrtf(1.0f + alpha * alpha * t2));
}
// A microfacet normal drawn from D(h) cos(theta_h) (Walter et al. 2007, eq. 35 inverted for GGX).
TRACER_HD Vec3 SampleGgxNormal(float alpha, float u1, float u2) {
  float a2 = alpha * alpha;
  float cos2 = (1.0f - u1) / (u1 * (a2 - 1.0f) + 1.0f);
  float cosT = sqrtf(Clamp(cos2, 0.0f, 1.0f)), sinT = SafeSqrt(1.0f - cos2);
  float phi = 2.0f * kPi * u2;
  return Vec3(sinT * cosf(phi), sinT * sinf(phi), cosT);
}
// (1 - cos)^5, the weight of Schlick's approximation (Schlick 1994).
TRACER_HD float SchlickWeight(float cosTheta) {
  float m = 1.0f - Clamp(cosTheta, 0.0f, 1.0f);
  return (m * m) * (m * m) * m;
}
// Schlick's Fresnel with reflectance f0 at normal incidence and f90 at grazing.
TRACER_HD Vec3 SchlickFresnel(Vec3 f0, float f90, float cosTheta) {
  return f0 + (Vec3(f90) - f0) * SchlickWeight(cosTheta);
}
// Exact Fresnel reflectance of a dielectric interface for unpolarised light; eta = n_t / n_i.
TRACER_HD float FresnelDielectric(float cosI, float eta) {
  float sin2T = (1.0f - cosI * cosI) / (eta * eta);
  if (sin2T >= 1.0f) return 1.0f;  // total internal reflection
  float cosT = SafeSqrt(1.0f - sin2T);
  float rs = (cosI - eta * cosT) / (cosI + eta * cosT);
  float rp = (eta * cosI - cosT) / (eta * cosI + cosT);
  return 0.5f * (rs * rs + rp * rp);
}

// Exact Fresnel reflectance of a dielectric interface for a cosine of either sign, as pbrt-v4's FrDielectric reads
// it: eta = n_inside / n_outside, and a negative cosine means the light arrives from inside (then the ratio flips).
TRACER_HD float FresnelDielectricSigned(float cosI, float eta) {
  return cosI < 0.0f ? FresnelDielectric(-cosI, 1.0f / eta) : FresnelDielectric(cosI, eta);
}

// Exact Fresnel reflectance of a conductor (complex index eta + i k relative to the outside medium) for unpolarised
// light at incidence cosine cosI: the Fresnel equations for an absorbing medium (Born and Wolf 1999, "Principles of
// Optics", 7th ed., sec. 14.2) in the real closed form, with a^2 + b^2 = |eta_c^2 - sin^2|, a = Re sqrt(eta_c^2 -
// sin^2):
//   Rs = (a^2 + b^2 - 2 a cos + cos^2) / (a^2 + b^2 + 2 a cos + cos^2)
//   Rp = Rs (cos^2 (a^2 + b^2) - 2 a cos sin^2 + sin^4) / (cos^2 (a^2 + b^2) + 2 a cos sin^2 + sin^4)
// At normal incidence it is ((eta - 1)^2 + k^2) / ((eta + 1)^2 + k^2); at grazing 1.
TRACER_HD float FresnelConductor(float cosI, float eta, float k) {
  const float c = Clamp(cosI, 0.0f, 1.0f), c2 = c * c, s2 = 1.0f - c2;
  const float t0 = eta * eta - k * k - s2;
  const float a2b2 = sqrtf(Fmaxf(t0 * t0 + 4.0f * eta * eta * k * k, 0.0f));
  const float a = SafeSqrt(0.5f * (a2b2 + t0));
  const float t1 = a2b2 + c2, t2 = 2.0f * a * c;
  if (!(t1 + t2 > 0.0f)) return 1.0f;  // eta = k = 0 at grazing: nothing enters
  const float rs = (t1 - t2) / (t1 + t2);
  const float t3 = c2 * a2b2 + s2 * s2, t4 = t2 * s2;
  const float rp = t3 + t4 > 0.0f ? rs * (t3 - t4) / (t3 + t4) : rs;
  return 0.5f * (rs + rp);
}
TRACER_HD Vec3 FresnelConductor(float cosI, Vec3 eta, Vec3 k) {
  return Vec3(FresnelConductor(cosI, eta.x, k.x), FresnelConductor(cosI, eta.y, k.y),
              FresnelConductor(cosI, eta.z, k.z));
}

// ---- anisotropic GGX, as pbrt-v4's TrowbridgeReitzDistribution ----------------------------------------------------
// alpha x along the frame's s (first) axis, y along t. D is the anisotropic GGX of Walter et al. 2007 (Trowbridge
// and Reitz 1975), Lambda its Smith term (Heitz 2014, "Understanding the Masking-Shadowing Function in
// Microfacet-Based BRDFs", eq. 86), and masking-shadowing is the height-correlated G2 = 1 / (1 + Lambda(wo) +
// Lambda(wi)) (Heitz 2014, eq. 99), pbrt-v4's choice. Directions may lie on either side (Lambda uses |tan|).
struct GgxAlphas {
  float x, y;
};
TRACER_HD float GgxAnisoD(Vec3 h, GgxAlphas a) {
  if (!(h.z > 0.0f)) return 0.0f;
  const float x = h.x / a.x, y = h.y / a.y, d = x * x + y * y + h.z * h.z;
  return 1.0f / (kPi * a.x * a.y * d * d);
}
TRACER_HD float GgxAnisoLambda(Vec3 w, GgxAlphas a) {
  const float z2 = w.z * w.z;
  if (!(z2 > 0.0f)) return 1e30f;  // at the horizon nothing is visible
  const float t2 = (Sqr(a.x * w.x) + Sqr(a.y * w.y)) / z2;
  return 0.5f * (sqrtf(1.0f + t2) - 1.0f);
}
TRACER_HD float GgxAnisoG1(Vec3 w, GgxAlphas a) { return 1.0f / (1.0f + GgxAnisoLambda(w, a)); }
TRACER_HD float GgxAnisoG2(Vec3 wo, Vec3 wi, GgxAlphas a) {
  return 1.0f / (1.0f + GgxAnisoLambda(wo, a) + GgxAnisoLambda(wi, a));
}
// The density of visible normals seen from w, D_w(h) = G1(w) max(0, w.h) D(h) / |w.z| (Heitz 2014, eq. 38), for w on
// either side (h in the upper hemisphere; a w below sees the mirrored lobe).
TRACER_HD float GgxVisibleNormalPdf(Vec3 w, Vec3 h, GgxAlphas a) {
  const float wz = fabsf(w.z), wh = w.z < 0.0f ? -Dot(w, h) : Dot(w, h);
  if (!(wz > 0.0f) || !(wh > 0.0f)) return 0.0f;
  return GgxAnisoG1(w, a) * wh * GgxAnisoD(h, a) / wz;
}
// A microfacet normal drawn from the visible normals seen from w (Heitz 2018, "Sampling the GGX Distribution of
// Visible Normals", JCGT 7(4)): stretch w to the configuration where alpha = 1, sample the projected hemisphere there
// (a disk point, its upper half squeezed by how far w leans), lift it to the hemisphere and unstretch. A w below the
// surface samples as -w does, so that the normal is always in the upper hemisphere.
TRACER_HD Vec3 SampleGgxVisibleNormal(Vec3 w, GgxAlphas a, float u1, float u2) {
  if (w.z < 0.0f) w = -w;
  const Vec3 v = Normalize(Vec3(a.x * w.x, a.y * w.y, w.z));
  const float len2 = v.x * v.x + v.y * v.y;
  const Vec3 t1 = len2 > 0.0f ? Vec3(-v.y, v.x, 0.0f) * (1.0f / sqrtf(len2)) : Vec3(1.0f, 0.0f, 0.0f);
  const Vec3 t2 = Cross(v, t1);
  const float r = sqrtf(u1), phi = 2.0f * kPi * u2;
  const float p1 = r * cosf(phi);
  const float s = 0.5f * (1.0f + v.z);
  const float p2 = (1.0f - s) * SafeSqrt(1.0f - p1 * p1) + s * r * sinf(phi);
  const Vec3 n = t1 * p1 + t2 * p2 + v * SafeSqrt(1.0f - p1 * p1 - p2 * p2);
  return Normalize(Vec3(a.x * n.x, a.y * n.y, Fmaxf(1e-6f, n.z)));
}

}  // namespace tracer
