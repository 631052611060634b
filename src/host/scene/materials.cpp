// @file materials.cpp: the MTL -> material mapping (Blender's reading of the file), and the Scene's materials.
#include "materials.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>

#include "scene_text.h"
#include "textures.h"
#include "tracer/core/principled.h"
#include "tracer/host/file_util.h"

namespace tracer {
namespace loader {
namespace {

constexpr float kLargeEmission = 1e6f;  // Ke above this is legal but overflows float sums fast

// Clamps each channel to [lo, hi]; warns once if anything changed.
Vec3 ClampColor(Scene& scene, const MtlOrigin& origin, const char* key, Vec3 c, float lo, float hi) {
  Vec3 clamped(Clamp(c.x, lo, hi), Clamp(c.y, lo, hi), Clamp(c.z, lo, hi));
  if (clamped.x != c.x || clamped.y != c.y || clamped.z != c.z)
    Warn(scene, origin.path, origin.line,
         "material " + Quote(origin.name) + ": " + key + " " + FormatVec(c) + " is out of range; clamped to " +
             FormatVec(clamped));
  return clamped;
}

// Pm: Blender's Principled BSDF mixes a metal (f0 = the base colour, f90 = 1, no diffuse base) into the
// dielectric layer `out` holds by the metallic weight; here its f0, f90 and base are mixed instead (exact at 0 and
// 1). A fully metallic material smoother than the glossy class allows is a mirror, as a conductor is.
void BlendTowardMetal(HostMaterial& out, float metallic) {
  const Vec3 base = out.kd;
  out.kd = base * (1.0f - metallic);
  out.ks = out.ks * (1.0f - metallic) + base * metallic;
  out.f90 = out.f90 * (1.0f - metallic) + metallic;
  out.specularScale = 0.0f;  // a texture in the specular slot scales f0 (AddMaterials puts map_Kd's there)
  if (metallic >= 1.0f && out.alpha < kMinGlossyAlpha) {
    out.cls = kMirror;
    out.kd = Vec3(0.0f);
  }
  out.alpha = std::max(out.alpha, kMinGlossyAlpha);
}

// One warning per scene for a statement the material model cannot render (the scene's warnings hold it once).
void WarnNotRendered(Scene& scene, const MtlOrigin& origin, const std::string& key, size_t line,
                     const std::string& what) {
  const std::string prefix = ": " + key + " ";
  for (const std::string& w : scene.warnings)
    if (w.find(prefix + what) != std::string::npos) return;
  Warn(scene, origin.path, line, "material " + Quote(origin.name) + prefix + what + " (reported once)");
}

// Blender's Coat Roughness where the MTL gives a coat without Pcr.
constexpr float kBlenderCoatRoughness = 0.03f;

// The principled lobe (core/principled.h) over the glossy class's layer: Blender's sheen, coat and anisotropy, and
// the metallic weight, which the lobe mixes in per hit point (so that map_Pm can vary it).
void SetPrincipled(HostMaterial& out, const tinyobj::material_t& m, const MtlOrigin& origin, float metallic) {
  out.cls = kGlossy;
  out.lobe = kLobePrincipled;
  out.alpha = std::max(out.alpha, kMinGlossyAlpha);
  out.metallic = metallic;
  out.sheen = m.sheen;
  out.coatWeight = std::min(0.25f * m.clearcoat_thickness, 1.0f);  // Blender's importer: Coat Weight = Pc / 4
  out.coatAlpha = Sqr(origin.hasPcr ? m.clearcoat_roughness : kBlenderCoatRoughness);
  out.anisotropy = m.anisotropy;
  out.anisotropyRotation = m.anisotropy_rotation;
}

// `principled`: the material has a sheen, a coat, an anisotropy, map_Pm or map_Ps (WantsPrincipled).
HostMaterial ConvertMaterial(Scene& scene, const tinyobj::material_t& m, const MtlOrigin& origin, bool principled) {
  // tinyobjloader turns some tokens that are no numbers to our scan (such as "-.e1302") into NaN or inf
  // (a fuzzer finding): every value we use must be finite.
  const std::pair<const char*, bool> finite[] = {{"Ke", IsFinite(ToVec3(m.emission))},
                                                 {"Kd", IsFinite(ToVec3(m.diffuse))},
                                                 {"Ks", IsFinite(ToVec3(m.specular))},
                                                 {"Tf", IsFinite(ToVec3(m.transmittance))},
                                                 {"d", std::isfinite(m.dissolve)},
                                                 {"Ni", std::isfinite(m.ior)},
                                                 {"Ns", std::isfinite(m.shininess)},
                                                 {"Pr", std::isfinite(m.roughness)},
                                                 {"Pm", std::isfinite(m.metallic)},
                                                 {"Ps", std::isfinite(m.sheen)},
                                                 {"Pc", std::isfinite(m.clearcoat_thickness)},
                                                 {"Pcr", std::isfinite(m.clearcoat_roughness)},
                                                 {"aniso", std::isfinite(m.anisotropy)},
                                                 {"anisor", std::isfinite(m.anisotropy_rotation)}};
  for (const auto& f : finite)
    if (!f.second) Fail(origin.path, origin.line, "material " + Quote(origin.name) + ": " + f.first + " is not finite");
  Vec3 ke = ToVec3(m.emission);
  if (MaxComponent(ke) > kLargeEmission)
    Warn(scene, origin.path, origin.line,
         "material " + Quote(origin.name) + ": Ke " + FormatVec(ke) + " is very large; sums of it may overflow");
  HostMaterial out;
  out.name = m.name;
  out.ke = ClampColor(scene, origin, "Ke", ke, 0.0f, kInf);
  out.kd = ClampColor(scene, origin, "Kd", ToVec3(m.diffuse), 0.0f, 1.0f);
  out.ks = ClampColor(scene, origin, "Ks", ToVec3(m.specular), 0.0f, 1.0f);
  Vec3 tf = origin.hasTf ? ClampColor(scene, origin, "Tf", ToVec3(m.transmittance), 0.0f, 1.0f) : Vec3(1.0f);
  // d is opacity (dissolve), not transmission: traversal's cut-out test (core/scene_view.h) applies it.
  out.opacity = origin.hasD ? Clamp(m.dissolve, 0.0f, 1.0f) : 1.0f;
  float ni = origin.hasNi ? m.ior : 1.5f;  // Blender's IOR when the file names none
  if (ni <= 0.0f) {
    Warn(scene, origin.path, origin.line,
         "material " + Quote(origin.name) + ": Ni " + std::to_string(ni) +
             " is not a valid index of refraction; using 1.5");
    ni = 1.5f;
  }
  // The PBR extension's Pr replaces Ns's roughness, as Blender's importer reads it: alpha = Pr^2.
  out.alpha = origin.hasPr ? Sqr(m.roughness) : MtlAlpha(m.illum, origin.hasNs, m.shininess);
  const float metallic = origin.hasPm ? m.metallic : 0.0f;
  const bool specularMap = !m.specular_texname.empty();
  out.cls = ClassifyMaterial(m.illum, out.kd, out.ks, out.alpha, tf);
  // With Pm the metallic weight decides what is metal, not illum or a black Kd: the layer below, then the blend.
  if (origin.hasPm && out.cls != kDielectric && (metallic > 0.0f || out.cls == kMirror)) out.cls = kGlossy;
  // The principled lobe belongs to the glossy class: a layer without a specular part (Ks 0) reflects nothing.
  if (principled && out.cls != kDielectric) out.cls = kGlossy;
  if (out.cls == kDielectric) {
    out.kd = tf;
    out.ior = ni;
    if (ni <= 1.0f) {
      Warn(scene, origin.path, origin.line,
           "material " + Quote(origin.name) + ": a dielectric with Ni " + std::to_string(ni) + "; using 1.5");
      out.ior = 1.5f;
    }
  } else if (out.cls == kGlossy && !origin.hasPm && IsConductor(m.illum, out.kd, out.ks)) {
    // A conductor: f0 = Ks (Schlick's approximation of a metal's Fresnel), no diffuse base.
    out.kd = Vec3(0.0f);
    out.f90 = 1.0f;
    out.alpha = std::max(out.alpha, kMinGlossyAlpha);
    if (principled) SetPrincipled(out, m, origin, metallic);
  } else if (out.cls == kGlossy) {
    // A dielectric layer as Blender reads it: Ks's mean is the "Specular IOR Level" l (0.5 keeps Ni's
    // reflectance), so f0 = 2 l ((Ni - 1) / (Ni + 1))^2; f90 = min(1, 2 l) makes l = 0 reflect nothing.
    const float level = (out.ks.x + out.ks.y + out.ks.z) / 3.0f;
    const float f0Ni = Sqr((ni - 1.0f) / (ni + 1.0f));
    out.specularScale = 2.0f * f0Ni;
    out.ks = Vec3(std::min(out.specularScale * level, 1.0f));
    out.f90 = std::min(2.0f * level, 1.0f);
    if (principled) {
      SetPrincipled(out, m, origin, metallic);
    } else if (metallic > 0.0f) {
      BlendTowardMetal(out, metallic);
    } else {
      out.alpha = std::max(out.alpha, kMinGlossyAlpha);
      if (f0Ni == 0.0f && !specularMap) out.cls = kDiffuse;  // Ni 1: no specular reflection (as in Blender)
    }
  }
  if (principled && out.cls == kDielectric)
    WarnNotRendered(scene, origin, "Ps, Pc, aniso, map_Pm and map_Ps", origin.line,
                    "are not rendered on glass (Tf with illum 4, 6, 7 or 9): it has no sheen, coat or anisotropy");
  return out;
}

// A name defined twice (in one MTL or across several): tinyobjloader's usemtl finds the first definition. One
// warning per name, at the first later definition that differs from the first one; a definition that repeats the
// first one statement for statement, from the same folder (its texture paths mean the same files), loses nothing.
void WarnDuplicateMaterials(Scene& scene, const std::vector<MtlOrigin>& origins) {
  std::map<std::string, std::vector<const MtlOrigin*>> byName;
  for (const MtlOrigin& origin : origins) byName[origin.name].push_back(&origin);
  for (const MtlOrigin& origin : origins) {
    const std::vector<const MtlOrigin*>& all = byName[origin.name];
    if (all.size() < 2 || all[0] != &origin) continue;
    const auto same = [&origin](const MtlOrigin* other) {
      return origin.scanned && other->scanned && other->body == origin.body &&
             FolderOf(other->path) == FolderOf(origin.path);
    };
    const auto firstDifferent = std::find_if_not(all.begin() + 1, all.end(), same);
    if (firstDifferent == all.end()) continue;
    const std::string times = all.size() > 2 ? " (" + std::to_string(all.size()) + " definitions in all)" : "";
    Warn(scene, (*firstDifferent)->path, (*firstDifferent)->line,
         "material " + Quote(origin.name) + " is defined again" + times + "; the first definition, at " +
             Where(origin.path, origin.line) + ", is used");
  }
}

// The statement of `key` in a material. For a material our scan could not pair with tinyobjloader's (origin not
// scanned), the name tinyobjloader read, without options.
std::optional<TextureStatement> FindTexture(const MtlOrigin& origin, const std::string& tinyobjName,
                                            const std::string& key) {
  if (!origin.scanned)
    return tinyobjName.empty() ? std::nullopt
                               : std::optional<TextureStatement>({tinyobjName, TextureOptions{}, origin.line});
  auto it = origin.maps.find(key);
  return it == origin.maps.end() ? std::nullopt : std::optional<TextureStatement>(it->second);
}

// The first of `keys` the material states (bump, map_Bump and map_bump name one map).
std::optional<TextureStatement> FindTextureOf(const MtlOrigin& origin, const std::string& tinyobjName,
                                              std::initializer_list<const char*> keys) {
  for (const char* key : keys)
    if (std::optional<TextureStatement> t = FindTexture(origin, tinyobjName, key)) return t;
  return std::nullopt;
}

// A tangent-space normal map stored as a bump map (Blender's exporter writes its normal maps as map_Bump): bluish
// on average, red and green near one half. A height map is grey (r = g = b).
bool LooksLikeNormalMap(const Texture& t) {
  const auto [r, g, b] = MeanTexel(t);
  return b > r + 0.2 && b > g + 0.2 && std::fabs(r - 0.5) < 0.15 && std::fabs(g - 0.5) < 0.15;
}

// The principled lobe's table (core/principled.h: the coat's and the sheen's albedos, and an anisotropic base's), as
// a texture the lobe reads; rows of roughness for an anisotropic base under a roughness map.
int AddPrincipledTable(Scene& scene, const HostMaterial& m) {
  const float aspect = AnisotropyAspect(m.anisotropy);
  const int baseRows = aspect == 1.0f ? 0 : (m.roughnessTexture >= 0 ? kBaseTableRoughnessRows : 1);
  Texture table;
  table.path = "material " + Quote(m.name) + " (its principled lobe's table)";
  table.width = kPrincipledTableRes;
  table.height = PrincipledTableRows(baseRows);
  table.texels.resize(size_t(table.width) * size_t(table.height));
  FillPrincipledTable(m.coatAlpha, m.alpha, aspect, baseRows, table.texels.data());
  TextureMap map;
  map.texture = int(scene.textures.size());
  map.options.clamp = true;
  scene.textures.push_back(std::move(table));
  scene.textureMaps.push_back(map);
  return int(scene.textureMaps.size()) - 1;
}

}  // namespace

void AddMaterials(Scene& scene, const std::string& path, const AssetFolders& folders,
                  const std::vector<tinyobj::material_t>& objMaterials, const GuardedMaterialReader& reader,
                  const ObjScan& scan, const LoadOptions& options) {
  std::set<std::string> defined;
  TextureCache textureCache;
  for (size_t i = 0; i < objMaterials.size(); ++i) {
    const MtlOrigin& origin = reader.Origins().at(i);
    const tinyobj::material_t& om = objMaterials[i];
    const bool principled = om.sheen > 0.0f || om.clearcoat_thickness > 0.0f || om.anisotropy > 0.0f ||
                            FindTexture(origin, om.metallic_texname, "map_Pm") ||
                            FindTexture(origin, om.sheen_texname, "map_Ps");
    HostMaterial m = ConvertMaterial(scene, om, origin, principled);
    if (const std::optional<TextureStatement> kd = FindTexture(origin, om.diffuse_texname, "map_Kd"))
      m.texture = LoadTexture(scene, textureCache, folders, "map_Kd", *kd, origin, options);
    // map_Ks and map_Ns (or the PBR extension's map_Pr, which replaces it) as data (Blender's non-colour), for the
    // glossy class only. A metallic material's f0 follows its base colour: map_Kd's texels scale it.
    const bool metallic = origin.hasPm && om.metallic > 0.0f && m.lobe != kLobePrincipled;
    if (m.cls == kGlossy) {
      if (metallic)
        m.specularTexture = m.texture;
      else if (const std::optional<TextureStatement> ks = FindTexture(origin, om.specular_texname, "map_Ks"))
        m.specularTexture =
            LoadTexture(scene, textureCache, folders, "map_Ks", *ks, origin, options, TexelEncoding::kData);
      const std::optional<TextureStatement> pr = FindTexture(origin, om.roughness_texname, "map_Pr");
      if (const std::optional<TextureStatement> r =
              pr ? pr : FindTexture(origin, om.specular_highlight_texname, "map_Ns"))
        m.roughnessTexture = LoadTexture(scene, textureCache, folders, pr ? "map_Pr" : "map_Ns", *r, origin, options,
                                         TexelEncoding::kData);
    }
    // map_Pm and map_Ps as data: their texels replace Pm and Ps (Blender links them to the sockets). The lobe's table
    // last: it needs the roughness map's presence.
    if (m.lobe == kLobePrincipled) {
      if (const std::optional<TextureStatement> pm = FindTexture(origin, om.metallic_texname, "map_Pm"))
        m.metallicTexture =
            LoadTexture(scene, textureCache, folders, "map_Pm", *pm, origin, options, TexelEncoding::kData);
      if (const std::optional<TextureStatement> ps = FindTexture(origin, om.sheen_texname, "map_Ps"))
        m.sheenTexture =
            LoadTexture(scene, textureCache, folders, "map_Ps", *ps, origin, options, TexelEncoding::kData);
      m.layerTable = AddPrincipledTable(scene, m);
    }
    // map_Ke as colour: the emission is Ke times the texel; a file that gives map_Ke without a Ke (black Ke)
    // means the texture itself, as Blender reads it.
    if (const std::optional<TextureStatement> ke = FindTexture(origin, om.emissive_texname, "map_Ke")) {
      m.emissionTexture = LoadTexture(scene, textureCache, folders, "map_Ke", *ke, origin, options);
      if (m.emissionTexture >= 0 && !m.IsEmissive()) m.ke = Vec3(1.0f);
    }
    // map_d as opacity, for every class (cut-outs: traversal's CutoutFilter, core/scene_view.h).
    if (const std::optional<TextureStatement> d = FindTexture(origin, om.alpha_texname, "map_d"))
      m.opacityTexture =
          LoadTexture(scene, textureCache, folders, "map_d", *d, origin, options, TexelEncoding::kOpacity);
    // bump/map_Bump as heights, norm/map_Kn as tangent-space normals, both as data (core/scene_view.h,
    // MappedNormal). With both, the normal map is used.
    if (const std::optional<TextureStatement> norm = FindTextureOf(origin, om.normal_texname, {"norm", "map_Kn"})) {
      m.bumpTexture = LoadTexture(scene, textureCache, folders, "norm", *norm, origin, options, TexelEncoding::kData);
      m.bumpIsNormalMap = m.bumpTexture >= 0;
    }
    if (m.bumpTexture < 0) {
      if (const std::optional<TextureStatement> bump =
              FindTextureOf(origin, om.bump_texname, {"bump", "map_Bump", "map_bump"})) {
        m.bumpTexture = LoadTexture(scene, textureCache, folders, "bump", *bump, origin, options, TexelEncoding::kData);
        const TextureMap* map = m.bumpTexture >= 0 ? &scene.textureMaps[static_cast<size_t>(m.bumpTexture)] : nullptr;
        if (map && LooksLikeNormalMap(scene.textures[static_cast<size_t>(map->texture)])) {
          m.bumpIsNormalMap = true;
          Warn(scene, origin.path, bump->line,
               "material " + Quote(origin.name) + ": bump map " + Quote(bump->name) +
                   " looks like a tangent-space normal map (bluish, red and green near 0.5); read as one (write it as "
                   "norm to say so)");
        }
      }
    }
    scene.materials.push_back(m);
    defined.insert(om.name);
  }
  textureCache.Finish(scene);
  WarnDuplicateMaterials(scene, reader.Origins());
  std::set<std::string> reported;
  for (const auto& [line, name] : scan.usemtl)
    if (!defined.count(name) && reported.insert(name).second)
      Warn(scene, path, line, "usemtl " + Quote(name) + " names an undefined material; using grey diffuse (0.5)");
}

}  // namespace loader

// Emission (ke) is a property that any class may have, not a class of its own. Neither d (opacity) nor Ni
// makes glass: Tf with a transparent illum does.
MaterialClass ClassifyMaterial(int illum, Vec3 kd, Vec3 ks, float alpha, Vec3 tf) {
  if ((illum == 4 || illum == 6 || illum == 7 || illum == 9) && MaxComponent(tf) > 0.0f) return kDielectric;
  if (!(MaxComponent(ks) > 0.0f)) return kDiffuse;
  if (IsConductor(illum, kd, ks)) return alpha < kMinGlossyAlpha ? kMirror : kGlossy;
  return kGlossy;
}

bool IsConductor(int illum, Vec3 kd, Vec3 ks) {
  const bool reflectionIllum = illum == 3 || illum == 5 || illum == 7 || illum == 8;
  return (reflectionIllum && MaxComponent(ks) >= 0.5f) || (MaxComponent(kd) == 0.0f && MaxComponent(ks) > 0.0f);
}

float MtlAlpha(int illum, bool hasNs, float ns) {
  // Blender's importer: roughness r = 1 - sqrt(clamp(Ns, 0, 1000) / 1000), and without Ns r = 0 where illum
  // turns highlights or reflection on (2 to 8 here, 2 in Blender, which reads 3 to 8 as rough metal), else 1.
  // Its Principled BSDF's GGX alpha is r^2.
  float r = hasNs ? 1.0f - std::sqrt(Clamp(ns, 0.0f, 1000.0f) / 1000.0f) : (illum >= 2 && illum <= 8 ? 0.0f : 1.0f);
  return r * r;
}

}  // namespace tracer
