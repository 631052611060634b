// @file pbrt_bitterli_test.cpp: the six pbrt-v4 scenes from Benedikt Bitterli's Rendering Resources (shared
// scenes, bitterli/*.tar.xz) parse, with the counts and values their files state, and every PLY mesh they name
// loads. Skipped where the archives, or tar and xz, are not there.
#include <gtest/gtest.h>

#include <map>

#include "pbrt_test_util.h"
#include "test_util.h"
#include "tracer/host/ply_reader.h"

namespace tracer {
namespace {

// Unpacks bitterli/NAME.tar.xz and parses NAME/pbrt/scene-v4.pbrt; dir gets the folder to remove.
PbrtScene ParseBitterli(const std::string& name, std::string* dir) {
  const std::string shared = test::SharedScenesDir();
  const std::string archive = shared + "/bitterli/" + name + ".tar.xz";
  if (shared.empty() || !test::FileExists(archive)) throw std::runtime_error("skip: " + archive + " is not there");
  if (!test::HaveTarXz()) throw std::runtime_error("skip: tar or xz is not installed");
  *dir = test::Unpack(archive);
  if (dir->empty()) throw std::runtime_error("cannot unpack " + archive);
  return ParsePbrtFile(*dir + "/" + name + "/pbrt/scene-v4.pbrt");
}

template <typename T>
std::map<std::string, int> Kinds(const std::vector<T>& things) {
  std::map<std::string, int> n;
  for (const T& x : things) ++n[x.type];
  return n;
}

// Loads every plymesh of the scene; returns the triangles.
size_t LoadMeshes(const PbrtScene& s) {
  size_t triangles = 0;
  for (const PbrtShape& shape : s.shapes) {
    if (shape.type != "plymesh") continue;
    PlyMesh mesh = ReadPly(s.ResolvePath(shape.params.GetString("filename", "")));
    EXPECT_EQ(mesh.skippedFaces, 0u);
    EXPECT_GT(mesh.NumTriangles(), 0u);
    triangles += mesh.NumTriangles();
  }
  return triangles;
}

// What every scene's file states: the view, the shapes by kind, the area lights, the triangles of its PLY meshes.
struct Expected {
  double fov;
  int width, height;
  std::map<std::string, int> shapes;
  size_t areaLights;
  size_t plyTriangles;
};

void ExpectScene(const PbrtScene& s, const Expected& e) {
  EXPECT_EQ(s.camera.type, "perspective");
  EXPECT_DOUBLE_EQ(s.camera.params.GetFloat("fov", 0), e.fov);
  EXPECT_EQ(s.film.params.GetInt("xresolution", 0), e.width);
  EXPECT_EQ(s.film.params.GetInt("yresolution", 0), e.height);
  EXPECT_EQ(Kinds(s.shapes), e.shapes);
  EXPECT_EQ(s.areaLights.size(), e.areaLights);
  EXPECT_EQ(LoadMeshes(s), e.plyTriangles);
  // The Tungsten conversion's camera matrices all mirror one axis (pbrt's camera space is left-handed).
  EXPECT_TRUE(s.camera.cameraFromWorld.SwapsHandedness());
}

class PbrtBitterli : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!dir_.empty()) test::RemoveTree(dir_);
  }
  // Parses the scene, or skips the test.
  bool Load(const std::string& name) {
    try {
      scene_ = ParseBitterli(name, &dir_);
    } catch (const PbrtError&) {
      throw;
    } catch (const std::runtime_error& e) {
      if (std::string(e.what()).rfind("skip: ", 0) == 0) return false;
      throw;
    }
    return true;
  }
  std::string dir_;
  PbrtScene scene_;
};

#define LOAD_OR_SKIP(name) \
  if (!Load(name)) GTEST_SKIP() << "the shared scene bitterli/" name ".tar.xz (or tar and xz) is not there"

TEST_F(PbrtBitterli, CornellBox) {
  LOAD_OR_SKIP("cornell-box");
  const PbrtScene& s = scene_;
  ExpectScene(s, {19.5, 64, 64, {{"trianglemesh", 8}}, 1, 0});
  EXPECT_EQ(s.integrator.params.GetInt("maxdepth", 0), 4);
  EXPECT_EQ(s.filter.type, "gaussian");
  EXPECT_DOUBLE_EQ(s.filter.params.GetFloat("xradius", 0), 1.5);
  EXPECT_EQ(s.accelerator.type, "bvh");
  EXPECT_EQ(s.namedMaterials.size(), 8u);
  EXPECT_TRUE(s.lights.empty());
  // Transform [ 1 0 0 0  0 1 0 0  0 0 -1 0  0 -1 6.8 1 ]: the eye at (0, 1, 6.8) looking down -z.
  EXPECT_TRUE(test::Near(s.camera.worldFromCamera.ApplyPoint({0, 0, 0}), {0, 1, 6.8}, 1e-9));
  EXPECT_TRUE(test::Near(s.camera.worldFromCamera.ApplyVector({0, 0, 1}), {0, 0, -1}, 1e-9));
  const PbrtMaterial& left = s.materials[s.namedMaterials.at("LeftWall")];
  EXPECT_EQ(left.params.GetFloats("reflectance"), (std::vector<double>{0.63, 0.065, 0.05}));
  EXPECT_TRUE(s.warnings.empty());
}

TEST_F(PbrtBitterli, VeachMis) {
  LOAD_OR_SKIP("veach-mis");
  const PbrtScene& s = scene_;
  ExpectScene(s, {20.114292, 1280, 720, {{"sphere", 3}, {"trianglemesh", 6}}, 3, 0});
  EXPECT_EQ(s.integrator.params.GetInt("maxdepth", 0), 3);
  std::vector<double> radii;
  for (const PbrtShape& shape : s.shapes)
    if (shape.type == "sphere") {
      radii.push_back(shape.params.GetFloat("radius", 0));
      EXPECT_GE(shape.areaLight, 0);
    }
  EXPECT_EQ(radii, (std::vector<double>{1, 0.5, 0.05}));
  const PbrtMaterial& smooth = s.materials[s.namedMaterials.at("Smooth")];
  EXPECT_EQ(smooth.type, "conductor");
  EXPECT_FALSE(smooth.params.GetBool("remaproughness", true));
  EXPECT_DOUBLE_EQ(smooth.params.GetFloat("uroughness", 0), 0.01);
  EXPECT_EQ(smooth.params.GetFloats("eta"), (std::vector<double>{0.200438, 0.924033, 1.102212}));
}

TEST_F(PbrtBitterli, VeachBidir) {
  LOAD_OR_SKIP("veach-bidir");
  const PbrtScene& s = scene_;
  ExpectScene(s, {35, 1024, 1024, {{"plymesh", 12}, {"trianglemesh", 2}}, 2, 11540});
  EXPECT_EQ(s.integrator.type, "bdpt");
  EXPECT_EQ(s.sampler.type, "independent");
  EXPECT_EQ(Kinds(s.materials), (std::map<std::string, int>{{"conductor", 1}, {"dielectric", 1}, {"diffuse", 3}}));
}

TEST_F(PbrtBitterli, Coffee) {
  LOAD_OR_SKIP("coffee");
  const PbrtScene& s = scene_;
  ExpectScene(s, {25, 800, 1000, {{"plymesh", 20}, {"trianglemesh", 3}}, 3, 235265});
  EXPECT_EQ(Kinds(s.materials),
            (std::map<std::string, int>{{"coateddiffuse", 3}, {"conductor", 1}, {"dielectric", 1}, {"diffuse", 4}}));
  const PbrtMaterial& metal = s.materials[s.namedMaterials.at("Metal")];
  EXPECT_EQ(metal.params.Find("eta")->type, PbrtParamType::kSpectrum);
  EXPECT_EQ(metal.params.Find("eta")->strings, (std::vector<std::string>{"metal-Ag-eta"}));
}

TEST_F(PbrtBitterli, Staircase2) {
  LOAD_OR_SKIP("staircase2");
  const PbrtScene& s = scene_;
  ExpectScene(s, {70, 1024, 1024, {{"disk", 5}, {"plymesh", 19}, {"trianglemesh", 8}}, 13, 30911});
  EXPECT_EQ(s.integrator.type, "volpath");
  ASSERT_EQ(s.media.size(), 1u);
  EXPECT_EQ(s.media[0].name, "green");
  EXPECT_EQ(s.media[0].type, "homogeneous");
  EXPECT_EQ(s.media[0].params.GetFloats("sigma_a"), (std::vector<double>{0.5, 0.2, 0.4}));
  int inGreen = 0;
  for (const PbrtShape& shape : s.shapes) inGreen += shape.insideMedium == "green" && shape.outsideMedium.empty();
  EXPECT_EQ(inGreen, 1);
  EXPECT_EQ(s.textures.size(), 3u);
}

TEST_F(PbrtBitterli, Classroom) {
  LOAD_OR_SKIP("classroom");
  const PbrtScene& s = scene_;
  ExpectScene(s, {35.9834, 1280, 720, {{"plymesh", 79}}, 0, 103832});
  ASSERT_EQ(s.lights.size(), 2u);
  EXPECT_EQ(s.lights[0].type, "distant");
  EXPECT_EQ(s.lights[1].type, "infinite");
  EXPECT_EQ(s.lights[1].params.GetString("filename", ""), "textures/Skydome.pfm");
  EXPECT_EQ(s.namedMaterials.size(), 44u);
  ASSERT_EQ(s.textures.size(), 3u);
  EXPECT_EQ(s.textures[2].type, "imagemap");
  EXPECT_EQ(s.textures[2].params.GetString("filename", ""), "textures/blackboard.tga");  // missing from the copy
  EXPECT_EQ(s.textures[2].params.GetString("filter", ""), "trilinear");
  // TransformBegin/End, read as pbrt-v4 reads them, with one warning.
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_TRUE(test::Contains(s.warnings[0], "TransformBegin/TransformEnd are deprecated"));
}

}  // namespace
}  // namespace tracer
