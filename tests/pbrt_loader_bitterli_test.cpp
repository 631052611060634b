// @file pbrt_loader_bitterli_test.cpp: the six pbrt-v4 scenes of Benedikt Bitterli's Rendering Resources (shared
// scenes, bitterli/*.tar.xz) load into Scenes with the triangles, lights, camera and warnings they should have, and
// the Cornell box and the classroom render on the CPU to the mean of Tungsten's reference image. Skipped where the
// archives, or tar and xz, are not there.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "pbrt_loader_test_util.h"
#include "tracer/host/backends.h"
#include "tracer/host/env_map.h"
#include "tracer/host/image_io.h"
#include "tracer/host/scene_data.h"

namespace tracer {
namespace {

using test::NearVec;

constexpr size_t kAnyCount = SIZE_MAX;

// What a scene loads into: its triangles (a range), emitter triangles (or kAnyCount), and warnings (each text
// exactly once).
struct Expected {
  size_t minTriangles, maxTriangles, emitters;
  std::vector<std::string> warnings;
};

constexpr const char* kMissing = "the shared scenes' bitterli/ archives (or tar and xz) are not there";

class PbrtLoaderBitterli : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!dir_.empty()) test::RemoveTree(dir_);
  }
  // Unpacks bitterli/NAME.tar.xz, loads its scene-v4.pbrt and checks what `e` expects of it; false when the archive
  // or tar and xz are missing.
  bool Load(const std::string& name, const Expected& e) {
    const std::string shared = test::SharedScenesDir();
    const std::string archive = shared + "/bitterli/" + name + ".tar.xz";
    if (shared.empty() || !test::FileExists(archive) || !test::HaveTarXz()) return false;
    dir_ = test::Unpack(archive);
    if (dir_.empty()) throw std::runtime_error("cannot unpack " + archive);
    folder_ = dir_ + "/" + name + "/pbrt";
    scene_ = LoadScene(folder_ + "/scene-v4.pbrt");
    EXPECT_GE(scene_.NumTriangles(), e.minTriangles);
    EXPECT_LE(scene_.NumTriangles(), e.maxTriangles);
    size_t emitters = 0;
    for (size_t t = 0; t < scene_.NumTriangles(); ++t) emitters += test::MaterialOf(scene_, t).IsEmissive();
    EXPECT_TRUE(e.emitters == kAnyCount || emitters == e.emitters) << emitters << " emitter triangles";
    for (const std::string& w : e.warnings)
      EXPECT_EQ(test::CountWarnings(scene_, w), 1u) << w << "\n" << test::AllWarnings(scene_);
    return true;
  }
  std::string dir_, folder_;
  Scene scene_;
};

TEST_F(PbrtLoaderBitterli, CornellBoxMatchesTungstensMean) {
  if (!Load("cornell-box", {36, 36, 2, {}})) GTEST_SKIP() << kMissing;
  const Scene& s = scene_;
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
  // Three tessellated spheres (at 8 to 512 segments around), the plates and the backdrop.
  if (!Load("veach-mis", {3 * 8 * 4,
                          3 * 512 * 256,
                          kAnyCount,
                          {"is a mirror of constant reflectance", "mapped to the glossy class without a base"}}))
    GTEST_SKIP() << kMissing;
  const Scene& s = scene_;
  // The emitters keep pbrt's power: sum pi L 4 pi r^2 over the three spheres (Rs 1, 0.5, 0.05 at L 7.6, 30.4, 3040).
  const double pi = 3.14159265358979323846;
  const double expected = pi * 4.0 * pi * (7.599088 * 1.0 + 30.396353 * 0.25 + 3039.6353 * 0.0025);
  EXPECT_NEAR(test::EmittedPowerX(s) / expected, 1.0, 0.005);
}

TEST_F(PbrtLoaderBitterli, VeachBidir) {
  if (!Load("veach-bidir", {11544, 11544, 4, {"Integrator \"bdpt\""}})) GTEST_SKIP() << kMissing;
  EXPECT_EQ(scene_.defaults.spp, 64);
}

TEST_F(PbrtLoaderBitterli, Coffee) {
  if (!Load("coffee", {230000, 236000, 6, {"(coateddiffuse)"}})) GTEST_SKIP() << kMissing;
  EXPECT_EQ(scene_.defaults.width, 800);
  EXPECT_EQ(scene_.defaults.height, 1000);
  EXPECT_NEAR(scene_.camera.fovY, FovYForShorterAxis(25.0f, 800, 1000), 1e-5f) << "portrait: fov is horizontal";
  EXPECT_GT(scene_.camera.fovY, 25.0f);
}

TEST_F(PbrtLoaderBitterli, Staircase2) {
  if (!Load("staircase2",
            {25000,
             32000,
             86,
             {":19: texture \"Texture01\": image \"textures/wood5.tga\" not found", ":28: participating media"}}))
    GTEST_SKIP() << kMissing;
  EXPECT_EQ(scene_.materials.size(), 21u) << "8 named materials, and each of 13 lights' emitting copy";
}

TEST_F(PbrtLoaderBitterli, Classroom) {
  if (!Load("classroom", {100000, 110000, 0, {"textures/blackboard.tga\" not found"}})) GTEST_SKIP() << kMissing;
  EXPECT_EQ(test::CountWarnings(scene_, "LightSource \"distant\""), 0u) << test::AllWarnings(scene_);
  // The sun: "rgb L" [10 10 10] from (-0.865804 0.416766 -0.276929) toward the origin (no CTM; the camera's transform
  // mirrors, so the scene is not reflected).
  ASSERT_EQ(scene_.deltaLights.size(), 1u);
  const DeltaLight& sun = scene_.deltaLights[0];
  EXPECT_EQ(BitsFromFloat(sun.p.w), uint32_t(kDistantLight));
  EXPECT_TRUE(NearVec(Vec3(sun.p.x, sun.p.y, sun.p.z), Normalize(Vec3(-0.865804f, 0.416766f, -0.276929f)), 1e-6f));
  EXPECT_TRUE(NearVec(Vec3(sun.e.x, sun.e.y, sun.e.z), Vec3(10.0f), 0.0f));
  ASSERT_TRUE(scene_.environment.present) << "the sky";
  EXPECT_EQ(scene_.environment.width, 2 * scene_.environment.height);
  // The sky is above: the lat-long map's upper half is brighter than its lower half.
  const SceneEnvironment& env = scene_.environment;
  double upper = 0.0, lower = 0.0;
  for (size_t i = 0; i < env.rgb.size(); ++i) (i < env.rgb.size() / 2 ? upper : lower) += env.rgb[i];
  EXPECT_GT(upper, 10.0 * lower);
}

// The classroom, lit by its sun (the distant light, through the windows) and sky, against the mean of Tungsten's
// reference image (0.232, 0.193, 0.188). The pbrt-v4 conversion is not Tungsten's scene: its sun is a distant light of
// L 10 in place of Tungsten's procedural sun, its chairs and lamps pbrt's "coateddiffuse" (which the renderer maps to
// its glossy class, brighter than pbrt's layered BSDF) and conductors, and the blackboard's texture is missing from
// the archive; and Tungsten's image clips the sunlit floor. So the means differ by tens of percent, and the band is
// [0.8, 1.5] per channel (measured: about 1.3; see docs/RENDERING.md). What it catches: without the sun the image
// reads about 0.25 of Tungsten's (the sky alone), a sun off by pi or 2 reads above 2 or about 0.6, and a sun without
// its cosine on the floor well above 1.5. The render's own noise at 64 spp (fireflies off the chrome) is a few
// percent.
TEST_F(PbrtLoaderBitterli, ClassroomMatchesTungstensMean) {
  if (!Load("classroom", {100000, 110000, 0, {}})) GTEST_SKIP() << kMissing;
  if (!ExrSupported()) GTEST_SKIP() << "this build reads no OpenEXR: no comparison with TungstenRender.exr";
  int w = 0, h = 0;
  const std::vector<float> reference = ReadExr(folder_ + "/TungstenRender.exr", w, h);
  const int rw = 64, rh = 36;
  SceneData data = test::BuildWithSceneCamera(scene_, rw, rh);
  const SceneEnvironment& env = scene_.environment;
  SetEnvironmentMap(data, EnvImage{env.width, env.height, env.rgb}, 1.0f, 0.0f);  // as the tracer does
  const std::vector<float> rgb = RenderCpu(data, test::QuietRender(rw, rh, 64, scene_.defaults.maxDepth)).rgb;
  double got[3] = {0, 0, 0}, want[3] = {0, 0, 0};
  for (size_t i = 0; i < rgb.size(); ++i) got[i % 3] += double(rgb[i]) / (rw * rh);
  for (size_t i = 0; i < reference.size(); ++i) want[i % 3] += double(reference[i]) / (double(w) * double(h));
  std::printf("classroom: mean %.4f %.4f %.4f, Tungsten's %.4f %.4f %.4f\n", got[0], got[1], got[2], want[0], want[1],
              want[2]);
  for (int c = 0; c < 3; ++c) {
    EXPECT_GT(got[c] / want[c], 0.8) << "channel " << c;
    EXPECT_LT(got[c] / want[c], 1.5) << "channel " << c;
  }
}

}  // namespace
}  // namespace tracer
