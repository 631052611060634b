// @file pbrt_loader_materials.cpp: pbrt-v4 materials onto the renderer's classes (see pbrt_loader_materials.h).
// Parameter names and defaults are pbrt-v4's (src/pbrt/materials.cpp, each material's Create).
#include "pbrt_loader_materials.h"

#include <algorithm>
#include <cmath>

#include "pbrt_loader_spectra.h"
#include "tracer/core/material.h"

namespace tracer::pbrtload {
namespace {

constexpr float kSmoothAlpha = 1e-3f;  // pbrt-v4's TrowbridgeReitzDistribution::EffectivelySmooth: alpha < 1e-3

// What one material is, and where, for messages.
struct Source {
  const PbrtMaterial& m;
  std::string Label() const {
    return "material " + (m.name.empty() ? std::string() : "\"" + m.name + "\" ") + "(" + m.type + ")";
  }
};

class MaterialMapper {
 public:
  MaterialMapper(PbrtLoad& load, PbrtTextures& textures) : load_(load), textures_(textures) {}

  MappedMaterial Map(const PbrtMaterial& m, int depth);

 private:
  MappedMaterial Diffuse(const Source& s, const char* reflectance, Vec3 fallback);
  MappedMaterial Conductor(const Source& s, const std::string& prefix, float outsideEta);
  MappedMaterial Dielectric(const Source& s);
  MappedMaterial CoatedDiffuse(const Source& s);
  MappedMaterial Mix(const Source& s, int depth);
  float Alpha(const Source& s, const std::string& prefix);
  void Approximate(const Source& s, const std::string& why);
  void AddNormalMap(const Source& s, HostMaterial& out);

  PbrtLoad& load_;
  PbrtTextures& textures_;
};

// A float parameter's value; a texture's is its factor times its image's mean (with a warning): the classes take
// one roughness per material.
float FloatValue(PbrtLoad& load, PbrtTextures& textures, const Source& s, const std::string& name, float fallback) {
  MappedTexture t;
  if (!textures.Float(s.m.params, name, &t)) return fallback;
  if (t.map < 0) return t.factor.x;
  const TextureMap& map = load.scene.textureMaps[size_t(t.map)];
  const float mean = float(MeanTexel(load.scene.textures[size_t(map.texture)])[0]);
  load.WarnKind("textured-" + name, s.m.loc,
                s.Label() + ": a textured \"" + name + "\" is not supported yet; the texture's mean is used");
  return t.factor.x * (map.options.base + map.options.gain * mean);
}

// The (constant) RGB of a spectrum parameter, or the fallback; textures give their factor, with a warning.
Vec3 RgbValue(PbrtLoad& load, PbrtTextures& textures, const Source& s, const std::string& name, SpectrumUse use,
              Vec3 fallback) {
  MappedTexture t;
  if (!textures.Spectrum(s.m.params, name, use, &t)) return fallback;
  if (t.map >= 0)
    load.WarnKind("textured-" + name, s.m.loc,
                  s.Label() + ": a textured \"" + name + "\" is not supported yet; its scale alone is used");
  return t.factor;
}

void MaterialMapper::Approximate(const Source& s, const std::string& why) {
  load_.WarnKind("material-approx:" + s.m.type + ":" + why, s.m.loc, s.Label() + ": " + why);
}

// The GGX alpha of a material's "roughness" (or "uroughness"/"vroughness", which default to it) after pbrt-v4's
// remapping. Anisotropic roughness becomes the geometric mean of the two alphas (the renderer's GGX is isotropic).
float MaterialMapper::Alpha(const Source& s, const std::string& prefix) {
  const float r = FloatValue(load_, textures_, s, prefix + "roughness", 0.0f);
  const float ur = FloatValue(load_, textures_, s, prefix + "uroughness", r);
  const float vr = FloatValue(load_, textures_, s, prefix + "vroughness", r);
  const bool remap = s.m.params.GetBool("remaproughness", true);
  const float au = RoughnessToAlpha(std::max(ur, 0.0f), remap), av = RoughnessToAlpha(std::max(vr, 0.0f), remap);
  if (au != av)
    load_.WarnKind("anisotropic", s.m.loc,
                   s.Label() +
                       ": anisotropic roughness is not supported yet; the geometric mean of the two alphas "
                       "is used");
  return std::sqrt(au * av);
}

void MaterialMapper::AddNormalMap(const Source& s, HostMaterial& out) {
  const std::string file = s.m.params.GetString("normalmap", "");
  if (!file.empty()) {
    // pbrt-v4 reads normal maps with a linear encoding (materials.cpp; an 8-bit format other than PNG still goes
    // through stb_image as sRGB) and uses the frame (dp/du, n x dp/du, n), the renderer's "norm" map convention.
    ImageRead how;
    how.encoding = "linear";
    out.bumpTexture = textures_.ImageMap(file, how, s.m.loc, s.Label() + " \"normalmap\"");
    out.bumpIsNormalMap = out.bumpTexture >= 0;
  }
  if (s.m.params.Has("displacement"))
    load_.WarnKind("displacement", s.m.loc,
                   s.Label() + ": \"displacement\" is not supported yet; the surface is rendered undisplaced");
}

MappedMaterial MaterialMapper::Diffuse(const Source& s, const char* reflectance, Vec3 fallback) {
  MappedMaterial out;
  HostMaterial& h = out.material;
  h.cls = kDiffuse;
  MappedTexture t;
  if (textures_.Spectrum(s.m.params, reflectance, SpectrumUse::kAlbedo, &t)) {
    h.kd = t.factor;
    h.texture = t.map;
  } else {
    h.kd = fallback;
  }
  return out;
}

// A conductor (or the conductor under a coatedconductor's coating, prefix "conductor."): Schlick's Fresnel from the
// normal-incidence reflectance, relative to a medium of index outsideEta.
MappedMaterial MaterialMapper::Conductor(const Source& s, const std::string& prefix, float outsideEta) {
  MappedMaterial out;
  HostMaterial& h = out.material;
  MappedTexture reflectance;
  h.kd = Vec3(0.0f);
  if (textures_.Spectrum(s.m.params, "reflectance", SpectrumUse::kAlbedo, &reflectance)) {
    // pbrt-v4's ConductorMaterial with "reflectance" r: eta 1, k = 2 sqrt(r) / sqrt(1 - r), whose normal-incidence
    // reflectance is r itself.
    h.ks = reflectance.factor;
    h.specularTexture = reflectance.map;
  } else {
    Vec3 cuEta, cuK;
    NamedSpectrumRgb("metal-Cu-eta", &cuEta);  // pbrt-v4's defaults
    NamedSpectrumRgb("metal-Cu-k", &cuK);
    const Vec3 eta = RgbValue(load_, textures_, s, prefix + "eta", SpectrumUse::kUnbounded, cuEta);
    const Vec3 k = RgbValue(load_, textures_, s, prefix + "k", SpectrumUse::kUnbounded, cuK);
    h.ks = ConductorF0(eta / outsideEta, k / outsideEta);
  }
  h.alpha = Alpha(s, prefix);
  if (h.alpha < kMinGlossyAlpha && h.specularTexture < 0) {
    h.cls = kMirror;  // as the OBJ loader does: a sharper lobe than the glossy class samples well is a mirror
    h.alpha = 0.0f;
  } else {
    h.cls = kGlossy;
    h.f90 = 1.0f;
    h.alpha = std::max(h.alpha, kMinGlossyAlpha);
  }
  return out;
}

MappedMaterial MaterialMapper::Dielectric(const Source& s) {
  MappedMaterial out;
  HostMaterial& h = out.material;
  h.cls = kDielectric;
  h.kd = Vec3(1.0f);
  Vec3 eta(1.5f);
  const PbrtParam* p = s.m.params.Find("eta");
  if (p && p->type == PbrtParamType::kTexture) {
    h.ior = FloatValue(load_, textures_, s, "eta", 1.5f);
  } else {
    if (p) SpectrumRgb(load_, s.m.params, "eta", SpectrumUse::kUnbounded, &eta);
    h.ior = eta.y;  // a spectrally varying eta (dispersion) at 532 nm
    if (eta.x != eta.y || eta.z != eta.y)
      load_.WarnKind("dispersion", s.m.loc,
                     s.Label() +
                         ": a spectrally varying \"eta\" (dispersion) is not supported yet; its value at "
                         "532 nm is used");
  }
  if (!(h.ior > 0.0f) || !std::isfinite(h.ior)) {
    load_.Warn(s.m.loc, s.Label() + ": \"eta\" " + std::to_string(h.ior) + " is not usable; 1.5 is used");
    h.ior = 1.5f;
  }
  if (s.m.type == "thindielectric")
    Approximate(s,
                "mapped to the dielectric class, which refracts as the surface of a solid; pbrt-v4's thin "
                "dielectric is a sheet that passes light straight through");
  else if (Alpha(s, "") >= kSmoothAlpha)
    Approximate(s, "rough dielectrics are not supported yet: mapped to smooth glass (the dielectric class)");
  return out;
}

MappedMaterial MaterialMapper::CoatedDiffuse(const Source& s) {
  MappedMaterial out = Diffuse(s, "reflectance", Vec3(0.5f));
  HostMaterial& h = out.material;
  const float eta = FloatValue(load_, textures_, s, "eta", 1.5f);
  const float f0 = Sqr((eta - 1.0f) / (eta + 1.0f));
  if (!(f0 > 0.0f)) return out;  // an index-matched coat reflects nothing: the diffuse base alone
  h.cls = kGlossy;
  h.ks = Vec3(f0);
  h.f90 = 1.0f;
  h.alpha = std::max(Alpha(s, ""), kMinGlossyAlpha);
  Approximate(s,
              "mapped to the glossy class: a GGX dielectric coat (f0 from \"eta\") over a Lambertian base of "
              "\"reflectance\", roughness at least the class's smallest alpha (" +
                  std::to_string(kMinGlossyAlpha) +
                  "); pbrt-v4's layered BSDF is stochastic and also absorbs and inter-reflects in the coat "
                  "(\"thickness\", \"albedo\"), so matching its look is later work");
  return out;
}

MappedMaterial MaterialMapper::Mix(const Source& s, int depth) {
  const PbrtParam* names = s.m.params.Find("materials", PbrtParamType::kString);
  if (!names || names->strings.size() != 2) {
    load_.Warn(s.m.loc, s.Label() + ": needs \"string materials\" with two names; a grey diffuse is used");
    return Diffuse(s, "", Vec3(0.5f));
  }
  // pbrt-v4's MixMaterial picks materials[1] with probability "amount" (default 0.5) at each point; the renderer
  // takes the likelier one (materials[0] at 0.5).
  const float amount = FloatValue(load_, textures_, s, "amount", 0.5f);
  const std::string& pick = names->strings[amount > 0.5f ? 1 : 0];
  Approximate(s, "a stochastic mix of two materials; the one with the larger weight is used");
  auto found = load_.pbrt.namedMaterials.find(pick);
  if (found == load_.pbrt.namedMaterials.end()) {
    load_.Warn(s.m.loc, s.Label() + ": no material named \"" + pick + "\"; a grey diffuse is used");
    return Diffuse(s, "", Vec3(0.5f));
  }
  return Map(load_.pbrt.materials[size_t(found->second)], depth + 1);
}

MappedMaterial MaterialMapper::Map(const PbrtMaterial& m, int depth) {
  const Source s{m};
  if (m.colorSpace != "srgb")
    load_.WarnKind(
        "colorspace", m.loc,
        s.Label() + ": colour space \"" + m.colorSpace + "\" is not supported yet; its RGB values are used as sRGB");
  MappedMaterial out;
  const std::string& type = m.type;
  if (depth > 16) {
    load_.Warn(m.loc, s.Label() + ": mixes nested too deep (a cycle?); a grey diffuse is used");
    out = Diffuse(s, "", Vec3(0.5f));
  } else if (type == "diffuse") {
    out = Diffuse(s, "reflectance", Vec3(0.5f));
  } else if (type == "conductor") {
    out = Conductor(s, "", 1.0f);
    Approximate(s, out.material.cls == kMirror
                       ? "a conductor smoother than the glossy class's smallest alpha is a mirror of constant "
                         "reflectance (its normal-incidence Fresnel reflectance)"
                       : "mapped to the glossy class without a base: Schlick's Fresnel from the normal-incidence "
                         "reflectance of eta and k (pbrt-v4: the exact conductor Fresnel, per wavelength)");
  } else if (type == "coatedconductor") {
    const float interfaceEta = FloatValue(load_, textures_, s, "interface.eta", 1.5f);
    out = Conductor(s, "conductor.", interfaceEta > 0.0f ? interfaceEta : 1.5f);
    out.material.alpha = std::max(out.material.alpha, Alpha(s, "interface."));
    Approximate(s,
                "mapped to a conductor (its Fresnel relative to the coat's index, the rougher of the two "
                "layers); the coat's own reflection is left out");
  } else if (type == "dielectric" || type == "thindielectric") {
    out = Dielectric(s);
  } else if (type == "coateddiffuse") {
    out = CoatedDiffuse(s);
  } else if (type == "diffusetransmission") {
    out = Diffuse(s, "reflectance", Vec3(0.25f));
    Approximate(s, "mapped to the diffuse class: its \"transmittance\" is left out");
  } else if (type == "mix") {
    return Mix(s, depth);
  } else if (type == "interface" || type == "none" || type.empty()) {
    out.interface = true;
    load_.WarnKind("material-interface", m.loc,
                   s.Label() + ": marks a medium boundary, which the renderer does not have; its shapes are left out");
  } else {
    out = Diffuse(s, "reflectance", Vec3(0.5f));
    Approximate(s,
                "not supported yet (measured, hair and subsurface are not); a diffuse of its \"reflectance\" (or "
                "0.5) is used");
  }
  AddNormalMap(s, out.material);
  return out;
}

}  // namespace

float RoughnessToAlpha(float roughness, bool remap) { return remap ? std::sqrt(roughness) : roughness; }

Vec3 ConductorF0(Vec3 eta, Vec3 k) {
  Vec3 f0;
  for (int i = 0; i < 3; ++i) f0[i] = (Sqr(eta[i] - 1.0f) + Sqr(k[i])) / (Sqr(eta[i] + 1.0f) + Sqr(k[i]));
  return Min(Max(f0, Vec3(0.0f)), Vec3(1.0f));
}

const MappedMaterial& PbrtMaterials::Get(int index) {
  auto known = mapped_.find(index);
  if (known != mapped_.end()) return known->second;
  const PbrtMaterial& m = load_.pbrt.materials.at(size_t(index));
  MappedMaterial mapped = MaterialMapper(load_, textures_).Map(m, 0);
  mapped.material.name = m.name.empty() ? m.type + "@" + m.loc.ToString() : m.name;
  return mapped_.emplace(index, std::move(mapped)).first->second;
}

}  // namespace tracer::pbrtload
