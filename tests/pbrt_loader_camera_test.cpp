// @file pbrt_loader_camera_test.cpp: the pbrt camera and render options as the loader maps them: the same scene as
// an OBJ with a .camera file and as a .pbrt renders the same image, byte for byte, with an asymmetric marker that
// catches a mirrored image; a plain LookAt (pbrt's left-handed camera) shows the marker on the other side; the field
// of view of the shorter axis; the thin lens; the render defaults; the options left out.
#include <gtest/gtest.h>

#include <cmath>

#include "pbrt_loader_test_util.h"
#include "tracer/host/backends.h"
#include "tracer/host/scene_data.h"

namespace tracer {
namespace {

using test::NearVec;
using test::PbrtDir;

// A floor (y = 0, white), a red marker standing on it left of the view's centre (x in [-1.5, -0.5], facing +z) and
// a light above, as explicit triangles with axis normals so that both formats give the same bytes.
constexpr const char* kObj =
    "mtllib s.mtl\n"
    "v -2 0 -2\nv -2 0 2\nv 2 0 2\nv 2 0 -2\n"
    "v -1.5 0 0\nv -0.5 0 0\nv -0.5 1 0\nv -1.5 1 0\n"
    "v -0.5 3 -0.5\nv 0.5 3 -0.5\nv 0.5 3 0.5\nv -0.5 3 0.5\n"
    "vn 0 1 0\nvn 0 0 1\nvn 0 -1 0\n"
    "usemtl floor\nf 1//1 2//1 3//1\nf 1//1 3//1 4//1\n"
    "usemtl marker\nf 5//2 6//2 7//2\nf 5//2 7//2 8//2\n"
    "usemtl light\nf 9//3 10//3 11//3\nf 9//3 11//3 12//3\n";
constexpr const char* kMtl =
    "newmtl floor\nKd 0.8 0.8 0.8\nnewmtl marker\nKd 0.8 0.1 0.1\nnewmtl light\nKd 0 0 0\nKe 5 5 5\n";
constexpr const char* kCamera = "eye 0 1 5\nlook_at 0 1 0\nup 0 1 0\nfov 50\n";

std::string PbrtScene(const std::string& view) {
  return "Film \"rgb\" \"integer xresolution\" 32 \"integer yresolution\" 32\n" + view +
         "Camera \"perspective\" \"float fov\" 50\nWorldBegin\n"
         "Material \"diffuse\" \"rgb reflectance\" [0.8 0.8 0.8]\n"
         "Shape \"trianglemesh\" \"point3 P\" [-2 0 -2 -2 0 2 2 0 2 2 0 -2] \"integer indices\" [0 1 2 0 2 3]"
         " \"normal N\" [0 1 0 0 1 0 0 1 0 0 1 0]\n"
         "Material \"diffuse\" \"rgb reflectance\" [0.8 0.1 0.1]\n"
         "Shape \"trianglemesh\" \"point3 P\" [-1.5 0 0 -0.5 0 0 -0.5 1 0 -1.5 1 0] \"integer indices\" [0 1 2 0 2 3]"
         " \"normal N\" [0 0 1 0 0 1 0 0 1 0 0 1]\n"
         "AttributeBegin\nAreaLightSource \"diffuse\" \"rgb L\" [5 5 5]\n"
         "Material \"diffuse\" \"rgb reflectance\" [0 0 0]\n"
         "Shape \"trianglemesh\" \"point3 P\" [-0.5 3 -0.5 0.5 3 -0.5 0.5 3 0.5 -0.5 3 0.5]"
         " \"integer indices\" [0 1 2 0 2 3] \"normal N\" [0 -1 0 0 -1 0 0 -1 0 0 -1 0]\nAttributeEnd\n";
}

std::vector<float> Render(const Scene& scene) {
  const SceneData data = test::BuildWithSceneCamera(scene, 32, 32);
  return RenderCpu(data, test::QuietRender(32, 32, 4, 3)).rgb;
}

// How much redder the image's left half is than its right half (red minus green, summed).
double LeftRedness(const std::vector<float>& rgb) {
  double left = 0.0, right = 0.0;
  for (int y = 0; y < 32; ++y)
    for (int x = 0; x < 32; ++x) {
      const size_t i = 3 * size_t(y * 32 + x);
      (x < 16 ? left : right) += double(rgb[i]) - double(rgb[i + 1]);
    }
  return left - right;
}

TEST(PbrtLoaderCamera, SameImageAsTheObjWithACameraFile) {
  PbrtDir dir;
  test::WriteFile(dir.File("s.obj"), kObj);
  test::WriteFile(dir.File("s.mtl"), kMtl);
  test::WriteFile(dir.File("s.camera"), kCamera);
  const Scene obj = LoadScene(dir.File("s.obj"));
  // pbrt's camera space is left-handed: exporters from right-handed worlds put a mirror before LookAt.
  const Scene pbrt = dir.Load(PbrtScene("Scale -1 1 1\nLookAt 0 1 5  0 1 0  0 1 0\n"));
  EXPECT_TRUE(pbrt.notes.empty()) << "no mirroring needed";
  EXPECT_TRUE(pbrt.warnings.empty()) << test::AllWarnings(pbrt);
  ASSERT_TRUE(pbrt.camera.valid);
  EXPECT_TRUE(NearVec(pbrt.camera.eye, obj.camera.eye, 0.0f));
  EXPECT_TRUE(NearVec(Normalize(pbrt.camera.lookAt - pbrt.camera.eye), Vec3(0, 0, -1), 0.0f));
  EXPECT_TRUE(NearVec(pbrt.camera.up, obj.camera.up, 0.0f));
  EXPECT_EQ(pbrt.camera.fovY, obj.camera.fovY);
  const std::vector<float> a = Render(obj), b = Render(pbrt);
  EXPECT_GT(LeftRedness(a), 1.0) << "the marker is on the left";
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << "the same image, byte for byte";
}

TEST(PbrtLoaderCamera, PlainLookAtShowsPbrtsMirrorImage) {
  PbrtDir dir;
  // pbrt's LookAt alone keeps the world's handedness, and pbrt's image of it is mirrored left to right: the marker
  // at x < 0 appears on the right. The loader reflects the scene in the camera's vertical plane to show that.
  const Scene s = dir.Load(PbrtScene("LookAt 0 1 5  0 1 0  0 1 0\n"));
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("s.pbrt:3: the camera's frame keeps the world's handedness"), std::string::npos)
      << s.notes[0];
  EXPECT_TRUE(NearVec(s.camera.eye, Vec3(0, 1, 5), 1e-6f));
  EXPECT_LT(LeftRedness(Render(s)), -1.0) << "the marker is on the right";
  // The mirrored scene's marker stands at x in [0.5, 1.5], still facing the camera (+z).
  for (size_t t = 2; t < 4; ++t) {
    EXPECT_GT(s.positions[3 * t].x, 0.0f);
    EXPECT_NEAR(test::WindingNormal(s, t).z, 1.0f, 1e-6f);
  }
}

TEST(PbrtLoaderCamera, FieldOfViewOfTheShorterAxis) {
  EXPECT_EQ(FovYForShorterAxis(30.0f, 400, 200), 30.0f);
  const float tall = FovYForShorterAxis(30.0f, 200, 400);
  EXPECT_NEAR(tall, 2.0 * std::atan(2.0 * std::tan(15.0 * 3.14159265358979 / 180.0)) * 180.0 / 3.14159265358979, 1e-4);
  PbrtDir dir;
  const Scene s = dir.Load(
      "Film \"rgb\" \"integer xresolution\" 200 \"integer yresolution\" 400 \"string filename\" \"out.png\"\n"
      "Sampler \"sobol\" \"integer pixelsamples\" 32\nIntegrator \"volpath\" \"integer maxdepth\" 9\n"
      "LookAt 0 0 5 0 0 0 0 1 0\nCamera \"perspective\" \"float fov\" 30 \"float lensradius\" 0.1 "
      "\"float focaldistance\" 4\nWorldBegin\n" +
      std::string(test::kPbrtTestLight));
  EXPECT_EQ(s.camera.fovY, tall);
  EXPECT_EQ(s.camera.aperture, 0.1f);
  EXPECT_EQ(s.camera.focusDistance, 4.0f);
  const SceneDefaults& d = s.defaults;
  EXPECT_TRUE(d.valid);
  EXPECT_EQ(d.width, 200);
  EXPECT_EQ(d.height, 400);
  EXPECT_EQ(d.spp, 32);
  EXPECT_EQ(d.maxDepth, 9);
  EXPECT_EQ(d.output, "out.png");
  EXPECT_EQ(d.fovShorterAxis, 30.0f);
}

TEST(PbrtLoaderCamera, PbrtDefaultsAndOptionsLeftOut) {
  PbrtDir dir;
  const Scene s = dir.Load(
      "Camera \"orthographic\"\nIntegrator \"bdpt\"\nWorldBegin\n"
      "MakeNamedMedium \"fog\" \"string type\" \"homogeneous\"\n" +
      std::string(test::kPbrtTestLight));
  const SceneDefaults& d = s.defaults;
  EXPECT_EQ(d.width, 1280);
  EXPECT_EQ(d.height, 720);
  EXPECT_EQ(d.spp, 16);
  EXPECT_EQ(d.maxDepth, 5);
  EXPECT_EQ(d.output, "pbrt.exr");
  EXPECT_EQ(s.camera.fovY, 90.0f) << "pbrt's default fov, on the shorter (vertical) axis";
  EXPECT_EQ(test::CountWarnings(s, "s.pbrt:1: Camera \"orthographic\" is not supported yet"), 1u)
      << test::AllWarnings(s);
  EXPECT_EQ(test::CountWarnings(s, "s.pbrt:2: Integrator \"bdpt\""), 1u) << test::AllWarnings(s);
  EXPECT_EQ(test::CountWarnings(s, "s.pbrt:4: participating media"), 1u) << test::AllWarnings(s);
  // An OBJ scene has no defaults.
  test::WriteFile(dir.File("o.obj"), "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  EXPECT_FALSE(LoadScene(dir.File("o.obj")).defaults.valid);
}

}  // namespace
}  // namespace tracer
