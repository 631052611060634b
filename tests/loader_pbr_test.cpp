// @file loader_pbr_test.cpp: Blender's PBR keys of an MTL read into the principled lobe (core/principled.h): each
// key's value, map_Pm and map_Ps as data replacing Pm and Ps, the lobe's table, the strict number rules with the file
// and line, and the BSDF and shading frame a hit gets (GetBsdf, ShadingFrame). Expected values come from the keys'
// definitions (Blender's importer: Coat Weight = Pc / 4, alpha = Pcr^2, Cycles' aspect sqrt(1 - 0.9 aniso)), not from
// a run.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "loader_test_util.h"
#include "tracer/core/scene_view.h"
#include "tracer/host/scene_data.h"

namespace tracer::test {
namespace {

// Blender 4's export of a Principled BSDF with the PBR extension, followed by `extra` statements.
std::string BlenderPbr(const std::string& extra) {
  return "newmtl paint\nNs 250\nKa 1 1 1\nKd 0.8 0.5 0.2\nKs 0.5 0.5 0.5\nKe 0 0 0\nNi 1.5\nd 1\nillum 2\nPr 0.4\n" +
         extra + "\n";
}

// The BSDF at a point of the one triangle of a scene, and its shading frame.
TriangleHit BsdfAtTheTriangle(const Scene& scene) { return BsdfAtTriangle(scene, 0.3f, 0.3f); }

TEST_F(LoaderTest, PbrKeysBecomeThePrincipledLobe) {
  const Scene scene = LoadWithMtl(BlenderPbr("Pm 0.25\nPs 0.3\nPc 2\nPcr 0.4\naniso 0.5\nanisor 0.25"), "paint");
  ASSERT_EQ(scene.materials.size(), 1u);
  const HostMaterial& m = scene.materials[0];
  EXPECT_EQ(m.cls, kGlossy);
  EXPECT_EQ(m.lobe, kLobePrincipled);
  EXPECT_FLOAT_EQ(m.metallic, 0.25f);
  EXPECT_FLOAT_EQ(m.sheen, 0.3f);
  EXPECT_FLOAT_EQ(m.coatWeight, 0.5f);  // Pc / 4
  EXPECT_FLOAT_EQ(m.coatAlpha, 0.16f);  // Pcr^2
  EXPECT_FLOAT_EQ(m.anisotropy, 0.5f);
  EXPECT_FLOAT_EQ(m.anisotropyRotation, 0.25f);
  // The layer before the metal is mixed in: the base colour and Ni 1.5's f0 at Blender's level 0.5.
  EXPECT_FLOAT_EQ(m.kd.x, 0.8f);
  EXPECT_NEAR(m.ks.x, 0.04f, 1e-6f);
  EXPECT_FLOAT_EQ(m.alpha, 0.16f);  // Pr^2
  // Its table: the coat's and sheen's row and, anisotropic, its base's rows at one roughness.
  ASSERT_GE(m.layerTable, 0);
  const Texture& table = scene.textures[size_t(scene.textureMaps[size_t(m.layerTable)].texture)];
  EXPECT_EQ(table.width, kPrincipledTableRes);
  EXPECT_EQ(table.height, 1 + kBaseTableAzimuths);
  for (const std::string& w : scene.warnings)
    EXPECT_FALSE(Contains(w, "m.mtl")) << "nothing to say about the keys: " << w;

  // A coat without Pcr has Blender's Coat Roughness 0.03; Pc 4 is a full coat; an isotropic lobe has one table row.
  const HostMaterial c = LoadWithMtl(BlenderPbr("Pc 4"), "paint").materials[0];
  EXPECT_EQ(c.lobe, kLobePrincipled);
  EXPECT_FLOAT_EQ(c.coatWeight, 1.0f);
  EXPECT_FLOAT_EQ(c.coatAlpha, 0.03f * 0.03f);
  // Blender writes the keys for every material: zeros leave it the glossy class's own (and its renders unchanged).
  const HostMaterial z = LoadWithMtl(BlenderPbr("Pm 0\nPs 0\nPc 0\nPcr 0.03\naniso 0\nanisor 0"), "paint").materials[0];
  EXPECT_EQ(z.lobe, kLobeClass);
  EXPECT_EQ(z.layerTable, -1);
}

TEST_F(LoaderTest, PbrSheenOnADiffuseMaterialMakesItGlossy) {
  // Ks 0 is the diffuse class; a sheen needs the principled lobe, which the glossy class runs (with no specular layer).
  const HostMaterial m = LoadWithMtl("newmtl felt\nKd 0.2 0.3 0.6\nKs 0 0 0\nPs 1\n", "felt").materials[0];
  EXPECT_EQ(m.cls, kGlossy);
  EXPECT_EQ(m.lobe, kLobePrincipled);
  EXPECT_EQ(m.ks.x, 0.0f);
  EXPECT_EQ(m.f90, 0.0f);
}

TEST_F(LoaderTest, PbrMapsReplacePmAndPsAsData) {
  WriteGreyPng(dir_ + "/white.png", 255);
  WriteGreyPng(dir_ + "/grey.png", 128);
  WriteGreyPng(dir_ + "/rough.png", 102);
  const Scene scene =
      LoadWithMtl(BlenderPbr("Pm 0\nPs 0\nmap_Pm white.png\nmap_Ps grey.png\nmap_Pr rough.png\naniso 1"), "paint");
  const HostMaterial& m = scene.materials[0];
  ASSERT_EQ(m.lobe, kLobePrincipled);
  ASSERT_GE(m.metallicTexture, 0);
  ASSERT_GE(m.sheenTexture, 0);
  // With a roughness map, the anisotropic base's table has rows of roughness.
  const Texture& table = scene.textures[size_t(scene.textureMaps[size_t(m.layerTable)].texture)];
  EXPECT_EQ(table.height, 1 + kBaseTableRoughnessRows * kBaseTableAzimuths);
  const TriangleHit h = BsdfAtTheTriangle(scene);
  EXPECT_EQ(h.bsdf.lobe, kLobePrincipled);
  EXPECT_FLOAT_EQ(h.bsdf.metallic, 1.0f);                 // map_Pm's texel, not Pm 0
  EXPECT_FLOAT_EQ(h.bsdf.sheen, 128.0f / 255.0f);         // data: not sRGB-decoded (that would be 0.216)
  EXPECT_NEAR(h.bsdf.roughness, 102.0f / 255.0f, 1e-6f);  // map_Pr's texel is the roughness
  // Cycles' anisotropy: alpha / aspect along the tangent, alpha aspect across it, aspect sqrt(1 - 0.9).
  const float alpha = Sqr(102.0f / 255.0f), aspect = std::sqrt(0.1f);
  EXPECT_NEAR(h.bsdf.alpha, alpha / aspect, 1e-5f);
  EXPECT_NEAR(h.bsdf.alphaY, alpha * aspect, 1e-5f);
  EXPECT_EQ(h.bsdf.baseRows, kBaseTableRoughnessRows);
}

TEST_F(LoaderTest, PbrMetalAndDielectricAtAHit) {
  // Pm 1 and Pm 0 under a full coat: the same layer (the base colour, f0 0.04) and coat; the metal's specular lobe
  // reflects the base colour at normal incidence, the dielectric's 0.04 in every channel.
  const Vec3 n(0.0f, 0.0f, 1.0f);
  const TriangleHit metal = BsdfAtTheTriangle(LoadWithMtl(BlenderPbr("Pm 1\nPc 4"), "paint"));
  const TriangleHit plastic = BsdfAtTheTriangle(LoadWithMtl(BlenderPbr("Pm 0\nPc 4"), "paint"));
  EXPECT_EQ(metal.bsdf.metallic, 1.0f);
  EXPECT_EQ(plastic.bsdf.metallic, 0.0f);
  EXPECT_EQ(metal.bsdf.coatWeight, 1.0f);
  const Vec3 sm = PrincipledSpecular(metal.bsdf, n, n, n), sp = PrincipledSpecular(plastic.bsdf, n, n, n);
  EXPECT_NEAR(sm.y / sm.x, 0.5f / 0.8f, 1e-5f);
  EXPECT_NEAR(sm.z / sm.x, 0.2f / 0.8f, 1e-5f);
  EXPECT_EQ(sp.x, sp.z);
  EXPECT_NEAR(sm.x / sp.x, 0.8f / 0.04f, 1e-3f * 20.0f);
}

TEST_F(LoaderTest, PbrAnisotropyFollowsTheUvsAndTurns) {
  // dp/du along +x (the uvs), the normal +z: the first axis is +x, and anisor 0.25 turns it a quarter, to +y.
  Write("m.mtl", BlenderPbr("aniso 0.8\nanisor 0") + BlenderPbr("aniso 0.8\nanisor 0.25").replace(7, 5, "turned"));
  const std::string uvs = "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 0 1\n";
  const Frame straight = BsdfAtTheTriangle(LoadScene(Write("a.obj", uvs + "usemtl paint\nf 1/1 2/2 3/3\n"))).frame;
  const Frame turned = BsdfAtTheTriangle(LoadScene(Write("b.obj", uvs + "usemtl turned\nf 1/1 2/2 3/3\n"))).frame;
  EXPECT_NEAR(straight.s.x, 1.0f, 1e-6f);
  EXPECT_NEAR(turned.s.y, 1.0f, 1e-6f);
  EXPECT_NEAR(turned.t.x, -1.0f, 1e-6f);  // t = n x s
  // Without uvs the first axis runs about the vertical axis (y x n): +x for a normal along +z.
  const Frame noUvs = BsdfAtTheTriangle(LoadScene(Write("c.obj", std::string("mtllib m.mtl\n") + kTriangle +
                                                                     "usemtl paint\nf 1 2 3\n")))
                          .frame;
  EXPECT_NEAR(noUvs.s.x, 1.0f, 1e-6f);
  EXPECT_NEAR(noUvs.n.z, 1.0f, 1e-6f);
}

TEST_F(LoaderTest, PbrNumbersAreCheckedWithTheirLine) {
  // Each key's range (Pc's runs to 4: Blender reads a coat of weight Pc / 4), its count and its number, at its file and
  // line (line 11: after BlenderPbr's ten).
  const std::pair<const char*, const char*> bad[] = {
      {"Ps 1.5", "Ps '1.5' is out of range: expected a sheen weight in [0, 1]"},
      {"Pc 4.5", "Pc '4.5' is out of range: expected a clearcoat weight in [0, 4]"},
      {"Pcr -0.1", "Pcr '-0.1' is out of range: expected a roughness in [0, 1]"},
      {"aniso 2", "aniso '2' is out of range: expected an anisotropy in [0, 1]"},
      {"anisor x", "anisor: 'x' is not a number"},
      {"Ps 0.1 0.2", "Ps takes one number"},
      {"aniso inf", "aniso 'inf' is not finite"},
  };
  for (const auto& [statement, message] : bad) {
    Write("m.mtl", BlenderPbr(statement));
    const std::string error = LoadError(Write("m.obj", std::string("mtllib m.mtl\n") + kTriangle + "f 1 2 3\n"));
    EXPECT_TRUE(Contains(error, "m.mtl:11: " + std::string(message))) << statement << ": " << error;
  }
}

TEST_F(LoaderTest, PbrLayersOnGlassAreNamed) {
  const Scene scene = LoadWithMtl("newmtl glass\nKd 1 1 1\nTf 1 1 1\nillum 7\nNi 1.5\nPs 0.5\nPc 1\n", "glass");
  EXPECT_EQ(scene.materials[0].cls, kDielectric);
  EXPECT_EQ(scene.materials[0].lobe, kLobeClass);
  EXPECT_TRUE(
      HasWarning(scene, "m.mtl:1: material 'glass': Ps, Pc, aniso, map_Pm and map_Ps are not rendered on glass"))
      << AllWarnings(scene);
}

}  // namespace
}  // namespace tracer::test
