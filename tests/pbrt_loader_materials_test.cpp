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
  // Gold's eta and k at 630, 532 and 465 nm (pbrt-v4's metal-Au tables): f0 ((n-1)^2+k^2)/((n+1)^2+k^2).
  Scene s = LoadMaterial(dir,
                         "Material \"conductor\" \"spectrum eta\" \"metal-Au-eta\" \"spectrum k\" \"metal-Au-k\" "
                         "\"float roughness\" 0.25");
  const HostMaterial& m = First(s);
  EXPECT_EQ(m.cls, kGlossy);
  EXPECT_TRUE(NearVec(m.ks, Vec3(0.932f, 0.769f, 0.387f), 2e-3f));
  EXPECT_TRUE(NearVec(m.kd, Vec3(0.0f), 0.0f));
  EXPECT_EQ(m.f90, 1.0f);
  EXPECT_NEAR(m.alpha, 0.5f, 1e-6f) << "remaproughness (default true): alpha = sqrt(roughness)";
  EXPECT_EQ(test::CountWarnings(s, "s.pbrt:2: material (conductor): mapped to the glossy class"), 1u)
      << test::AllWarnings(s);
  // No eta or k: copper, pbrt-v4's default.
  s = LoadMaterial(dir, "Material \"conductor\" \"float roughness\" 0.1 \"bool remaproughness\" false");
  EXPECT_TRUE(NearVec(First(s).ks, Vec3(0.924f, 0.610f, 0.567f), 2e-3f));
  EXPECT_NEAR(First(s).alpha, 0.1f, 1e-6f);
}

TEST(PbrtLoaderMaterials, ConductorFromRgbAndReflectance) {
  PbrtDir dir;
  Scene s = LoadMaterial(dir, "Material \"conductor\" \"rgb eta\" [0.2 0.9 1.1] \"rgb k\" [3.9 2.4 2.1]");
  const float n[3] = {0.2f, 0.9f, 1.1f}, k[3] = {3.9f, 2.4f, 2.1f};
  for (int c = 0; c < 3; ++c)
    EXPECT_NEAR(First(s).ks[c], (Sqr(n[c] - 1) + Sqr(k[c])) / (Sqr(n[c] + 1) + Sqr(k[c])), 1e-6f);
  EXPECT_EQ(First(s).cls, kMirror) << "roughness 0: a mirror";
  EXPECT_EQ(test::CountWarnings(s, "is a mirror of constant reflectance"), 1u) << test::AllWarnings(s);
  s = LoadMaterial(dir, "Material \"conductor\" \"rgb reflectance\" [0.9 0.5 0.1] \"float roughness\" 0.04");
  EXPECT_TRUE(NearVec(First(s).ks, Vec3(0.9f, 0.5f, 0.1f), 1e-6f)) << "pbrt's reflectance form: f0 = reflectance";
  EXPECT_EQ(First(s).cls, kGlossy);
  EXPECT_NEAR(First(s).alpha, 0.2f, 1e-6f);
}

TEST(PbrtLoaderMaterials, Dielectrics) {
  PbrtDir dir;
  Scene s = LoadMaterial(dir, "Material \"dielectric\" \"float eta\" 1.33");
  EXPECT_EQ(First(s).cls, kDielectric);
  EXPECT_EQ(First(s).ior, 1.33f);
  EXPECT_TRUE(NearVec(First(s).kd, Vec3(1.0f), 0.0f));
  EXPECT_TRUE(s.warnings.empty()) << test::AllWarnings(s);
  s = LoadMaterial(dir, "Material \"dielectric\"");
  EXPECT_EQ(First(s).ior, 1.5f);
  s = LoadMaterial(dir, "Material \"dielectric\" \"spectrum eta\" \"glass-BK7\" \"float roughness\" 0.3");
  EXPECT_NEAR(First(s).ior, 1.5195f, 1e-4f) << "BK7 at 532 nm";
  EXPECT_EQ(test::CountWarnings(s, "dispersion"), 1u) << test::AllWarnings(s);
  EXPECT_EQ(test::CountWarnings(s, "rough dielectrics are not supported yet"), 1u) << test::AllWarnings(s);
  s = LoadMaterial(dir, "Material \"thindielectric\" \"float eta\" 1.4");
  EXPECT_EQ(First(s).cls, kDielectric);
  EXPECT_EQ(First(s).ior, 1.4f);
  EXPECT_EQ(test::CountWarnings(s, "thin dielectric"), 1u) << test::AllWarnings(s);
}

TEST(PbrtLoaderMaterials, CoatedDiffuseIsGlossy) {
  PbrtDir dir;
  Scene s = LoadMaterial(dir, "Material \"coateddiffuse\" \"rgb reflectance\" [0.7 0.2 0.1] \"float roughness\" 0.09");
  const HostMaterial& m = First(s);
  EXPECT_EQ(m.cls, kGlossy);
  EXPECT_TRUE(NearVec(m.kd, Vec3(0.7f, 0.2f, 0.1f), 0.0f));
  EXPECT_TRUE(NearVec(m.ks, Vec3(0.04f), 1e-6f)) << "f0 of eta 1.5";
  EXPECT_NEAR(m.alpha, 0.3f, 1e-6f);
  EXPECT_EQ(test::CountWarnings(s, "pbrt-v4's layered BSDF is stochastic"), 1u) << test::AllWarnings(s);
  s = LoadMaterial(dir, "Material \"coateddiffuse\" \"float eta\" 2 \"bool remaproughness\" false");
  EXPECT_NEAR(First(s).ks.x, 1.0f / 9.0f, 1e-6f);
  EXPECT_EQ(First(s).alpha, kMinGlossyAlpha) << "a smooth coat: the class's smallest alpha";
}

TEST(PbrtLoaderMaterials, ApproximationsAndMixes) {
  PbrtDir dir;
  Scene s = LoadMaterial(dir, "Material \"diffusetransmission\" \"rgb reflectance\" [0.3 0.3 0.3]");
  EXPECT_EQ(First(s).cls, kDiffuse);
  EXPECT_TRUE(NearVec(First(s).kd, Vec3(0.3f), 0.0f));
  EXPECT_EQ(test::CountWarnings(s, "\"transmittance\" is left out"), 1u);
  s = LoadMaterial(
      dir,
      "MakeNamedMaterial \"a\" \"string type\" \"diffuse\" \"rgb reflectance\" [1 0 0]\n"
      "MakeNamedMaterial \"b\" \"string type\" \"dielectric\"\n"
      "MakeNamedMaterial \"m\" \"string type\" \"mix\" \"string materials\" [\"a\" \"b\"] \"float amount\" 0.8\n"
      "NamedMaterial \"m\"");
  EXPECT_EQ(First(s).cls, kDielectric) << "amount 0.8: the second material is the likelier";
  EXPECT_EQ(test::CountWarnings(s, "s.pbrt:4: material \"m\" (mix)"), 1u) << test::AllWarnings(s);
  s = LoadMaterial(dir, "Material \"measured\" \"string filename\" \"x.bsdf\"");
  EXPECT_EQ(First(s).cls, kDiffuse);
  EXPECT_EQ(test::CountWarnings(s, "not supported yet"), 1u) << test::AllWarnings(s);
}

TEST(PbrtLoaderMaterials, WarningsOncePerKindAtTheFirstLine) {
  PbrtDir dir;
  const Scene s = dir.LoadLit(
      "MakeNamedMaterial \"one\" \"string type\" \"coateddiffuse\"\n"
      "MakeNamedMaterial \"two\" \"string type\" \"coateddiffuse\"\n"
      "NamedMaterial \"one\"\nShape \"trianglemesh\" \"point3 P\" [0 0 0 1 0 0 0 1 0] \"integer indices\" [0 1 2]\n"
      "NamedMaterial \"two\"\nShape \"trianglemesh\" \"point3 P\" [0 0 1 1 0 1 0 1 1] \"integer indices\" [0 1 2]\n"
      "LightSource \"goniometric\"\nLightSource \"projection\"\nLightSource \"goniometric\"\n");
  EXPECT_EQ(test::CountWarnings(s, "coateddiffuse"), 1u) << test::AllWarnings(s);
  EXPECT_EQ(test::CountWarnings(s, "s.pbrt:2: material \"one\" (coateddiffuse)"), 1u) << test::AllWarnings(s);
  EXPECT_EQ(test::CountWarnings(s, "(1 more like it)"), 2u) << test::AllWarnings(s);  // coateddiffuse, goniometric
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
