// @file loader_mtl_strict_test.cpp: MTL files from other tools: numbers checked as strictly as the OBJ's (errors
// naming the file and line), the format's colour forms, duplicate definitions, and Blender's PBR keys.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "loader_test_util.h"
#include "tracer/host/backends.h"

namespace tracer::test {
namespace {

// The error of a scene whose material 'x' is `mtl` (its statements, after "newmtl x").
class MtlStrictTest : public LoaderTest {
 protected:
  std::string ErrorOf(const std::string& statements) {
    Write("bad.mtl", "newmtl x\n" + statements + "\n");
    return LoadError(Write("bad.obj", "mtllib bad.mtl\n" + std::string(kTriangle) + "usemtl x\nf 1 2 3\n"));
  }
};

TEST_F(MtlStrictTest, MalformedNumbersAreErrorsNamingFileAndLine) {
  struct Case {
    const char* statement;
    const char* says;
  };
  const Case cases[] = {
      {"Kd 0,8 0,5 0,2", "Kd: '0,8' is not a number (the decimal separator is '.', not ',')"},
      {"Kd 0.8 abc 0.7", "Kd: 'abc' is not a number"},
      {"Kd 0.8 0.5 0.2 junk", "Kd takes r [g b]: one or three numbers, not 4 ('junk' follows the numbers)"},
      {"Kd 0.8 0.5", "Kd takes r [g b]: one or three numbers, not 2"},
      {"Ks", "Ks takes r [g b]: one or three numbers, not 0"},
      {"Ke -1 0 0", "Ke '-1' is negative: a colour's channels are >= 0"},
      {"Kd 0.5 -0.1 0.5", "Kd '-0.1' is negative"},
      {"d 7", "d '7' is out of range: expected an opacity in [0, 1] (1: opaque)"},
      {"d -halo 2", "d '2' is out of range"},
      {"Tr 5", "Tr '5' is out of range: expected a transparency in [0, 1] (0: opaque)"},
      {"Ns -1", "Ns '-1' is out of range: expected an exponent >= 0"},
      {"Ns 10 20", "Ns takes one number (an exponent >= 0), not 2"},
      {"Ni 1.5 x", "Ni takes one number (an index of refraction), not 2 ('x' follows the numbers)"},
      {"illum 99", "illum '99' is out of range: expected an illumination model, 0 to 10"},
      {"illum -1", "illum '-1' is out of range"},
      {"illum 2.5", "illum '2.5': expected a whole number, 0 to 10"},
      {"illum two", "illum: 'two' is not a number"},
      {"Pr 1.5", "Pr '1.5' is out of range: expected a roughness in [0, 1]"},
      {"Pm -0.5", "Pm '-0.5' is out of range: expected a metallic weight in [0, 1]"},
      {"Kd nan 0 0", "Kd 'nan' is not finite"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.statement);
    const std::string error = ErrorOf(c.statement);
    EXPECT_TRUE(Contains(error, dir_ + "/bad.mtl:2: " + c.says)) << error;
  }
}

TEST_F(MtlStrictTest, TheCliRefusesWithExitOneAndWritesNothing) {
  Write("bad.mtl", "newmtl x\nKd 0,8 0,5 0,2\n");
  const std::string obj = Write("bad.obj", "mtllib bad.mtl\n" + std::string(kTriangle) + "usemtl x\nf 1 2 3\n");
  const CommandResult r = RunTracer(obj + " --backend cpu --spp 1 --width 8 --height 8 -o " + dir_ + "/out.png");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_TRUE(Contains(r.output, "tracer: error: " + dir_ + "/bad.mtl:2: Kd: '0,8' is not a number")) << r.output;
  EXPECT_FALSE(FileExists(dir_ + "/out.png"));
}

TEST_F(MtlStrictTest, TheFormatsToleratedFormsStillLoad) {
  Write("ok.mtl",
        "newmtl grey\nKd 0.25\n"                        // one value: g and b are r (the MTL format)
        "newmtl xyz\nKd xyz 0.9505 1 1.089\n"           // CIE XYZ of D65 white: linear sRGB white
        "newmtl spectral\nKd spectral green.rfl 0.5\n"  // spectral curves: warned about
        "newmtl halo\nKd 0.5 0.5 0.5 # a comment\nd -halo 0.5\nTr 0  0\nillum 10\nNs 0\nsharpness 60\nKm 1\n"
        "Ka 0 0 0c\n"  // unused statements (Ka, Tr) as McGuire's archive writes them: warned about
        "newmtl odd\nKd 0.1 0.2 0.3\nfrobnicate 7\nfrobnicate 8\n");
  const Scene scene =
      LoadScene(Write("ok.obj", "mtllib ok.mtl\n" + std::string(kTriangle) +
                                    "usemtl grey\nf 1 2 3\nusemtl xyz\nf 1 2 3\nusemtl spectral\nf 1 2 3\n"
                                    "usemtl halo\nf 1 2 3\nusemtl odd\nf 1 2 3\n"));
  ASSERT_EQ(scene.materials.size(), 5u);
  EXPECT_EQ(scene.materials[0].kd.x, 0.25f);
  EXPECT_EQ(scene.materials[0].kd.y, 0.25f);
  EXPECT_EQ(scene.materials[0].kd.z, 0.25f);
  for (float c : {scene.materials[1].kd.x, scene.materials[1].kd.y, scene.materials[1].kd.z})
    EXPECT_NEAR(c, 1.0f, 2e-3f);
  EXPECT_EQ(scene.materials[3].opacity, 0.5f);
  for (const char* warning : {"/ok.mtl:6: Kd spectral: spectral curves (.rfl) are not supported",
                              "/ok.mtl:18: unknown MTL statement 'frobnicate'; ignored (reported once)",
                              "/ok.mtl:10: Tr takes one number, not 2; Tr is not used",
                              "/ok.mtl:15: Ka: '0c' is not a number; Ka is not used, so the statement is ignored"})
    EXPECT_TRUE(HasWarning(scene, warning)) << warning;
  EXPECT_EQ(CountWarnings(scene, "unknown MTL statement"), 1u) << "one warning per keyword";
}

TEST_F(MtlStrictTest, IdenticalDuplicateDefinitionsAreNotWarnedAbout) {
  // Two MTL files of one folder that both define 'shared' the same way (as exporters write a library per object).
  Write("a.mtl", "newmtl shared\nKd 0.5 0.5 0.5\nNs 10\n");
  Write("b.mtl", "# the same material\nnewmtl shared\nKd  0.5 0.5 0.5\n\nNs 10\nnewmtl other\nKd 1 0 0\n");
  Scene same =
      LoadScene(Write("s.obj", "mtllib a.mtl\nmtllib b.mtl\n" + std::string(kTriangle) + "usemtl shared\nf 1 2 3\n"));
  EXPECT_FALSE(HasWarning(same, "defined again")) << (same.warnings.empty() ? "" : same.warnings[0]);
  // A different second definition is still reported: the first one is used.
  Write("c.mtl", "newmtl shared\nKd 0.9 0.1 0.1\nNs 10\n");
  Scene different =
      LoadScene(Write("d.obj", "mtllib a.mtl\nmtllib c.mtl\n" + std::string(kTriangle) + "usemtl shared\nf 1 2 3\n"));
  EXPECT_TRUE(HasWarning(different, dir_ + "/c.mtl:1: material 'shared' is defined again; the first definition, at " +
                                        dir_ + "/a.mtl:1, is used"));
}

// ---- Blender 4's PBR keys --------------------------------------------------------------------------------------

// Blender 4's export of a Principled BSDF with the PBR extension, metallic `pm`.
std::string BlenderPbr(const std::string& pm) {
  return "newmtl paint\nNs 250\nKa 1 1 1\nKd 0.8 0.5 0.2\nKs 0.5 0.5 0.5\nKe 0 0 0\nNi 1.45\nd 1\nillum 2\nPr "
         "0.3\nPm " +
         pm + "\nPs 0\nPc 0\nPcr 0.03\naniso 0\nanisor 0\n";
}

TEST_F(LoaderTest, PbrMetallicMakesAConductorAndZeroADielectricLayer) {
  const Scene metal = LoadWithMtl(BlenderPbr("1"), "paint");
  const Scene plastic = LoadWithMtl(BlenderPbr("0"), "paint");
  const HostMaterial& m = metal.materials[0];
  const HostMaterial& p = plastic.materials[0];
  EXPECT_EQ(m.cls, kGlossy);
  EXPECT_EQ(m.kd.x, 0.0f);  // no diffuse base
  EXPECT_EQ(m.kd.z, 0.0f);
  EXPECT_FLOAT_EQ(m.ks.x, 0.8f);  // f0 = the base colour
  EXPECT_FLOAT_EQ(m.ks.y, 0.5f);
  EXPECT_FLOAT_EQ(m.ks.z, 0.2f);
  EXPECT_EQ(m.f90, 1.0f);
  EXPECT_EQ(p.cls, kGlossy);
  EXPECT_FLOAT_EQ(p.kd.x, 0.8f);  // the base under a dielectric layer of Ni's f0 (level 0.5)
  EXPECT_NEAR(p.ks.x, std::pow(0.45f / 2.45f, 2.0f), 1e-6f);
  EXPECT_EQ(p.ks.x, p.ks.z);
  // Pr is the roughness: alpha = Pr^2 in both, Ns ignored (Ns 250 alone would give 0.25).
  EXPECT_FLOAT_EQ(m.alpha, 0.09f);
  EXPECT_FLOAT_EQ(p.alpha, 0.09f);
  // Half metallic: f0, f90 and the base halfway.
  const HostMaterial h = LoadWithMtl(BlenderPbr("0.5"), "paint").materials[0];
  EXPECT_NEAR(h.ks.x, 0.5f * (p.ks.x + 0.8f), 1e-6f);
  EXPECT_NEAR(h.kd.x, 0.4f, 1e-6f);
  EXPECT_NEAR(h.f90, 0.5f * (p.f90 + 1.0f), 1e-6f);
  // A smooth full metal is a mirror of the base colour; Pm 1 over Ks 0 is still a metal.
  const HostMaterial mirror = LoadWithMtl("newmtl c\nKd 0.9 0.6 0.3\nPr 0\nPm 1\n", "c").materials[0];
  EXPECT_EQ(mirror.cls, kMirror);
  EXPECT_FLOAT_EQ(mirror.ks.y, 0.6f);
  // Blender writes zero sheen, coat and anisotropy for every material: nothing to say about them.
  for (const std::string& w : plastic.warnings) EXPECT_FALSE(Contains(w, "not rendered")) << w;
}

TEST_F(LoaderTest, PbrMetallicChangesTheImage) {
  std::vector<float> images[2];
  for (int metallic = 0; metallic < 2; ++metallic) {
    const Scene scene = LoadWithMtl(BlenderPbr(std::to_string(metallic)) + "newmtl lamp\nKe 4 4 4\n", "paint");
    const SceneData data = BuildSceneData(
        scene, Camera::LookAt(Vec3(0.3f, 0.3f, 1.0f), Vec3(0.3f, 0.3f, 0.0f), Vec3(0, 1, 0), 60.0f, 8, 8),
        Vec3(1.0f, 0.9f, 0.8f));
    images[metallic] = RenderCpu(data, QuietRender(8, 8, 4, 4)).rgb;
  }
  ASSERT_EQ(images[0].size(), images[1].size());
  double difference = 0.0;
  for (size_t i = 0; i < images[0].size(); ++i) difference += std::fabs(images[0][i] - images[1][i]);
  EXPECT_GT(difference, 0.1) << "Pm 1 and Pm 0 render alike";
}

}  // namespace
}  // namespace tracer::test
