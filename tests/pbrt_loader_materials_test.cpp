// @file pbrt_loader_materials_test.cpp: pbrt-v4 materials and textures as the loader maps them onto the renderer's
// classes (the HostMaterial fields each mapping sets), and the warnings for the inexact ones: once per kind, at the
// first file:line.
#include <gtest/gtest.h>

#include <cmath>

#include "pbrt_loader_test_util.h"
#include "tracer/core/material.h"
#include "tracer/host/image_io.h"

namespace tracer {
namespace {

using test::NearVec;
using test::PbrtDir;

// The material of a triangle shaped by `material` (a Material or MakeNamedMaterial/NamedMaterial block).
Scene LoadMaterial(const PbrtDir& dir, const std::string& material) {
  return dir.LoadLit(material +
                     "\nShape \"trianglemesh\" \"point3 P\" [0 0 0 1 0 0 0 1 0] \"integer indices\" [0 1 2]\n");
}
const HostMaterial& First(const Scene& s) { return test::MaterialOf(s, 0); }

// Writes a w x h PNG of linear values (tone-mapped to sRGB, as WriteImage writes PNGs).
void WritePng(const std::string& path, int w, int h, const std::vector<float>& rgb) { WriteImage(path, rgb, w, h); }

TEST(PbrtLoaderMaterials, Diffuse) {
  PbrtDir dir;
  Scene s = LoadMaterial(dir, "Material \"diffuse\" \"rgb reflectance\" [0.2 0.4 0.6]");
  EXPECT_EQ(First(s).cls, kDiffuse);
  EXPECT_TRUE(NearVec(First(s).kd, Vec3(0.2f, 0.4f, 0.6f), 0.0f));
  s = LoadMaterial(dir, "Material \"diffuse\"");
  EXPECT_TRUE(NearVec(First(s).kd, Vec3(0.5f), 0.0f)) << "pbrt-v4's default reflectance";
  s = LoadMaterial(dir, "Material \"diffuse\" \"rgb reflectance\" [2 0 0.5]");
  EXPECT_TRUE(NearVec(First(s).kd, Vec3(1.0f, 0.0f, 0.5f), 0.0f)) << "a reflectance is clamped to [0, 1]";
  EXPECT_TRUE(s.warnings.empty()) << test::AllWarnings(s);
}

TEST(PbrtLoaderMaterials, ConductorFromNamedSpectra) {
  PbrtDir dir;
  // Gold's eta and k at 630, 532 and 465 nm (pbrt-v4's metal-Au tables): the conductor lobe keeps them, and its
  // Fresnel at normal incidence is ((n-1)^2+k^2)/((n+1)^2+k^2).
  Scene s = LoadMaterial(dir,
                         "Material \"conductor\" \"spectrum eta\" \"metal-Au-eta\" \"spectrum k\" \"metal-Au-k\" "
                         "\"float roughness\" 0.25");
  const HostMaterial& m = First(s);
  EXPECT_EQ(m.cls, kGlossy);
  EXPECT_EQ(m.lobe, kLobeConductor);
  EXPECT_TRUE(NearVec(FresnelConductor(1.0f, m.kd, m.ks), Vec3(0.932f, 0.769f, 0.387f), 2e-3f));
  EXPECT_NEAR(m.alpha, 0.5f, 1e-6f) << "remaproughness (default true): alpha = sqrt(roughness)";
  EXPECT_EQ(m.alphaY, m.alpha);
  EXPECT_TRUE(s.warnings.empty()) << "the exact conductor: nothing approximated\n" << test::AllWarnings(s);
  // No eta or k: copper, pbrt-v4's default.
  s = LoadMaterial(dir, "Material \"conductor\" \"float roughness\" 0.1 \"bool remaproughness\" false");
  EXPECT_TRUE(NearVec(FresnelConductor(1.0f, First(s).kd, First(s).ks), Vec3(0.924f, 0.610f, 0.567f), 2e-3f));
  EXPECT_NEAR(First(s).alpha, 0.1f, 1e-6f);
}

TEST(PbrtLoaderMaterials, ConductorFromRgbReflectanceAndAnisotropy) {
  PbrtDir dir;
  Scene s = LoadMaterial(dir, "Material \"conductor\" \"rgb eta\" [0.2 0.9 1.1] \"rgb k\" [3.9 2.4 2.1]");
  EXPECT_TRUE(NearVec(First(s).kd, Vec3(0.2f, 0.9f, 1.1f), 1e-6f)) << "eta";
  EXPECT_TRUE(NearVec(First(s).ks, Vec3(3.9f, 2.4f, 2.1f), 1e-6f)) << "k";
  EXPECT_EQ(First(s).cls, kMirror) << "roughness 0: a smooth conductor, the mirror class";
  EXPECT_EQ(First(s).lobe, kLobeConductor);
  EXPECT_TRUE(s.warnings.empty()) << test::AllWarnings(s);
  s = LoadMaterial(dir, "Material \"conductor\" \"rgb reflectance\" [0.9 0.5 0.1] \"float roughness\" 0.04");
  EXPECT_TRUE(First(s).conductorReflectance) << "pbrt's reflectance form: eta 1, k from r (at render time)";
  EXPECT_TRUE(NearVec(First(s).kd, Vec3(0.9f, 0.5f, 0.1f), 1e-6f));
  EXPECT_EQ(First(s).cls, kGlossy);
  EXPECT_NEAR(First(s).alpha, 0.2f, 1e-6f);
  // uroughness and vroughness: alpha along u and v (not remapped here).
  s = LoadMaterial(dir,
                   "Material \"conductor\" \"float uroughness\" 0.1 \"float vroughness\" 0.4 "
                   "\"bool remaproughness\" false");
  EXPECT_EQ(First(s).alpha, 0.1f);
  EXPECT_EQ(First(s).alphaY, 0.4f);
  EXPECT_TRUE(s.warnings.empty()) << "anisotropy is rendered\n" << test::AllWarnings(s);
  // Below pbrt's smoothness threshold in one direction only: rough, with the smooth side at 1e-4 (pbrt-v4 does so).
  s = LoadMaterial(dir,
                   "Material \"conductor\" \"float uroughness\" 0 \"float vroughness\" 0.3 "
                   "\"bool remaproughness\" false");
  EXPECT_EQ(First(s).cls, kGlossy);
  EXPECT_EQ(First(s).alpha, 1e-4f);
}

TEST(PbrtLoaderMaterials, Dielectrics) {
  PbrtDir dir;
  Scene s = LoadMaterial(dir, "Material \"dielectric\" \"float eta\" 1.33");
  EXPECT_EQ(First(s).cls, kDielectric);
  EXPECT_EQ(First(s).lobe, kLobeClass) << "smooth: the class's own";
  EXPECT_EQ(First(s).ior, 1.33f);
  EXPECT_TRUE(NearVec(First(s).kd, Vec3(1.0f), 0.0f));
  EXPECT_TRUE(s.warnings.empty()) << test::AllWarnings(s);
  s = LoadMaterial(dir, "Material \"dielectric\"");
  EXPECT_EQ(First(s).ior, 1.5f);
  s = LoadMaterial(dir, "Material \"dielectric\" \"spectrum eta\" \"glass-BK7\" \"float roughness\" 0.3");
  EXPECT_NEAR(First(s).ior, 1.5195f, 1e-4f) << "BK7 at 532 nm";
  EXPECT_EQ(test::CountWarnings(s, "dispersion"), 1u) << test::AllWarnings(s);
  EXPECT_EQ(First(s).lobe, kLobeRoughDielectric);
  EXPECT_NEAR(First(s).alpha, std::sqrt(0.3f), 1e-6f);
  EXPECT_EQ(s.warnings.size(), 1u) << test::AllWarnings(s);
  s = LoadMaterial(dir, "Material \"thindielectric\" \"float eta\" 1.4");
  EXPECT_EQ(First(s).cls, kDielectric);
  EXPECT_EQ(First(s).lobe, kLobeThinDielectric);
  EXPECT_EQ(First(s).ior, 1.4f);
  EXPECT_TRUE(s.warnings.empty()) << test::AllWarnings(s);
}

TEST(PbrtLoaderMaterials, CoatedDiffuse) {
  PbrtDir dir;
  Scene s = LoadMaterial(dir, "Material \"coateddiffuse\" \"rgb reflectance\" [0.7 0.2 0.1] \"float roughness\" 0.09");
  const HostMaterial& m = First(s);
  EXPECT_EQ(m.cls, kGlossy);
  EXPECT_EQ(m.lobe, kLobeCoated);
  EXPECT_TRUE(NearVec(m.kd, Vec3(0.7f, 0.2f, 0.1f), 0.0f));
  EXPECT_EQ(m.ior, 1.5f) << "pbrt-v4's default eta";
  EXPECT_NEAR(m.alpha, 0.3f, 1e-6f);
  // pbrt-v4's defaults: thickness 0.01, maxdepth 10 (5 base bounces). The coat's table: a one-row texture whose last
  // texel (normal incidence) holds the rough coat's reflectance, near the smooth 0.04.
  EXPECT_EQ(m.coat.tau, 0.01f);
  EXPECT_EQ(m.coat.bounces, 5);
  ASSERT_GE(m.coatTable, 0);
  const Texture& table = s.textures[size_t(s.textureMaps[size_t(m.coatTable)].texture)];
  ASSERT_EQ(table.width, kCoatTableRes);
  EXPECT_NEAR(table.texels[size_t(kCoatTableRes - 1)].x, 0.04f, 0.005f);
  EXPECT_GT(m.coat.internal, 0.4f);
  EXPECT_GT(m.coat.escape, 0.2f);
  EXPECT_LT(m.coat.internal + m.coat.escape, 1.0f) << "the layer absorbs, the rough coat loses";
  EXPECT_TRUE(s.warnings.empty()) << test::AllWarnings(s);
  // A smooth coat of eta 2 over a clear layer with every bounce: its normal-incidence reflectance is 1/9, and what
  // it sends back plus what leaves is all (the layer absorbs nothing).
  s = LoadMaterial(dir, "Material \"coateddiffuse\" \"float eta\" 2 \"float thickness\" 0 \"integer maxdepth\" 3");
  EXPECT_EQ(First(s).alpha, 0.0f) << "roughness 0: a smooth coat";
  EXPECT_EQ(First(s).coat.bounces, 2);
  const Texture& smooth = s.textures[size_t(s.textureMaps[size_t(First(s).coatTable)].texture)];
  EXPECT_NEAR(smooth.texels[size_t(kCoatTableRes - 1)].x, 1.0f / 9.0f, 1e-6f);
  EXPECT_EQ(smooth.texels[0].x, 1.0f) << "grazing";
  EXPECT_NEAR(First(s).coat.internal + First(s).coat.escape, 1.0f, 1e-4f);
  s = LoadMaterial(dir, "Material \"coateddiffuse\" \"rgb albedo\" [0.5 0.5 0.5]");
  EXPECT_EQ(test::CountWarnings(s, "\"albedo\" (and \"g\") is not supported yet"), 1u) << test::AllWarnings(s);
  EXPECT_NEAR(First(s).coat.tau, 0.005f, 1e-7f) << "only the absorption, 1 - albedo, of the layer";
}

TEST(PbrtLoaderMaterials, DiffuseTransmission) {
  PbrtDir dir;
  Scene s = LoadMaterial(dir, "Material \"diffusetransmission\" \"rgb reflectance\" [0.3 0.3 0.3]");
  EXPECT_EQ(First(s).cls, kDiffuse);
  EXPECT_EQ(First(s).lobe, kLobeDiffuseTransmission);
  EXPECT_TRUE(NearVec(First(s).kd, Vec3(0.3f), 0.0f));
  EXPECT_TRUE(NearVec(First(s).ks, Vec3(0.25f), 0.0f)) << "pbrt-v4's default transmittance";
  EXPECT_TRUE(s.warnings.empty()) << test::AllWarnings(s);
  s = LoadMaterial(dir, "Material \"diffusetransmission\" \"rgb transmittance\" [0.5 0.2 0.1] \"float scale\" 3");
  EXPECT_TRUE(NearVec(First(s).kd, Vec3(0.75f), 1e-6f)) << "the default 0.25, times scale";
  EXPECT_TRUE(NearVec(First(s).ks, Vec3(1.0f, 0.6f, 0.3f), 1e-6f)) << "times scale, clamped to 1";
}

TEST(PbrtLoaderMaterials, MixesAndApproximations) {
  PbrtDir dir;
  Scene s = LoadMaterial(
      dir,
      "MakeNamedMaterial \"a\" \"string type\" \"diffuse\" \"rgb reflectance\" [1 0 0]\n"
      "MakeNamedMaterial \"b\" \"string type\" \"dielectric\"\n"
      "MakeNamedMaterial \"m\" \"string type\" \"mix\" \"string materials\" [\"a\" \"b\"] \"float amount\" 0.8\n"
      "NamedMaterial \"m\"");
  const HostMaterial& m = First(s);
  ASSERT_TRUE(m.mix);
  EXPECT_EQ(m.mixAmount, 0.8f) << "the chance of materials[1]";
  EXPECT_EQ(s.materials[size_t(m.mixA)].cls, kDiffuse);
  EXPECT_TRUE(NearVec(s.materials[size_t(m.mixA)].kd, Vec3(1.0f, 0.0f, 0.0f), 0.0f));
  EXPECT_EQ(s.materials[size_t(m.mixB)].cls, kDielectric);
  EXPECT_TRUE(s.warnings.empty()) << test::AllWarnings(s);
  // A mix of a mix, and one that names itself: the cycle ends in grey at kMaxMixDepth, warned.
  s = LoadMaterial(dir,
                   "MakeNamedMaterial \"a\" \"string type\" \"diffuse\"\n"
                   "MakeNamedMaterial \"inner\" \"string type\" \"mix\" \"string materials\" [\"a\" \"a\"]\n"
                   "MakeNamedMaterial \"outer\" \"string type\" \"mix\" \"string materials\" [\"inner\" \"outer\"]\n"
                   "NamedMaterial \"outer\"");
  ASSERT_TRUE(First(s).mix);
  EXPECT_TRUE(s.materials[size_t(First(s).mixA)].mix) << "the inner mix";
  EXPECT_EQ(test::CountWarnings(s, "mixes nest more than 8 deep"), 1u) << test::AllWarnings(s);
  s = LoadMaterial(dir, "Material \"measured\" \"string filename\" \"x.bsdf\"");
  EXPECT_EQ(First(s).cls, kDiffuse);
  EXPECT_EQ(test::CountWarnings(s, "not supported yet"), 1u) << test::AllWarnings(s);
}

TEST(PbrtLoaderMaterials, WarningsOncePerKindAtTheFirstLine) {
  PbrtDir dir;
  const Scene s = dir.LoadLit(
      "MakeNamedMaterial \"one\" \"string type\" \"coatedconductor\"\n"
      "MakeNamedMaterial \"two\" \"string type\" \"coatedconductor\"\n"
      "NamedMaterial \"one\"\nShape \"trianglemesh\" \"point3 P\" [0 0 0 1 0 0 0 1 0] \"integer indices\" [0 1 2]\n"
      "NamedMaterial \"two\"\nShape \"trianglemesh\" \"point3 P\" [0 0 1 1 0 1 0 1 1] \"integer indices\" [0 1 2]\n"
      "LightSource \"goniometric\"\nLightSource \"projection\"\nLightSource \"goniometric\"\n");
  EXPECT_EQ(test::CountWarnings(s, "coatedconductor"), 1u) << test::AllWarnings(s);
  EXPECT_EQ(test::CountWarnings(s, "s.pbrt:2: material \"one\" (coatedconductor)"), 1u) << test::AllWarnings(s);
  EXPECT_EQ(test::CountWarnings(s, "(1 more like it)"), 2u) << test::AllWarnings(s);  // coatedconductor, goniometric
  EXPECT_EQ(test::CountWarnings(s, "s.pbrt:8: LightSource \"goniometric\" is not rendered yet"), 1u)
      << test::AllWarnings(s);
  EXPECT_EQ(test::CountWarnings(s, "s.pbrt:9: LightSource \"projection\" is not rendered yet"), 1u)
      << test::AllWarnings(s);
}

TEST(PbrtLoaderMaterials, ImageTextureAndItsOptions) {
  PbrtDir dir;
  WritePng(dir.File("t.png"), 2, 1, {0.2f, 0.4f, 0.6f, 0.8f, 0.5f, 0.1f});
  Scene s = LoadMaterial(dir,
                         "Texture \"t\" \"spectrum\" \"imagemap\" \"string filename\" \"t.png\" \"float uscale\" 2 "
                         "\"float vscale\" 3 \"float udelta\" 0.5 \"float vdelta\" 0.25 \"float scale\" 0.5 "
                         "\"string wrap\" \"clamp\"\n"
                         "Material \"diffuse\" \"texture reflectance\" \"t\"");
  const HostMaterial& m = First(s);
  ASSERT_GE(m.texture, 0);
  EXPECT_TRUE(NearVec(m.kd, Vec3(1.0f), 0.0f));
  const TextureMap& map = s.textureMaps[size_t(m.texture)];
  EXPECT_EQ(map.options.scale[0], 2.0f);
  EXPECT_EQ(map.options.scale[1], 3.0f);
  EXPECT_EQ(map.options.offset[0], 0.5f);
  EXPECT_EQ(map.options.offset[1], 0.25f);
  EXPECT_EQ(map.options.gain, 0.5f);
  EXPECT_EQ(map.options.base, 0.0f);
  EXPECT_TRUE(map.options.clamp);
  const Texture& t = s.textures[size_t(map.texture)];
  ASSERT_EQ(t.width, 2);
  EXPECT_NEAR(t.texels[0].x, 0.2f, 0.01f) << "a PNG is sRGB-decoded by default";
  EXPECT_NEAR(t.texels[1].z, 0.1f, 0.01f);
  // "invert": 1 - scale * texel; "encoding" "linear" reads the PNG's bytes as they are.
  s = LoadMaterial(dir,
                   "Texture \"t\" \"spectrum\" \"imagemap\" \"string filename\" \"t.png\" \"bool invert\" true "
                   "\"string encoding\" \"linear\"\nMaterial \"diffuse\" \"texture reflectance\" \"t\"");
  const TextureMap& inverted = s.textureMaps[size_t(First(s).texture)];
  EXPECT_EQ(inverted.options.base, 1.0f);
  EXPECT_EQ(inverted.options.gain, -1.0f);
  EXPECT_NEAR(s.textures[size_t(inverted.texture)].texels[0].x, 124.0f / 255.0f, 0.01f) << "sRGB 0.2 is byte 124";
}

TEST(PbrtLoaderMaterials, TextureTrees) {
  PbrtDir dir;
  WritePng(dir.File("t.png"), 1, 1, {0.5f, 0.5f, 0.5f});
  // A constant scale of an image: a factor on its map.
  Scene s = LoadMaterial(dir,
                         "Texture \"i\" \"spectrum\" \"imagemap\" \"string filename\" \"t.png\"\n"
                         "Texture \"s\" \"spectrum\" \"scale\" \"texture tex\" \"i\" \"float scale\" 0.5\n"
                         "Material \"diffuse\" \"texture reflectance\" \"s\"");
  EXPECT_TRUE(NearVec(First(s).kd, Vec3(0.5f), 0.0f));
  EXPECT_GE(First(s).texture, 0);
  // A mix of constants: a constant.
  s = LoadMaterial(
      dir,
      "Texture \"m\" \"spectrum\" \"mix\" \"rgb tex1\" [1 0 0] \"rgb tex2\" [0 0 1] \"float amount\" 0.25\n"
      "Material \"diffuse\" \"texture reflectance\" \"m\"");
  EXPECT_TRUE(NearVec(First(s).kd, Vec3(0.75f, 0.0f, 0.25f), 1e-6f));
  EXPECT_LT(First(s).texture, 0);
  // A checkerboard: baked into an image, tex1 where floor(s) + floor(t) is even.
  s = LoadMaterial(dir,
                   "Texture \"c\" \"spectrum\" \"checkerboard\" \"float uscale\" 4 \"float vscale\" 4 "
                   "\"rgb tex1\" [1 1 1] \"rgb tex2\" [0 0 0]\nMaterial \"diffuse\" \"texture reflectance\" \"c\"");
  ASSERT_GE(First(s).texture, 0);
  const TextureMap& map = s.textureMaps[size_t(First(s).texture)];
  const Texture& baked = s.textures[size_t(map.texture)];
  auto at = [&](float u, float v) {  // nearest texel, v = 0 at the bottom row
    const int x = int(u * float(baked.width)), y = int((1.0f - v) * float(baked.height));
    return baked.texels[size_t(y) * size_t(baked.width) + size_t(x)].x;
  };
  EXPECT_EQ(at(0.1f, 0.1f), 1.0f);
  EXPECT_EQ(at(0.3f, 0.1f), 0.0f);
  EXPECT_EQ(at(0.3f, 0.3f), 1.0f);
  EXPECT_EQ(test::CountWarnings(s, "baked into"), 1u) << test::AllWarnings(s);
}

TEST(PbrtLoaderMaterials, MissingTextureWarnsNamingTheFileAndLine) {
  PbrtDir dir;
  const Scene s = LoadMaterial(dir,
                               "Texture \"wood\" \"spectrum\" \"imagemap\" \"string filename\" \"textures/gone.tga\"\n"
                               "Material \"coateddiffuse\" \"texture reflectance\" \"wood\"");
  EXPECT_EQ(test::CountWarnings(s, "s.pbrt:2: texture \"wood\": image \"textures/gone.tga\" not found"), 1u)
      << test::AllWarnings(s);
  EXPECT_LT(First(s).texture, 0);
  EXPECT_TRUE(NearVec(First(s).kd, Vec3(0.5f), 0.0f)) << "the reflectance's default";
}

TEST(PbrtLoaderMaterials, AlphaTextureAndNormalMap) {
  PbrtDir dir;
  WritePng(dir.File("a.png"), 2, 1, {1.0f, 0.0f, 0.0f, 0.0f, 1.0f, 1.0f});
  WritePng(dir.File("n.png"), 1, 1, {0.5f, 0.5f, 1.0f});
  const Scene s = dir.LoadLit(
      "Texture \"a\" \"float\" \"imagemap\" \"string filename\" \"a.png\"\n"
      "Material \"diffuse\" \"string normalmap\" \"n.png\"\n"
      "Shape \"trianglemesh\" \"point3 P\" [0 0 0 1 0 0 0 1 0] \"integer indices\" [0 1 2] \"texture alpha\" \"a\"\n");
  const HostMaterial& m = First(s);
  ASSERT_GE(m.opacityTexture, 0);
  const Texture& alpha = s.textures[size_t(s.textureMaps[size_t(m.opacityTexture)].texture)];
  EXPECT_EQ(alpha.texels[0].x, 1.0f) << "a float texture reads the first channel";
  EXPECT_EQ(alpha.texels[1].x, 0.0f);
  EXPECT_EQ(alpha.texels[1].z, 0.0f) << "in every component";
  ASSERT_GE(m.bumpTexture, 0);
  EXPECT_TRUE(m.bumpIsNormalMap);
}

}  // namespace
}  // namespace tracer
