// @file material.h: material classes and their BSDFs (evaluate, pdf, sample) in the shading frame.
//
// A material is a class tag plus plain data; dispatch happens by queue, one shade kernel per class.
// Directions are local: the shading normal is +z. wo points away from the surface towards the viewer.
#pragma once
#include "tracer/core/sampling.h"

namespace tracer {

enum MaterialClass : int32_t {
  kDiffuse = 0,
  kGlossy = 1,
  kMirror = 2,
  kDielectric = 3,
  kNumMaterialClasses = 4,
};

// 64 bytes, four 16-byte loads.
//   kd = (diffuse albedo, or transmission tint for dielectrics; texture index as int bits, -1 = none)
//   ks = (specular colour, GGX alpha)
//   ke = (emitted radiance, index of refraction)
//   info = (class, emissive flag, 0, 0)
struct alignas(16) Material {
  Float4 kd, ks, ke;
  Int4 info;
};
static_assert(sizeof(Material) == 64, "material: four 16-byte loads");

// The register form the BSDF code uses.
struct SurfaceBsdf {
  int32_t cls;
  Vec3 kd, ks;
  float alpha, ior;
};

struct BsdfSample {
  Vec3 wi;
  Vec3 f;     // BSDF value (for delta lobes: the weight times 1/|cos|, so f*|cos|/pdf is right)
  float pdf;  // solid angle; for delta lobes the discrete probability of the lobe
  bool delta;
  bool valid;
};

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
// Schlick's Fresnel with the specular colour as reflectance at normal incidence.
TRACER_HD Vec3 SchlickFresnel(Vec3 f0, float cosTheta) {
  float m = 1.0f - Clamp(cosTheta, 0.0f, 1.0f);
  float m5 = (m * m) * (m * m) * m;
  return f0 + (Vec3(1.0f) - f0) * m5;
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

// Probability of picking the specular lobe of the glossy mixture.
TRACER_HD float GlossySpecularWeight(const SurfaceBsdf& b) {
  float ls = Luminance(b.ks), ld = Luminance(b.kd);
  return ls + ld > 0.0f ? ls / (ls + ld) : 1.0f;
}

// ---- evaluation (non-delta classes; delta classes return zero) -------------------------------------
TRACER_HD Vec3 BsdfEval(const SurfaceBsdf& b, Vec3 wo, Vec3 wi) {
  if (!SameHemisphere(wo, wi) || wo.z <= 0.0f) return Vec3(0.0f);
  if (b.cls == kDiffuse) return b.kd * kInvPi;
  if (b.cls == kGlossy) {
    Vec3 h = Normalize(wo + wi);
    float dotOH = Dot(wo, h);
    Vec3 spec = SchlickFresnel(b.ks, dotOH) *
                (GgxD(h, b.alpha) * GgxG1(wo, b.alpha) * GgxG1(wi, b.alpha) / (4.0f * wo.z * wi.z));
    return b.kd * kInvPi + spec;
  }
  return Vec3(0.0f);
}

TRACER_HD float BsdfPdf(const SurfaceBsdf& b, Vec3 wo, Vec3 wi) {
  if (!SameHemisphere(wo, wi) || wo.z <= 0.0f) return 0.0f;
  if (b.cls == kDiffuse) return CosineHemispherePdf(wi.z);
  if (b.cls == kGlossy) {
    float ps = GlossySpecularWeight(b);
    Vec3 h = Normalize(wo + wi);
    float pdfSpec = GgxD(h, b.alpha) * h.z / (4.0f * Dot(wo, h));
    return ps * pdfSpec + (1.0f - ps) * CosineHemispherePdf(wi.z);
  }
  return 0.0f;
}

TRACER_HD bool IsDeltaClass(int32_t cls) { return cls == kMirror || cls == kDielectric; }

// Samples wi given wo (wo.z > 0 for reflective classes; the shade code flips the frame so that it is).
// uLobe picks a lobe, (u1, u2) the direction.
TRACER_HD BsdfSample BsdfSampleDir(const SurfaceBsdf& b, Vec3 wo, float uLobe, float u1, float u2) {
  BsdfSample s;
  s.valid = false;
  s.delta = false;
  s.pdf = 0.0f;
  s.f = Vec3(0.0f);
  s.wi = Vec3(0.0f, 0.0f, 1.0f);
  if (b.cls == kDiffuse) {
    if (wo.z <= 0.0f) return s;
    s.wi = SampleCosineHemisphere(u1, u2);
    s.pdf = CosineHemispherePdf(s.wi.z);
    s.f = b.kd * kInvPi;
    s.valid = s.pdf > 0.0f;
    return s;
  }
  if (b.cls == kGlossy) {
    if (wo.z <= 0.0f) return s;
    float ps = GlossySpecularWeight(b);
    if (uLobe < ps) {
      // Sample a microfacet normal from D(h) cos(theta_h) and reflect.
      float a2 = b.alpha * b.alpha;
      float cos2 = (1.0f - u1) / (u1 * (a2 - 1.0f) + 1.0f);
      float cosT = sqrtf(Clamp(cos2, 0.0f, 1.0f)), sinT = SafeSqrt(1.0f - cos2);
      float phi = 2.0f * kPi * u2;
      Vec3 h(sinT * cosf(phi), sinT * sinf(phi), cosT);
      s.wi = h * (2.0f * Dot(wo, h)) - wo;
    } else {
      s.wi = SampleCosineHemisphere(u1, u2);
    }
    if (s.wi.z <= 0.0f) return s;
    s.pdf = BsdfPdf(b, wo, s.wi);
    s.f = BsdfEval(b, wo, s.wi);
    s.valid = s.pdf > 0.0f;
    return s;
  }
  if (b.cls == kMirror) {
    if (wo.z <= 0.0f) return s;
    s.wi = Vec3(-wo.x, -wo.y, wo.z);
    s.delta = true;
    s.pdf = 1.0f;
    s.f = b.ks / AbsCosTheta(s.wi);
    s.valid = true;
    return s;
  }
  // Dielectric: reflect with the Fresnel probability, else refract. wo may be on either side.
  bool entering = wo.z > 0.0f;
  float eta = entering ? b.ior : 1.0f / b.ior;  // n_t / n_i
  float cosI = fabsf(wo.z);
  float fr = FresnelDielectric(cosI, eta);
  s.delta = true;
  s.valid = true;
  if (uLobe < fr) {
    s.wi = Vec3(-wo.x, -wo.y, wo.z);
    s.pdf = fr;
    s.f = Vec3(fr / cosI);
    return s;
  }
  float sin2T = (1.0f - cosI * cosI) / (eta * eta);
  float cosT = SafeSqrt(1.0f - sin2T);
  Vec3 n = entering ? Vec3(0, 0, 1) : Vec3(0, 0, -1);
  s.wi = (-wo) / eta + n * (cosI / eta - cosT);
  s.wi = Normalize(s.wi);
  s.pdf = 1.0f - fr;
  // Radiance is scaled by 1/eta^2 across the interface (Veach 1997, ch. 5); the tint is the MTL's Tf.
  s.f = b.kd * ((1.0f - fr) / (eta * eta) / AbsCosTheta(s.wi));
  return s;
}

}  // namespace tracer
