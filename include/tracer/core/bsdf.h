// @file bsdf.h: the BSDF at a surface point in the register form that the BSDF code (material.h, lobes.h) reads,
// and one sample of it.
#pragma once
#include "tracer/core/math.h"

namespace tracer {

// A material's class: which shade queue runs it (one kernel per class on the GPU).
enum MaterialClass : int32_t {
  kDiffuse = 0,
  kGlossy = 1,
  kMirror = 2,
  kDielectric = 3,
  kNumMaterialClasses = 4,
};

// Which BSDF of its class a surface has. kLobeClass is the class's own (material.h), the one every OBJ material
// uses; the others are pbrt-v4's materials (lobes.h), run by the same class's shade queue. material.h's Material says
// where each keeps its parameters.
enum BsdfLobe : int32_t {
  kLobeClass = 0,
  kLobeConductor = 1,            // glossy: a rough conductor; mirror: a smooth one (exact Fresnel of eta + i k)
  kLobeCoated = 2,               // glossy: a dielectric coat over a diffuse base (pbrt-v4's coateddiffuse)
  kLobeRoughDielectric = 3,      // dielectric: GGX reflection and refraction (Walter et al. 2007)
  kLobeThinDielectric = 4,       // dielectric: a thin slab, its inter-reflections summed (pbrt-v4's thindielectric)
  kLobeDiffuseTransmission = 5,  // diffuse: Lambertian reflection kd and transmission ks
  kLobePrincipled = 6,           // glossy: Blender's Principled BSDF as its MTL keys give it (principled.h)
};
constexpr int32_t kNumLobes = 7;

// A GGX lobe whose two alphas are both at most this is a delta lobe (pbrt-v4's EffectivelySmooth has "below 1e-3";
// alpha 1e-3 itself, which coffee's plastics use, is taken as smooth too: it is 0.06 degrees wide, and as a lobe its
// peak, 3e5 per steradian, only adds noise to light sampling).
constexpr float kSmoothAlpha = 1e-3f;

// The layer of kLobeCoated (lobes.h, CoatedBaseScale, says how each is used). The loader integrates internal and
// escape once per material (CoatedLayerOf).
struct CoatLayer {
  float tau = 0.0f;       // optical thickness along the normal: pbrt-v4's "thickness" (its medium's sigma_t is 1)
  float internal = 0.0f;  // the part of the base's diffuse light that the coat sends back to the base, per trip
  float escape = 1.0f;    // the part that leaves through the coat, per trip
  int32_t bounces = 0;    // base reflections counted (pbrt-v4's random walk stops after maxdepth / 2); 0: all
};

struct SurfaceBsdf {
  int32_t cls;
  // kd, ks by class and lobe:   class's own: glossy kd the base colour, ks the specular layer's f0; mirror ks its
  // reflectance; dielectric kd the transmission tint. Conductor: kd = eta, k below. Coated: kd the base's albedo.
  // Rough and thin dielectric: kd the transmission tint. Diffuse transmission: kd reflects, ks transmits.
  Vec3 kd, ks;
  float alpha, ior;  // alpha: GGX alpha (lobes: along the frame's s axis); ior: dielectrics and the coat
  float f90 = 1.0f;  // glossy: the specular layer's reflectance at grazing
  int32_t lobe = kLobeClass;
  float alphaY = 0.0f;       // lobes: GGX alpha along the frame's t axis
  Vec3 k{0.0f, 0.0f, 0.0f};  // conductor: the imaginary part of the index relative to the outside
  CoatLayer coat{};
  const Float4* coatTable = nullptr;  // coated: the coat's table (lobes.h, kCoatTableRes texels); principled: its table
  // The principled lobe's layers over its base (principled.h; kd, ks, f90, alpha and alphaY are the base's dielectric
  // layer, the glossy class's):
  float metallic = 0.0f;    // the metal's weight in the base (Pm)
  float sheen = 0.0f;       // the sheen's weight (Ps)
  float coatWeight = 0.0f;  // the coat's weight (Pc / 4, as Blender reads Pc)
  float coatAlpha = 0.0f;   // the coat's GGX alpha (Pcr^2)
  float roughness = 0.0f;   // the base's roughness sqrt(alpha) before the anisotropy: its table's row coordinate
  float rotation = 0.0f;    // the anisotropy's rotation about the normal, in turns (anisor)
  int32_t baseRows = 0;     // roughness rows of the anisotropic base's albedo table; 0: isotropic (the GGX table)
};

struct BsdfSample {
  Vec3 wi;
  Vec3 f;     // BSDF value (for delta lobes: the weight times 1/|cos|, so f*|cos|/pdf is right)
  float pdf;  // solid angle; for delta lobes the discrete probability of the lobe
  bool delta;
  bool valid;
};

}  // namespace tracer
