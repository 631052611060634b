// @file loader_materials_test.cpp: the MTL -> material mapping: classes, Ks/Ns/Ni as Blender reads them, Ke, Summary.
#include <gtest/gtest.h>
#include <stb/stb_image_write.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "loader_test_util.h"

namespace tracer::test {
namespace {

// ---- MTL to material class ----------------------------------------------------------------------------

TEST(ClassifyMaterialTest, Rules) {
  const Vec3 black(0.0f), white(1.0f), grey(0.5f);
  const float rough = 0.25f, smooth = 0.0f;  // GGX alpha (Ns 250, Ns 1000)
  // illum, kd, ks, alpha, tf
  EXPECT_EQ(ClassifyMaterial(2, grey, black, rough, white), kDiffuse);
  for (int illum : {4, 6, 7, 9}) EXPECT_EQ(ClassifyMaterial(illum, grey, black, rough, white), kDielectric);
  EXPECT_EQ(ClassifyMaterial(9, grey, black, rough, black), kDiffuse);           // a black Tf transmits nothing
  EXPECT_EQ(ClassifyMaterial(7, grey, Vec3(0.9f), smooth, black), kMirror);      // ... and illum 7 reflects
  EXPECT_EQ(ClassifyMaterial(2, grey, black, rough, Vec3(0.9f)), kDiffuse);      // Tf without glass illum
  EXPECT_EQ(ClassifyMaterial(7, grey, Vec3(0.9f), smooth, white), kDielectric);  // glass before mirror
  EXPECT_EQ(ClassifyMaterial(5, black, Vec3(0.9f), smooth, white), kMirror);
  for (int illum : {3, 8}) EXPECT_EQ(ClassifyMaterial(illum, black, Vec3(0.6f, 0, 0), smooth, white), kMirror);
  EXPECT_EQ(ClassifyMaterial(5, grey, Vec3(0.9f), rough, white), kGlossy);   // rough conductor
  EXPECT_EQ(ClassifyMaterial(5, grey, Vec3(0.1f), smooth, white), kGlossy);  // weak Ks: a layer, no mirror
  EXPECT_EQ(ClassifyMaterial(2, black, Vec3(0.9f, 0.6f, 0.2f), rough, white), kGlossy);
  EXPECT_EQ(ClassifyMaterial(2, black, Vec3(0.9f, 0.6f, 0.2f), smooth, white), kMirror);
  EXPECT_EQ(ClassifyMaterial(2, grey, Vec3(0.0f, 0.0f, 0.01f), rough, white), kGlossy);
  // Metal-like: a reflection illum with Ks >= 0.5, or black Kd under non-black Ks.
  EXPECT_TRUE(IsConductor(3, grey, Vec3(0.5f)));
  EXPECT_TRUE(IsConductor(2, black, Vec3(0.1f)));
  EXPECT_FALSE(IsConductor(2, grey, Vec3(0.9f)));
  EXPECT_FALSE(IsConductor(5, grey, Vec3(0.4f)));
  EXPECT_FALSE(IsConductor(2, black, black));
}

TEST(ClassifyMaterialTest, NsToAlphaAsBlenderReadsIt) {
  // r = 1 - sqrt(Ns / 1000), alpha = r^2; without Ns: smooth for the highlight and reflection illums.
  EXPECT_FLOAT_EQ(MtlAlpha(2, true, 250.0f), 0.25f);
  EXPECT_FLOAT_EQ(MtlAlpha(2, true, 90.0f), (1.0f - 0.3f) * (1.0f - 0.3f));
  EXPECT_FLOAT_EQ(MtlAlpha(2, true, 1000.0f), 0.0f);
  EXPECT_FLOAT_EQ(MtlAlpha(2, true, 1e6f), 0.0f);
  EXPECT_FLOAT_EQ(MtlAlpha(2, true, 0.0f), 1.0f);
  EXPECT_FLOAT_EQ(MtlAlpha(2, true, -5.0f), 1.0f);
  EXPECT_FLOAT_EQ(MtlAlpha(2, false, 1.0f), 0.0f);
  EXPECT_FLOAT_EQ(MtlAlpha(5, false, 1.0f), 0.0f);
  EXPECT_FLOAT_EQ(MtlAlpha(1, false, 1.0f), 1.0f);
  EXPECT_FLOAT_EQ(MtlAlpha(0, false, 1.0f), 1.0f);
}

TEST_F(LoaderTest, MtlKeysBecomeTheRightMaterial) {
  Write("c.mtl",
        "newmtl wall\nKd 0.5 0.5 0.5\nNi 1.5\n"      // no Tf: tinyobjloader's default 0 0 0 is no tint
        "newmtl tr\nKd 0.5 0.5 0.5\nNi 1.5\nTr 1\n"  // Tr is not read as opacity
        "newmtl glass\nillum 7\nNi 1.33\nTf 0.9 0.8 0.7\n"
        "newmtl glassNoNi\nillum 7\n"
        "newmtl mirror\nillum 5\nKs 0.9 0.9 0.9\n"
        "newmtl plastic\nKd 0.25 0.25 0.25\nKs 0.5 0.5 0.5\nNs 98\n"
        "newmtl sharp\nKd 0.5 0.5 0.5\nKs 0.5 0.5 0.5\nNs 1e6\n"
        "newmtl hot\nKd 0.8 0.6 0.4\nKs 0.5 0.2 0.1\n"
        "newmtl metal\nKd 0 0 0\nKs 0.9 0.6 0.2\nNs 250\n"
        "newmtl noNi\nKd 0.5 0.5 0.5\nKs 0.5 0.5 0.5\nNi 1.0\nNs 250\n"
        "newmtl veil\nKd 0.8 0 0\nd 0.5\nNi 1.5\n"
        "newmtl tinted\nillum 2\nKd 0.5 0.5 0.5\nTf 0.9 0.9 0.9\nNi 1.5\n"
        "newmtl blender\nNs 250\nKa 1 1 1\nKd 0.8 0.8 0.8\nKs 0.5 0.5 0.5\nKe 0 0 0\nNi 1.45\nd 1\nillum 2\n");
  std::string obj = "mtllib c.mtl\n" + std::string(kTriangle);
  const char* names[] = {"wall", "tr",    "glass", "glassNoNi", "mirror", "plastic", "sharp",
                         "hot",  "metal", "noNi",  "veil",      "tinted", "blender"};
  for (const char* name : names) obj += std::string("usemtl ") + name + "\nf 1 2 3\n";
  Scene scene = LoadScene(Write("c.obj", obj));
  ASSERT_EQ(scene.materials.size(), 13u);
  auto byName = [&](const std::string& name) -> const HostMaterial& {
    for (const HostMaterial& m : scene.materials)
      if (m.name == name) return m;
    throw std::runtime_error("no material " + name);
  };
  EXPECT_EQ(byName("wall").cls, kDiffuse);
  EXPECT_EQ(byName("tr").cls, kDiffuse);
  const HostMaterial& glass = byName("glass");
  EXPECT_EQ(glass.cls, kDielectric);
  EXPECT_FLOAT_EQ(glass.ior, 1.33f);
  EXPECT_FLOAT_EQ(glass.kd.x, 0.9f);  // kd holds Tf
  EXPECT_FLOAT_EQ(glass.kd.z, 0.7f);
  EXPECT_EQ(byName("glassNoNi").cls, kDielectric);
  EXPECT_EQ(byName("glassNoNi").ior, 1.5f);   // Blender's IOR where the file names none
  EXPECT_EQ(byName("glassNoNi").kd.x, 1.0f);  // no Tf: no tint
  EXPECT_EQ(byName("mirror").cls, kMirror);
  EXPECT_FLOAT_EQ(byName("mirror").ks.y, 0.9f);
  // A dielectric layer: f0 = 2 mean(Ks) ((Ni - 1) / (Ni + 1))^2 (Ni 1.5 where absent: 0.04), f90 = min(1, 2 mean(Ks)).
  const HostMaterial& plastic = byName("plastic");
  EXPECT_EQ(plastic.cls, kGlossy);
  EXPECT_NEAR(plastic.alpha, std::pow(1.0f - std::sqrt(0.098f), 2.0f), 1e-6f);
  EXPECT_NEAR(plastic.ks.x, 0.04f, 1e-6f);
  EXPECT_FLOAT_EQ(plastic.f90, 1.0f);
  EXPECT_FLOAT_EQ(plastic.kd.x, 0.25f);  // the base keeps Kd: no rescaling
  EXPECT_EQ(byName("sharp").alpha, kMinGlossyAlpha);
  const HostMaterial& hot = byName("hot");  // coloured Ks: its mean is the level, as in Blender
  EXPECT_EQ(hot.cls, kGlossy);
  EXPECT_NEAR(hot.ks.x, 2.0f * 0.04f * (0.8f / 3.0f), 1e-6f);
  EXPECT_NEAR(hot.ks.z, hot.ks.x, 1e-7f);
  EXPECT_NEAR(hot.f90, 1.6f / 3.0f, 1e-6f);
  EXPECT_FLOAT_EQ(hot.kd.x, 0.8f);
  EXPECT_FLOAT_EQ(hot.kd.y, 0.6f);
  EXPECT_FLOAT_EQ(hot.alpha, 1.0f);  // no Ns, no illum: rough (Blender)
  EXPECT_FALSE(HasWarning(scene, "Kd + Ks"));
  const HostMaterial& metal = byName("metal");  // black Kd: a conductor with f0 = Ks
  EXPECT_EQ(metal.cls, kGlossy);
  EXPECT_EQ(metal.kd, Vec3(0.0f));
  EXPECT_FLOAT_EQ(metal.ks.y, 0.6f);
  EXPECT_FLOAT_EQ(metal.alpha, 0.25f);
  EXPECT_EQ(byName("noNi").cls, kDiffuse);    // Ni 1 reflects nothing
  const HostMaterial& veil = byName("veil");  // d is opacity, not glass
  EXPECT_EQ(veil.cls, kDiffuse);
  EXPECT_FLOAT_EQ(veil.opacity, 0.5f);
  EXPECT_FLOAT_EQ(veil.kd.x, 0.8f);
  EXPECT_FALSE(HasWarning(scene, "veil")) << "d < 1 is a cut-out (Cutout.*), nothing to warn about";
  EXPECT_EQ(byName("tinted").cls, kDiffuse);
  // Blender's default exported material: f0 = 2 * 0.5 * (0.45 / 2.45)^2 = 0.0337, alpha = (1 - sqrt(0.25))^2.
  const HostMaterial& blender = byName("blender");
  EXPECT_EQ(blender.cls, kGlossy);
  EXPECT_NEAR(blender.ks.x, (0.45f / 2.45f) * (0.45f / 2.45f), 1e-6f);
  EXPECT_FLOAT_EQ(blender.f90, 1.0f);
  EXPECT_FLOAT_EQ(blender.alpha, 0.25f);
  EXPECT_FLOAT_EQ(blender.opacity, 1.0f);
}

TEST_F(LoaderTest, SpecularAndRoughnessMapsLoadAsData) {
  // map_Ks and map_Ns are data (no sRGB decoding): 128 reads as 128 / 255.
  const unsigned char pixel[3] = {128, 64, 255};
  ASSERT_NE(stbi_write_png((dir_ + "/spec.png").c_str(), 1, 1, 3, pixel, 3), 0);
  Scene scene = LoadWithMtl(
      "newmtl t\nKd 0.5 0.5 0.5\nKs 0.5 0.5 0.5\nmap_Kd spec.png\nmap_Ks spec.png\nmap_Ns spec.png\n"
      "newmtl d\nKd 0.5 0.5 0.5\nmap_Ks spec.png\n",
      "t");
  const HostMaterial& m = scene.materials[0];
  ASSERT_EQ(m.cls, kGlossy);
  ASSERT_GE(m.specularTexture, 0);
  ASSERT_GE(m.roughnessTexture, 0);
  EXPECT_EQ(m.specularTexture, m.roughnessTexture);  // one data texture, loaded once
  ASSERT_GE(m.texture, 0);
  EXPECT_NE(m.texture, m.specularTexture);  // the colour reading of the same file is another
  const auto image = [&](int map) -> const Texture& {
    return scene.textures[size_t(scene.textureMaps[size_t(map)].texture)];
  };
  EXPECT_EQ(scene.textures.size(), 2u) << "spec.png as colour and as data";
  EXPECT_FLOAT_EQ(image(m.specularTexture).texels[0].x, 128.0f / 255.0f);
  EXPECT_NEAR(image(m.texture).texels[0].x, SrgbToLinearReference(128.0f / 255.0f), 1e-6f);
  EXPECT_NEAR(m.specularScale, 2.0f * 0.04f, 1e-7f);
  EXPECT_EQ(scene.materials[1].cls, kDiffuse);  // map_Ks without Ks: no layer (Blender: level from Ks)
}

TEST_F(LoaderTest, OutOfRangeKdIsClampedWithWarning) {
  Scene scene = LoadWithMtl("newmtl a\nKd 0 0.5 2\n", "a");
  const HostMaterial& m = scene.materials[0];
  EXPECT_EQ(m.kd.x, 0.0f);
  EXPECT_EQ(m.kd.y, 0.5f);
  EXPECT_EQ(m.kd.z, 1.0f);
  EXPECT_TRUE(HasWarning(scene, "m.mtl:1: material 'a': Kd (0, 0.5, 2) is out of range"));
}

TEST_F(LoaderTest, NiZeroWarnsAndUsesOnePointFive) {
  Scene scene = LoadWithMtl("newmtl g\nillum 7\nNi 0\n", "g");
  EXPECT_EQ(scene.materials[0].ior, 1.5f);
  EXPECT_TRUE(HasWarning(scene, "material 'g': Ni 0"));
}

TEST_F(LoaderTest, HugeEmissionWarnsNonFiniteEmissionFails) {
  Scene scene = LoadWithMtl("newmtl sun\nKe 1e30 1e30 1e30\n", "sun");
  EXPECT_FLOAT_EQ(scene.materials[0].ke.x, 1e30f);
  EXPECT_TRUE(HasWarning(scene, "material 'sun': Ke (1e+30, 1e+30, 1e+30) is very large"));
  // "1e-21474836481" underflows to a finite 0 in strtod but overflows tinyobjloader's int exponent (UB; a
  // fuzzer finding): exponents of more than four digits are refused before the library sees them.
  for (const char* ke : {"Ke nan 1 1", "Ke 1 inf 1", "Ke 1 1 1e400", "Ke 1e-21474836481 0 0", "Ke 1 1E+99999 1",
                         "Ke 1e-21474836481zz 0 0", "Ke 1e-21474836481\xd7xagon 0 0"}) {
    SCOPED_TRACE(ke);
    Write("bad.mtl", std::string("newmtl x\n") + ke + "\n");
    std::string error =
        LoadError(Write("bad.obj", "mtllib bad.mtl\n" + std::string(kTriangle) + "usemtl x\nf 1 2 3\n"));
    EXPECT_TRUE(Contains(error, "bad.mtl:2:")) << error;
  }
  // "-.e1302" is no number to our line scan (tinyobjloader would read it as NaN: a fuzzer finding).
  Write("bad.mtl", "newmtl x\nKd 0.2 0.2 -.e1302\n");
  std::string error = LoadError(Write("bad.obj", "mtllib bad.mtl\n" + std::string(kTriangle) + "usemtl x\nf 1 2 3\n"));
  EXPECT_TRUE(Contains(error, "bad.mtl:2: Kd: '-.e1302' is not a number")) << error;
}

// A scene without emitters loads: the loader says so through HasLight (the command warns, unless --env or --env-map
// lights it), not through a warning of its own.
TEST_F(LoaderTest, NoEmittersIsNotAnError) {
  Scene dark = LoadScene(Write("dark.obj", std::string(kTriangle) + "f 1 2 3\n"));
  EXPECT_FALSE(dark.HasLight());
  EXPECT_FALSE(HasWarning(dark, "no emitters"));
  EXPECT_TRUE(Contains(NoLightWarning(dark), "dark.obj: no emitters (no triangle has a material with Ke > 0)"));
  Scene lit = LoadWithMtl("newmtl lamp\nKe 1 1 1\n", "lamp");
  EXPECT_TRUE(lit.HasLight());
}

TEST_F(LoaderTest, SummaryCountsClassesAndEmitters) {
  Write("s.mtl",
        "newmtl lamp\nKd 0.5 0.5 0.5\nKe 5 5 5\nnewmtl gloss\nKd 0.2 0.2 0.2\nKs 0.5 0.5 0.5\n"
        "newmtl glass\nillum 7\nNi 1.5\nnewmtl mirror\nillum 3\nKs 1 1 1\n");
  std::string obj = "mtllib s.mtl\n" + std::string(kTriangle) + "v 1 1 0\nf 1 2 3\n";
  for (const char* name : {"lamp", "gloss", "glass", "mirror", "lamp"})
    obj += std::string("usemtl ") + name + "\nf 2 4 3\n";
  Scene scene = LoadScene(Write("s.obj", obj));
  EXPECT_EQ(
      scene.Summary(),
      "scene: 6 triangles, 5 materials (2 diffuse, 1 glossy, 1 mirror, 1 dielectric; 1 emissive), 2 emitter triangles");
  EXPECT_EQ(scene.materials.back().name, "default");  // the first face precedes any usemtl
}

}  // namespace
}  // namespace tracer::test
