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

}  // namespace tracer
