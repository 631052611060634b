// @file pbrt_loader_bitterli_test.cpp: the six pbrt-v4 scenes of Benedikt Bitterli's Rendering Resources (shared
// scenes, bitterli/*.tar.xz) load into Scenes with the triangles, lights, camera and warnings they should have, and
// render on the CPU (160 pixels wide, 16 spp) to the means of Tungsten's reference images, each tolerance said where
// it is set, with what the pbrt-v4 files and Tungsten's scenes do differently. Skipped where the archives, or tar and
// xz, are not there.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
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

// A region of an image, in fractions of its width and height.
struct Region {
  double x0 = 0.0, y0 = 0.0, x1 = 1.0, y1 = 1.0;
};
struct Rgb {
  double c[3] = {0.0, 0.0, 0.0};
  double Luminance() const { return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]; }
};
Rgb RegionMean(const std::vector<float>& rgb, int w, int h, const Region& r) {
  Rgb m;
  size_t n = 0;
  for (int y = int(r.y0 * h); y < int(r.y1 * h); ++y)
    for (int x = int(r.x0 * w); x < int(r.x1 * w); ++x, ++n)
      for (int c = 0; c < 3; ++c) m.c[c] += rgb[3 * (size_t(y) * size_t(w) + size_t(x)) + size_t(c)];
  for (double& v : m.c) v /= double(n);
  return m;
}

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
  // Renders scene_ (or `scene`) on the CPU at w x h, spp samples, maxDepth bounces; the image, linear RGB.
  std::vector<float> Render(int w, int h, int spp, int maxDepth, const Scene* scene = nullptr) const {
    const SceneData data = test::BuildWithSceneCamera(scene ? *scene : scene_, w, h);
    return RenderCpu(data, test::QuietRender(w, h, spp, maxDepth)).rgb;
  }
  // Tungsten's reference image's mean over a region, or false (skipping) where the build reads no OpenEXR.
  bool ReferenceMean(const Region& r, Rgb* out) const {
    if (!ExrSupported()) return false;
    int w = 0, h = 0;
    const std::vector<float> reference = ReadExr(folder_ + "/TungstenRender.exr", w, h);
    *out = RegionMean(reference, w, h, r);
    return true;
  }
  // The scene file with each `from` replaced by `to`, loaded.
  Scene LoadEdited(const std::string& from, const std::string& to) const {
    std::string text = test::ReadFile(folder_ + "/scene-v4.pbrt");
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
    test::WriteFile(folder_ + "/edited.pbrt", text);
    return LoadScene(folder_ + "/edited.pbrt");
  }
  std::string dir_, folder_;
  Scene scene_;
};

// "ours / Tungsten's" per channel, printed for the record.
void Report(const char* what, const Rgb& ours, const Rgb& tungsten) {
  std::printf("[ bitterli ] %-34s ours %.4f %.4f %.4f  Tungsten %.4f %.4f %.4f  ratio %.3f %.3f %.3f\n", what,
              ours.c[0], ours.c[1], ours.c[2], tungsten.c[0], tungsten.c[1], tungsten.c[2], ours.c[0] / tungsten.c[0],
              ours.c[1] / tungsten.c[1], ours.c[2] / tungsten.c[2]);
}
constexpr const char* kNoExr = "this build reads no OpenEXR: no comparison with TungstenRender.exr";

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
  // Three tessellated spheres (at 8 to 512 segments around), the plates and the backdrop; the conductors exact.
  if (!Load("veach-mis", {3 * 8 * 4, 3 * 512 * 256, kAnyCount, {}})) GTEST_SKIP() << kMissing;
  const Scene& s = scene_;
  EXPECT_TRUE(s.warnings.empty()) << test::AllWarnings(s);
  // The emitters keep pbrt's power: sum pi L 4 pi r^2 over the three spheres (Rs 1, 0.5, 0.05 at L 7.6, 30.4, 3040).
  const double pi = 3.14159265358979323846;
  const double expected = pi * 4.0 * pi * (7.599088 * 1.0 + 30.396353 * 0.25 + 3039.6353 * 0.0025);
  EXPECT_NEAR(test::EmittedPowerX(s) / expected, 1.0, 0.005);
}

TEST_F(PbrtLoaderBitterli, VeachMisMatchesTungstenWhereTheScenesAgree) {
  if (!Load("veach-mis", {3 * 8 * 4, 3 * 512 * 256, kAnyCount, {}})) GTEST_SKIP() << kMissing;
  Rgb top, spot, whole;
  const Region upper{0.0, 0.0, 1.0, 0.36}, reflection{0.635, 0.415, 0.665, 0.445};
  if (!ReferenceMean(upper, &top) || !ReferenceMean(reflection, &spot) || !ReferenceMean({}, &whole))
    GTEST_SKIP() << kNoExr;
  // Tungsten's reference is direct light only: its floor is our one-bounce render's within 1.5%, and the plates'
  // fronts, which only the floor lights, are exactly 0 in it. So one bounce here (the file says 3).
  const int w = 320, h = 180;
  const std::vector<float> rgb = Render(w, h, 16, 1);
  // The backdrop and the three spheres: within 2% per channel (measured -0.5%; the tessellated spheres, whose
  // radiance is raised by true / tessellated area to keep pbrt's power, are 0.9% brighter where they are seen).
  const Rgb ours = RegionMean(rgb, w, h, upper);
  Report("veach-mis backdrop and spheres", ours, top);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(ours.c[c] / top.c[c], 1.0, 0.02) << "channel " << c;
  // The large sphere seen in the smoothest plate (alpha 0.01): Tungsten's plates reflect 0.300 of what a conductor of
  // their eta and k does, in every channel, as if its scene scaled their BSDF by 0.3 (Tungsten's materials have such
  // an "albedo"; pbrt-v4's conductor has no such factor and the file none; the three glossier plates are likewise
  // about 0.3 of ours). So ours is Tungsten's / 0.3 there within 3% (measured +0.6%, the sphere's 0.9%), and the same
  // in every channel within 0.5% (measured 0.01%): the exact Fresnel of eta + i k at that angle has the reference's
  // colour, where the former mapping (a constant f0 for this plate) was 1.5% off between channels.
  const Rgb plate = RegionMean(rgb, w, h, reflection);
  Report("veach-mis large sphere in top plate", plate, spot);
  double ratio[3];
  for (int c = 0; c < 3; ++c) ratio[c] = plate.c[c] / spot.c[c] * 0.3;
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(ratio[c], 1.0, 0.03) << "channel " << c;
  EXPECT_NEAR(ratio[0] / ratio[1], 1.0, 0.005);
  EXPECT_NEAR(ratio[2] / ratio[1], 1.0, 0.005);
  // For the record: the whole image at the file's 3 bounces, 160 x 90 (the plates' 0.3 is most of the difference).
  Report("veach-mis whole image, maxdepth 3", RegionMean(Render(160, 90, 16, 3), 160, 90, {}), whole);
}

TEST_F(PbrtLoaderBitterli, VeachBidir) {
  if (!Load("veach-bidir", {11544, 11544, 4, {"Integrator \"bdpt\""}})) GTEST_SKIP() << kMissing;
  EXPECT_EQ(scene_.defaults.spp, 64);
  Rgb tungsten;
  if (!ReferenceMean({}, &tungsten)) GTEST_SKIP() << kNoExr;
  // The files' maxdepth (7). Within 4% per channel: pbrt-v4 itself differs from Tungsten by up to 4% in a channel on
  // these scenes; measured +1.6%, +1.4%, +1.3% (the exact conductor of the lamp, the path tracer for bdpt).
  const Rgb ours = RegionMean(Render(160, 160, 16, scene_.defaults.maxDepth), 160, 160, {});
  Report("veach-bidir", ours, tungsten);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(ours.c[c] / tungsten.c[c], 1.0, 0.04) << "channel " << c;
}

TEST_F(PbrtLoaderBitterli, Coffee) {
  if (!Load("coffee", {230000, 236000, 6, {}})) GTEST_SKIP() << kMissing;
  EXPECT_EQ(scene_.defaults.width, 800);
  EXPECT_EQ(scene_.defaults.height, 1000);
  EXPECT_NEAR(scene_.camera.fovY, FovYForShorterAxis(25.0f, 800, 1000), 1e-5f) << "portrait: fov is horizontal";
  EXPECT_GT(scene_.camera.fovY, 25.0f);
  Rgb tungsten;
  if (!ReferenceMean({}, &tungsten)) GTEST_SKIP() << kNoExr;
  // Tungsten's plastics have neither the absorbing layer (pbrt-v4's "thickness", default 0.01 at sigma_t 1) nor the
  // bounce limit (its "maxdepth" 10: 5 reflections off the base) of pbrt-v4's coateddiffuse. Without them the coated
  // lobe gives Tungsten's image within 3% per channel (measured -0.6%, -1.2%, -1.9%).
  const int w = 160, h = 200, depth = scene_.defaults.maxDepth;
  const Scene tungstenLike =
      LoadEdited("\"coateddiffuse\" ]", "\"coateddiffuse\" ] \"float thickness\" 0 \"integer maxdepth\" 100000");
  const Rgb plastic = RegionMean(Render(w, h, 16, depth, &tungstenLike), w, h, {});
  Report("coffee, coats as Tungsten's plastic", plastic, tungsten);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(plastic.c[c] / tungsten.c[c], 1.0, 0.03) << "channel " << c;
  // As the file says: the layer absorbs and the walk stops, which only takes light away, most where the base is
  // brightest (the orange's red, albedo 1: the 5 bounces keep 93% of its series): measured -10.8%, -4.9%, -5.5% from
  // Tungsten. So each channel is below the plastic one, and at most 13% below Tungsten's.
  const Rgb ours = RegionMean(Render(w, h, 16, depth), w, h, {});
  Report("coffee", ours, tungsten);
  for (int c = 0; c < 3; ++c) {
    EXPECT_LT(ours.c[c], plastic.c[c]) << "channel " << c;
    EXPECT_GT(ours.c[c] / tungsten.c[c], 0.87) << "channel " << c;
  }
}

TEST_F(PbrtLoaderBitterli, Staircase2) {
  if (!Load("staircase2",
            {25000,
             32000,
             86,
             {":19: texture \"Texture01\": image \"textures/wood5.tga\" not found", ":28: participating media"}}))
    GTEST_SKIP() << kMissing;
  EXPECT_EQ(scene_.materials.size(), 21u) << "8 named materials, and each of 13 lights' emitting copy";
  Rgb tungsten;
  if (!ReferenceMean({}, &tungsten)) GTEST_SKIP() << kNoExr;
  // The wood's texture is missing from this copy (pbrt-v4's default reflectance, 0.5, takes its place) and the glass's
  // green medium is left out: within 8% per channel and 5% in luminance (measured +0.2%, +4.5%, +6.1%; +3.4%).
  const Rgb ours = RegionMean(Render(160, 160, 16, scene_.defaults.maxDepth), 160, 160, {});
  Report("staircase2", ours, tungsten);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(ours.c[c] / tungsten.c[c], 1.0, 0.08) << "channel " << c;
  EXPECT_NEAR(ours.Luminance() / tungsten.Luminance(), 1.0, 0.05);
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
