// @file material.h: material classes and their BSDFs (evaluate, pdf, sample) in the shading frame.
//
// A material is a class tag plus plain data; dispatch happens by queue, one shade kernel per class.
// Directions are local: the shading normal is +z. wo points away from the surface towards the viewer.
#pragma once
#include "tracer/core/bsdf.h"
#include "tracer/core/glossy_layer.h"
#include "tracer/core/lobes.h"
#include "tracer/core/microfacet.h"
#include "tracer/core/principled.h"
#include "tracer/core/sampling.h"

namespace tracer {

// 128 bytes, eight 16-byte loads; the fifth (maps) only for glossy surfaces with map_Ks or map_Ns, the sixth (bump)
// only for surfaces with a bump or normal map, the last two (layers, layerMaps) only for the principled lobe. The
// loader (host/scene_loader.h, docs/RENDERING.md "Materials") maps MTL onto these fields:
//   kd   = (base colour: the diffuse albedo, or the transmission tint Tf for dielectrics;
//           map_Kd texture index as int bits, -1 = none)
//   ks   = (glossy: specular reflectance at normal incidence f0; mirror: its reflectance; GGX alpha)
//   ke   = (emitted radiance; dielectric: index of refraction, glossy: specular reflectance at grazing f90)
//   info = (class, map_Ke texture or -1 (emission is ke times its texel), opacity as float bits (MTL d),
//           flags: kMaterialHasMaps, kMaterialCutout, kMaterialHasBump)
//   maps = (map_Ks texture, map_Ns texture (-1 = none), specular scale as float bits, map_d texture or -1): the
//          map_d texture is read by traversal's cut-out test (scene_view.h, CutoutFilter); the scale is 2 f0(Ni)
//          for a dielectric layer, whose f0 and f90 a map_Ks texel's mean sets as Ks's mean does, or 0 for a
//          conductor, whose f0 is Ks times the texel; a map_Ns texel's first channel is the roughness sqrt(alpha).
//   bump = (texture, kBumpHeight (bump/map_Bump: heights, its -bm in TextureInfo) or kBumpNormal (norm/map_Kn:
//           tangent-space normals), 0, 0): scene_view.h's MappedNormal. The principled lobe keeps its anisotropy in
//           bump.z and bump.w (below) and loads bump always.
// The principled lobe (Blender's PBR keys in an MTL, principled.h) keeps the glossy class's fields as they are (kd, ks,
// ke.w = f90 and maps: the dielectric layer before the metallic weight mixes a metal in, per hit point) and adds:
//   layers    = (metallic Pm, sheen Ps, coat weight Pc / 4, coat alpha Pcr^2)
//   layerMaps = (map_Pm texture or -1 (its texel replaces Pm), map_Ps texture or -1 (replaces Ps), the lobe's table
//               (a texture: principled.h's FillPrincipledTable), 0)
//   bump.z, bump.w = the anisotropy's aspect sqrt(1 - 0.9 aniso) and its rotation anisor (turns), as float bits.
// A lobe of pbrt-v4's materials (info.w's lobe bits, bsdf.h) reuses the fields, and maps is then loaded always and
// holds (alphaY as float bits, an int parameter, 0, map_d texture or -1):
//   conductor             kd = (eta, or with kMaterialReflectance the reflectance r: eta 1, k = 2 sqrt(r / (1 - r)),
//                         pbrt-v4's mapping; kd's texture scales r), ks = (k, alpha); a mirror-class one ignores alpha
//   coated                kd = (the base's albedo, its texture), ks = (CoatLayer tau, internal, escape, alpha),
//                         ke.w = the coat's eta, maps.y = CoatLayer bounces, maps.z = the coat's table (a texture
//                         whose texels are lobes.h's kCoatTableRes (Rc, T A) pairs)
//   rough dielectric      kd = (tint, texture), ks.w = alpha, ke.w = eta
//   thin dielectric       kd = (tint, texture), ke.w = eta
//   diffuse transmission  kd = (reflectance, texture), ks = (transmittance, 0), maps.y = its texture or -1
// A mix of two materials (pbrt-v4's "mix") has info.x = kMixMaterial, not a class: ClassOfHit and GetBsdf resolve
// it at each hit point to one of the two (ResolveMix, scene_view.h). It keeps its own emission, map_Ke and
// cut-out, and maps = (material a, material b, amount as float bits (the chance of b), map_d texture or -1).
struct alignas(16) Material {
  Float4 kd, ks, ke;
  Int4 info, maps, bump;
  Float4 layers;
  Int4 layerMaps;
};
static_assert(sizeof(Material) == 128 && alignof(Material) == 16, "material: eight 16-byte loads");
constexpr int32_t kMaterialHasMaps = 1;    // info.w bit: load maps
constexpr int32_t kMaterialCutout = 2;     // info.w bit: opacity d < 1 or a map_d texture: traversal tests it
constexpr int32_t kMaterialHasBump = 4;    // info.w bit: load bump, a bump or normal map sets the shading normal
constexpr int32_t kMaterialLobeShift = 3;  // info.w bits 3 to 5: the BsdfLobe (0: the class's own)
constexpr int32_t kMaterialLobeMask = 7;
constexpr int32_t kMaterialReflectance = 64;  // info.w bit: a conductor's kd is the reflectance r, not eta
constexpr int32_t kMixMaterial = 16;          // info.x of a mix (no class has this number)
constexpr int kMaxMixDepth = 8;               // mixes of mixes resolve this deep; the loader refuses deeper ones
constexpr int32_t kBumpHeight = 1;            // bump.y: the texture's first channel is a height (bump, map_Bump)
constexpr int32_t kBumpNormal = 2;            // bump.y: the texture holds tangent-space normals (norm, map_Kn)

// ---- evaluation (non-delta classes; delta classes return zero) -------------------------------------
TRACER_HD Vec3 BsdfEval(const SurfaceBsdf& b, Vec3 wo, Vec3 wi) {
  if (b.lobe == kLobePrincipled) return PrincipledEval(b, wo, wi);
  if (b.lobe != kLobeClass) return LobeEval(b, wo, wi);
  if (!SameHemisphere(wo, wi) || wo.z <= 0.0f) return Vec3(0.0f);
  if (b.cls == kDiffuse) return b.kd * kInvPi;
  if (b.cls == kGlossy) {
    Vec3 h = Normalize(wo + wi);
    float dotOH = Dot(wo, h);
    Vec3 spec = SchlickFresnel(b.ks, b.f90, dotOH) *
                (GgxD(h, b.alpha) * GgxG1(wo, b.alpha) * GgxG1(wi, b.alpha) / (4.0f * wo.z * wi.z));
    GlossyLayer l = GlossyLayerOf(b);
    GlossyAt o = GlossyAtDir(b, l, wo.z), i = GlossyAtDir(b, l, wi.z);
    Vec3 ms = l.fms * (o.oneMinusE * i.oneMinusE * kInvPi / l.oneMinusEavg);
    Vec3 base = b.kd * (Vec3(1.0f) - o.es) * (Vec3(1.0f) - i.es) * kInvPi / Max(Vec3(1.0f) - l.esAvg, Vec3(1e-6f));
    return spec + ms + base;
  }
  return Vec3(0.0f);
}

TRACER_HD float BsdfPdf(const SurfaceBsdf& b, Vec3 wo, Vec3 wi) {
  if (b.lobe == kLobePrincipled) return PrincipledPdf(b, wo, wi);
  if (b.lobe != kLobeClass) return LobePdf(b, wo, wi);
  if (!SameHemisphere(wo, wi) || wo.z <= 0.0f) return 0.0f;
  if (b.cls == kDiffuse) return CosineHemispherePdf(wi.z);
  if (b.cls == kGlossy) {
    GlossyLayer l = GlossyLayerOf(b);
    float ps = GlossySpecularWeight(b, l, GlossyAtDir(b, l, wo.z));
    Vec3 h = Normalize(wo + wi);
    float pdfSpec = GgxD(h, b.alpha) * h.z / (4.0f * Dot(wo, h));
    return ps * pdfSpec + (1.0f - ps) * CosineHemispherePdf(wi.z);
  }
  return 0.0f;
}

TRACER_HD bool IsDeltaClass(int32_t cls) { return cls == kMirror || cls == kDielectric; }
// Whether every direction the BSDF scatters to is a delta lobe (no light sampling): the mirror and dielectric
// classes, except the rough dielectric. (A smooth coat's delta reflection sits beside its diffuse base.)
TRACER_HD bool IsDeltaBsdf(const SurfaceBsdf& b) { return b.lobe != kLobeRoughDielectric && IsDeltaClass(b.cls); }
// Whether a GGX lobe's two alphas differ, so that its frame must follow the surface's dp/du.
TRACER_HD bool IsAnisotropic(const SurfaceBsdf& b) {
  const bool ggx =
      b.lobe == kLobeConductor || b.lobe == kLobeCoated || b.lobe == kLobeRoughDielectric || b.lobe == kLobePrincipled;
  return ggx && b.alpha != b.alphaY;
}
// Whether the BSDF sends light to the other side of the surface (the shade step then accepts directions there).
TRACER_HD bool TransmitsLight(const SurfaceBsdf& b) {
  return b.cls == kDielectric || b.lobe == kLobeDiffuseTransmission;
}

// The colour the albedo output (--aov albedo) shows: a conductor's reflectance at normal incidence, a lobe's kd, and
// for the classes' own and the principled lobe what they have always shown (ks for mirrors and base-less glossy
// layers, else kd).
TRACER_HD Vec3 AovAlbedo(const SurfaceBsdf& b) {
  if (b.lobe == kLobeConductor) return FresnelConductor(1.0f, b.kd, b.k);
  if (b.lobe != kLobeClass && b.lobe != kLobePrincipled) return b.kd;
  return (b.cls == kMirror || (b.cls == kGlossy && IsBlack(b.kd))) ? b.ks : b.kd;
}

// Samples wi given wo (wo.z > 0 for reflective classes; the shade code flips the frame so that it is).
// uLobe picks a lobe, (u1, u2) the direction.
TRACER_HD BsdfSample BsdfSampleDir(const SurfaceBsdf& b, Vec3 wo, float uLobe, float u1, float u2) {
  if (b.lobe == kLobePrincipled) return PrincipledSample(b, wo, uLobe, u1, u2);
  if (b.lobe != kLobeClass) return LobeSample(b, wo, uLobe, u1, u2);
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
    GlossyLayer l = GlossyLayerOf(b);
    float ps = GlossySpecularWeight(b, l, GlossyAtDir(b, l, wo.z));
    if (uLobe < ps) {
      // Sample a microfacet normal from D(h) cos(theta_h) and reflect.
      Vec3 h = SampleGgxNormal(b.alpha, u1, u2);
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
