// @file pbrt_loader_bitterli_test.cpp: the six pbrt-v4 scenes of Benedikt Bitterli's Rendering Resources (shared
// scenes, bitterli/*.tar.xz) load into Scenes with the triangles, lights, camera and warnings they should have, and
// the Cornell box renders on the CPU to the mean of Tungsten's reference image. Skipped where the archives, or tar
// and xz, are not there.
#include <gtest/gtest.h>

#include "pbrt_loader_test_util.h"
#include "tracer/host/backends.h"
#include "tracer/host/image_io.h"
#include "tracer/host/scene_data.h"

namespace tracer {
namespace {

using test::NearVec;

class PbrtLoaderBitterli : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!dir_.empty()) test::RemoveTree(dir_);
  }
  // Unpacks bitterli/NAME.tar.xz and loads its scene-v4.pbrt; false when the archive or tar and xz are missing.
  bool Load(const std::string& name) {
    const std::string shared = test::SharedScenesDir();
    const std::string archive = shared + "/bitterli/" + name + ".tar.xz";
    if (shared.empty() || !test::FileExists(archive) || !test::HaveTarXz()) return false;
    dir_ = test::Unpack(archive);
    if (dir_.empty()) throw std::runtime_error("cannot unpack " + archive);
    folder_ = dir_ + "/" + name + "/pbrt";
    scene_ = LoadScene(folder_ + "/scene-v4.pbrt");
    return true;
  }
  size_t EmitterTriangles() const {
    size_t n = 0;
    for (size_t t = 0; t < scene_.NumTriangles(); ++t) n += test::MaterialOf(scene_, t).IsEmissive();
    return n;
  }
  std::string dir_, folder_;
  Scene scene_;
};

#define LOAD_OR_SKIP(name) \
  if (!Load(name)) GTEST_SKIP() << "the shared scene bitterli/" name ".tar.xz (or tar and xz) is not there"

TEST_F(PbrtLoaderBitterli, CornellBoxMatchesTungstensMean) {
  LOAD_OR_SKIP("cornell-box");
  const Scene& s = scene_;
  EXPECT_EQ(s.NumTriangles(), 36u);
  EXPECT_EQ(EmitterTriangles(), 2u);
  EXPECT_TRUE(s.warnings.empty()) << test::AllWarnings(s);
  EXPECT_TRUE(NearVec(s.camera.eye, Vec3(0, 1, 6.8f), 1e-6f));
  EXPECT_EQ(s.camera.fovY, 19.5f);
  EXPECT_EQ(s.defaults.maxDepth, 4);
  if (!ExrSupported()) GTEST_SKIP() << "this build reads no OpenEXR: no comparison with TungstenRender.exr";
  int w = 0, h = 0;
  const std::vector<float> reference = ReadExr(folder_ + "/TungstenRender.exr", w, h);
  // Tungsten's reference counts many bounces; 16 leave well under 0.1% of the light out in this box.
  const SceneData data = test::BuildWithSceneCamera(s, 128, 128);
  const std::vector<float> rgb = RenderCpu(data, test::QuietRender(128, 128, 64, 16)).rgb;
  double got[3] = {0, 0, 0}, want[3] = {0, 0, 0};
  for (size_t i = 0; i < rgb.size(); ++i) got[i % 3] += double(rgb[i]) / (128.0 * 128.0);
  for (size_t i = 0; i < reference.size(); ++i) want[i % 3] += double(reference[i]) / (double(w) * double(h));
  // A misplaced camera or a wrong light moves these by far more than 3%.
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(got[c] / want[c], 1.0, 0.03) << "channel " << c;
  // A mirrored one puts the red wall on the right: red minus green, left half against right half, in both images.
  auto leftRedness = [](const std::vector<float>& image, int width, int height) {
    double sum = 0.0;
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) {
        const size_t i = 3 * (size_t(y) * size_t(width) + size_t(x));
        sum += (x < width / 2 ? 1.0 : -1.0) * (double(image[i]) - double(image[i + 1])) / (double(width) * height);
      }
    return sum;
  };
  const double ours = leftRedness(rgb, 128, 128), tungsten = leftRedness(reference, w, h);
  EXPECT_GT(tungsten, 0.01);
  EXPECT_NEAR(ours / tungsten, 1.0, 0.1);
}

TEST_F(PbrtLoaderBitterli, VeachMis) {
  LOAD_OR_SKIP("veach-mis");
  const Scene& s = scene_;
  EXPECT_GT(EmitterTriangles(), 3 * 100u) << "three tessellated spheres";
  // The emitters keep pbrt's power: sum pi L 4 pi r^2 over the three spheres (Rs 1, 0.5, 0.05 at L 7.6, 30.4, 3040).
  const double pi = 3.14159265358979323846;
  const double expected = pi * 4.0 * pi * (7.599088 * 1.0 + 30.396353 * 0.25 + 3039.6353 * 0.0025);
  EXPECT_NEAR(test::EmittedPowerX(s) / expected, 1.0, 0.005);
  EXPECT_EQ(test::CountWarnings(s, "is a mirror of constant reflectance"), 1u) << test::AllWarnings(s);
  EXPECT_EQ(test::CountWarnings(s, "mapped to the glossy class without a base"), 1u) << test::AllWarnings(s);
}

TEST_F(PbrtLoaderBitterli, VeachBidir) {
  LOAD_OR_SKIP("veach-bidir");
  EXPECT_EQ(scene_.NumTriangles(), 11544u);
  EXPECT_EQ(EmitterTriangles(), 4u);
  EXPECT_EQ(test::CountWarnings(scene_, "Integrator \"bdpt\""), 1u) << test::AllWarnings(scene_);
  EXPECT_EQ(scene_.defaults.spp, 64);
}

TEST_F(PbrtLoaderBitterli, Coffee) {
  LOAD_OR_SKIP("coffee");
  EXPECT_GT(scene_.NumTriangles(), 230000u);
  EXPECT_EQ(EmitterTriangles(), 6u);
  EXPECT_EQ(test::CountWarnings(scene_, "(coateddiffuse)"), 1u) << test::AllWarnings(scene_);
  EXPECT_EQ(scene_.defaults.width, 800);
  EXPECT_EQ(scene_.defaults.height, 1000);
  EXPECT_NEAR(scene_.camera.fovY, FovYForShorterAxis(25.0f, 800, 1000), 1e-5f) << "portrait: fov is horizontal";
  EXPECT_GT(scene_.camera.fovY, 25.0f);
}

TEST_F(PbrtLoaderBitterli, Staircase2) {
  LOAD_OR_SKIP("staircase2");
  EXPECT_GT(scene_.NumTriangles(), 25000u);
  EXPECT_GT(EmitterTriangles(), 13u);
  EXPECT_EQ(test::CountWarnings(scene_, ":19: texture \"Texture01\": image \"textures/wood5.tga\" not found"), 1u)
      << test::AllWarnings(scene_);
  EXPECT_EQ(test::CountWarnings(scene_, ":28: participating media"), 1u) << test::AllWarnings(scene_);
}

TEST_F(PbrtLoaderBitterli, Classroom) {
  LOAD_OR_SKIP("classroom");
  EXPECT_GT(scene_.NumTriangles(), 100000u);
  EXPECT_EQ(EmitterTriangles(), 0u);
  ASSERT_TRUE(scene_.environment.present) << "the sky";
  EXPECT_EQ(scene_.environment.width, 2 * scene_.environment.height);
  EXPECT_EQ(test::CountWarnings(scene_, ":424: LightSource \"distant\" is not rendered yet"), 1u)
      << test::AllWarnings(scene_);
  EXPECT_EQ(test::CountWarnings(scene_, "textures/blackboard.tga\" not found"), 1u) << test::AllWarnings(scene_);
  // The sky is above: the lat-long map's upper half is brighter than its lower half.
  const SceneEnvironment& env = scene_.environment;
  double upper = 0.0, lower = 0.0;
  for (size_t i = 0; i < env.rgb.size(); ++i) (i < env.rgb.size() / 2 ? upper : lower) += env.rgb[i];
  EXPECT_GT(upper, 10.0 * lower);
}

}  // namespace
}  // namespace tracer
