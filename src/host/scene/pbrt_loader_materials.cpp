// @file pbrt_loader_materials.cpp: pbrt-v4 materials onto the renderer's classes (see pbrt_loader_materials.h).
// Parameter names and defaults are pbrt-v4's (src/pbrt/materials.cpp, each material's Create).
#include "pbrt_loader_materials.h"

#include <algorithm>
#include <cmath>

#include "pbrt_loader_spectra.h"
#include "tracer/core/material.h"

namespace tracer::pbrtload {
namespace {

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

  MappedMaterial Map(const PbrtMaterial& m);

 private:
  MappedMaterial Diffuse(const Source& s, const char* reflectance, Vec3 fallback);
  MappedMaterial Conductor(const Source& s, const std::string& prefix, float outsideEta);
  MappedMaterial Dielectric(const Source& s);
  MappedMaterial CoatedDiffuse(const Source& s);
  MappedMaterial Mix(const Source& s);
  MappedMaterial DiffuseTransmission(const Source& s);
  GgxAlphas Alphas(const Source& s, const std::string& prefix);
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

// The GGX alphas (along u and v) of a material's "roughness", or "uroughness" and "vroughness", which default to it,
// after pbrt-v4's remapping; a rough lobe's alphas are at least 1e-4, as pbrt-v4's TrowbridgeReitzDistribution keeps
// them.
GgxAlphas MaterialMapper::Alphas(const Source& s, const std::string& prefix) {
  const float r = FloatValue(load_, textures_, s, prefix + "roughness", 0.0f);
  const float ur = FloatValue(load_, textures_, s, prefix + "uroughness", r);
  const float vr = FloatValue(load_, textures_, s, prefix + "vroughness", r);
  const bool remap = s.m.params.GetBool("remaproughness", true);
  GgxAlphas a{RoughnessToAlpha(std::max(ur, 0.0f), remap), RoughnessToAlpha(std::max(vr, 0.0f), remap)};
  if (std::max(a.x, a.y) > kSmoothAlpha) a = GgxAlphas{std::max(a.x, 1e-4f), std::max(a.y, 1e-4f)};
  return a;
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

// Sets a GGX lobe's alphas; false (alphas 0) when the lobe is smooth, a delta lobe.
bool SetAlphas(HostMaterial& h, GgxAlphas a) {
  const bool rough = std::max(a.x, a.y) > kSmoothAlpha;
  h.alpha = rough ? a.x : 0.0f;
  h.alphaY = rough ? a.y : 0.0f;
  return rough;
}

// A conductor (or the conductor under a coatedconductor's coating, prefix "conductor."), relative to a medium of
// index outsideEta: pbrt-v4's ConductorBxDF, the exact Fresnel of eta + i k per channel (the conductor lobe, core/
// lobes.h), in the glossy class when rough and the mirror class when smooth.
MappedMaterial MaterialMapper::Conductor(const Source& s, const std::string& prefix, float outsideEta) {
  MappedMaterial out;
  HostMaterial& h = out.material;
  h.lobe = kLobeConductor;
  MappedTexture reflectance;
  if (textures_.Spectrum(s.m.params, prefix + "reflectance", SpectrumUse::kAlbedo, &reflectance)) {
    // pbrt-v4's "reflectance" r: eta 1 and k = 2 sqrt(r) / sqrt(1 - r) (GetBsdf, core/scene_view.h), whose
    // normal-incidence reflectance is r; under a coat both are divided by its index, which only a constant r allows.
    const Vec3 r = Min(Max(reflectance.factor, Vec3(0.0f)), Vec3(0.9999f));
    if (outsideEta == 1.0f || reflectance.map >= 0) {
      h.conductorReflectance = true;
      h.kd = r;
      h.texture = reflectance.map;
    } else {
      h.kd = Vec3(1.0f / outsideEta);
      for (int c = 0; c < 3; ++c) h.ks[c] = 2.0f * std::sqrt(r[c] / (1.0f - r[c])) / outsideEta;
    }
  } else {
    Vec3 cuEta, cuK;
    NamedSpectrumRgb("metal-Cu-eta", &cuEta);  // pbrt-v4's defaults
    NamedSpectrumRgb("metal-Cu-k", &cuK);
    h.kd = RgbValue(load_, textures_, s, prefix + "eta", SpectrumUse::kUnbounded, cuEta) / outsideEta;
    h.ks = RgbValue(load_, textures_, s, prefix + "k", SpectrumUse::kUnbounded, cuK) / outsideEta;
  }
  h.cls = SetAlphas(h, Alphas(s, prefix)) ? kGlossy : kMirror;
  return out;
}

// pbrt-v4's DielectricMaterial (smooth: the class's own; rough: the rough lobe) and ThinDielectricMaterial.
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
    h.lobe = kLobeThinDielectric;
  else if (SetAlphas(h, Alphas(s, "")))
    h.lobe = kLobeRoughDielectric;
  return out;
}

// pbrt-v4's CoatedDiffuseMaterial: the coated lobe (core/lobes.h), its layer integrated here.
MappedMaterial MaterialMapper::CoatedDiffuse(const Source& s) {
  MappedMaterial out = Diffuse(s, "reflectance", Vec3(0.5f));
  HostMaterial& h = out.material;
  h.cls = kGlossy;
  h.lobe = kLobeCoated;
  h.ior = FloatValue(load_, textures_, s, "eta", 1.5f);
  if (!(h.ior > 0.0f) || !std::isfinite(h.ior)) h.ior = 1.0f;  // pbrt-v4 reads an eta of 0 as 1
  if (h.ior < 1.0f) {
    Approximate(s, "a coat less dense than the outside (\"eta\" below 1) is rendered with 1 / eta");
    h.ior = 1.0f / h.ior;
  }
  SetAlphas(h, Alphas(s, ""));
  float thickness = std::max(FloatValue(load_, textures_, s, "thickness", 0.01f), 0.0f);
  const Vec3 albedo = RgbValue(load_, textures_, s, "albedo", SpectrumUse::kAlbedo, Vec3(0.0f));
  if (MaxComponent(albedo) > 0.0f) {
    // pbrt-v4's layer then scatters (albedo, "g") as well as absorbs; only its absorption is kept.
    thickness *= 1.0f - Clamp((albedo.x + albedo.y + albedo.z) / 3.0f, 0.0f, 1.0f);
    Approximate(s,
                "the coat's medium \"albedo\" (and \"g\") is not supported yet: the layer only absorbs, at its "
                "absorption 1 - albedo");
  }
  // pbrt-v4's random walk ("maxdepth", default 10) meets the base at every second step.
  const int maxDepth = s.m.params.GetInt("maxdepth", 10);
  // The coat's reflectance and transmittance per angle: a one-row texture the lobe reads (core/lobes.h).
  Texture table;
  table.path = s.Label() + " (its coat's table)";
  table.width = kCoatTableRes;
  table.height = 1;
  table.texels.resize(size_t(kCoatTableRes));
  FillCoatTable(h.ior, GgxAlphas{h.alpha, h.alphaY}, thickness, table.texels.data());
  h.coat = CoatedLayerOf(h.ior, GgxAlphas{h.alpha, h.alphaY}, thickness, std::max(1, (maxDepth + 1) / 2),
                         table.texels.data());
  TextureMap map;
  map.texture = int(load_.scene.textures.size());
  map.options.clamp = true;
  load_.scene.textures.push_back(std::move(table));
  h.coatTable = int(load_.scene.textureMaps.size());
  load_.scene.textureMaps.push_back(map);
  return out;
}

// pbrt-v4's DiffuseTransmissionMaterial: reflectance and transmittance (default 0.25 each) times "scale", clamped to
// [0, 1].
MappedMaterial MaterialMapper::DiffuseTransmission(const Source& s) {
  const float scale = float(s.m.params.GetFloat("scale", 1.0));
  MappedMaterial out = Diffuse(s, "reflectance", Vec3(0.25f));
  HostMaterial& h = out.material;
  h.lobe = kLobeDiffuseTransmission;
  h.kd = Min(Max(h.kd * scale, Vec3(0.0f)), Vec3(1.0f));
  MappedTexture t;
  if (textures_.Spectrum(s.m.params, "transmittance", SpectrumUse::kAlbedo, &t)) {
    h.ks = t.factor;
    h.transmittanceTexture = t.map;
  } else {
    h.ks = Vec3(0.25f);
  }
  h.ks = Min(Max(h.ks * scale, Vec3(0.0f)), Vec3(1.0f));
  return out;
}

// pbrt-v4's MixMaterial: per hit point materials[1] with probability "amount" (default 0.5), else materials[0]
// (ResolveMix, core/scene_view.h). mixA and mixB hold the two pbrt materials' indices here; the shapes' builder
// turns them into the Scene's.
MappedMaterial MaterialMapper::Mix(const Source& s) {
  const PbrtParam* names = s.m.params.Find("materials", PbrtParamType::kString);
  if (!names || names->strings.size() != 2) {
    load_.Warn(s.m.loc, s.Label() + ": needs \"string materials\" with two names; a grey diffuse is used");
    return Diffuse(s, "", Vec3(0.5f));
  }
  MappedMaterial out;
  HostMaterial& h = out.material;
  int* index[2] = {&h.mixA, &h.mixB};
  for (int i = 0; i < 2; ++i) {
    auto found = load_.pbrt.namedMaterials.find(names->strings[size_t(i)]);
    if (found == load_.pbrt.namedMaterials.end()) {
      load_.Warn(s.m.loc,
                 s.Label() + ": no material named \"" + names->strings[size_t(i)] + "\"; a grey diffuse is used");
      return Diffuse(s, "", Vec3(0.5f));
    }
    *index[i] = found->second;
  }
  h.mix = true;
  h.mixAmount = Clamp(FloatValue(load_, textures_, s, "amount", 0.5f), 0.0f, 1.0f);
  return out;
}

MappedMaterial MaterialMapper::Map(const PbrtMaterial& m) {
  const Source s{m};
  if (m.colorSpace != "srgb")
    load_.WarnKind(
        "colorspace", m.loc,
        s.Label() + ": colour space \"" + m.colorSpace + "\" is not supported yet; its RGB values are used as sRGB");
  MappedMaterial out;
  const std::string& type = m.type;
  if (type == "diffuse") {
    out = Diffuse(s, "reflectance", Vec3(0.5f));
  } else if (type == "conductor") {
    out = Conductor(s, "", 1.0f);
  } else if (type == "coatedconductor") {
    const float interfaceEta = FloatValue(load_, textures_, s, "interface.eta", 1.5f);
    out = Conductor(s, "conductor.", interfaceEta > 0.0f ? interfaceEta : 1.5f);
    HostMaterial& h = out.material;
    const GgxAlphas coat = Alphas(s, "interface.");
    if (SetAlphas(h, GgxAlphas{std::max(h.alpha, coat.x), std::max(h.alphaY, coat.y)})) h.cls = kGlossy;
    Approximate(s,
                "mapped to a conductor (its Fresnel relative to the coat's index, the rougher of the two "
                "layers); the coat's own reflection is left out");
  } else if (type == "dielectric" || type == "thindielectric") {
    out = Dielectric(s);
  } else if (type == "coateddiffuse") {
    out = CoatedDiffuse(s);
  } else if (type == "diffusetransmission") {
    out = DiffuseTransmission(s);
  } else if (type == "mix") {
    return Mix(s);
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

const MappedMaterial& PbrtMaterials::Get(int index) {
  auto known = mapped_.find(index);
  if (known != mapped_.end()) return known->second;
  const PbrtMaterial& m = load_.pbrt.materials.at(size_t(index));
  MappedMaterial mapped = MaterialMapper(load_, textures_).Map(m);
  mapped.material.name = m.name.empty() ? m.type + "@" + m.loc.ToString() : m.name;
  return mapped_.emplace(index, std::move(mapped)).first->second;
}

}  // namespace tracer::pbrtload
