// @file denoise_test.cpp: --denoise on the CPU: both filters leave a noise-free image as it is and a constant one
// constant, keep an albedo step sharp, and bring a noisy Cornell box closer to a reference than the raw render (the
// regression closer than the a-trous twin); the film's half-buffers add up to the film bit for bit, the same for any
// thread count and pass size; the command line.
#include "tracer/host/denoise.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "denoise_frames.h"
#include "test_util.h"
#include "tracer/host/aov.h"
#include "tracer/host/backends.h"
#include "tracer/host/image_io.h"
#include "tracer/host/version.h"

using namespace tracer;

namespace {

constexpr DenoiseMethod kMethods[] = {DenoiseMethod::kNfor, DenoiseMethod::kAtrous};

// A frame with structure everywhere: 6x6 blocks of albedo between 0.2 and 0.8 under a light that falls off smoothly,
// on the wall, a box and the background.
DenoiseImages StructuredFrame() {
  test::FrameLayout layout;
  layout.box = layout.background = true;
  auto albedo = [](int x, int y) {
    const uint32_t block = static_cast<uint32_t>((y / 6) * 16 + x / 6);
    return Vec3(0.5f + 0.3f * test::HashNoise(1, block), 0.5f + 0.3f * test::HashNoise(2, block), 0.5f);
  };
  auto color = [&](int x, int y) {
    const float light = 1.5f - 0.02f * static_cast<float>(x) + 0.01f * static_cast<float>(y);
    return layout.Part(x, y) == test::FramePart::kBackground ? Vec3(0.3f, 0.4f, 0.9f) : albedo(x, y) * light;
  };
  return test::MakeFrame(layout, albedo, color);
}

float MaxAbsDifference(const std::vector<float>& a, const std::vector<float>& b) {
  float d = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

// Two identical halves say there is no noise: nothing may change (both filters' weights then fall to 0 between
// pixels of different colours).
TEST(Denoise, NoiseFreeImageComesBackUnchanged) {
  const DenoiseImages in = StructuredFrame();
  for (DenoiseMethod m : kMethods) {
    const std::vector<float> out = DenoiseCpu(in, m);
    ASSERT_EQ(out.size(), in.color.size());
    EXPECT_LT(MaxAbsDifference(out, in.color), 1e-4f) << DenoiseMethodName(m);
  }
}

// A constant colour stays that colour whatever the features do under it (albedo blocks, a box, background); with
// noise, the mean stays and the spread shrinks.
TEST(Denoise, ConstantImageStaysConstant) {
  DenoiseImages in = StructuredFrame();
  const Vec3 c(0.6f, 0.35f, 0.2f);
  for (size_t p = 0; p < in.color.size() / 3; ++p) StoreRgb(in.color.data(), static_cast<int>(p), c);
  in.halfA = in.halfB = in.color;
  for (DenoiseMethod m : kMethods) {
    const std::vector<float> out = DenoiseCpu(in, m);
    EXPECT_LT(MaxAbsDifference(out, in.color), 1e-5f) << DenoiseMethodName(m);
  }
  // Noisy: +-50% in each half, on a plain wall (the features' edges would rightly keep some noise).
  test::FrameLayout plain;
  DenoiseImages noisy = test::MakeFrame(
      plain, [](int, int) { return Vec3(0.5f); }, [&](int, int) { return c; });
  test::AddNoise(noisy, 0.5f, 7);
  auto spread = [&](const std::vector<float>& v, double& mean) {
    double s = 0.0, s2 = 0.0;
    for (size_t i = 0; i < v.size(); i += 3) s += v[i], s2 += static_cast<double>(v[i]) * v[i];
    const double n = static_cast<double>(v.size() / 3);
    mean = s / n;
    return std::sqrt(std::max(0.0, s2 / n - mean * mean));
  };
  double rawMean = 0.0, mean = 0.0;
  const double rawSpread = spread(noisy.color, rawMean);
  for (DenoiseMethod m : kMethods) {
    const double s = spread(DenoiseCpu(noisy, m), mean);
    std::printf("constant %.2f with noise: %s spread %.4f (raw %.4f), mean %.4f\n", c.x, DenoiseMethodName(m), s,
                rawSpread, mean);
    EXPECT_NEAR(mean, c.x, 0.02 * c.x) << DenoiseMethodName(m);
    EXPECT_LT(s, rawSpread / 4.0) << DenoiseMethodName(m);
  }
}

// An albedo step (0.2 left, 0.8 right, under even light, +-60% noise in each half): in every row the denoised edge
// (the pixels below 0.5) is within one pixel of the true one, and two pixels from it each side keeps its own level.
TEST(Denoise, AlbedoStepStaysSharp) {
  test::FrameLayout layout;
  const int edge = layout.width / 2;
  auto albedo = [&](int x, int) { return Vec3(x < edge ? 0.2f : 0.8f); };
  DenoiseImages in = test::MakeFrame(layout, albedo, albedo);
  test::AddNoise(in, 0.6f, 3);
  for (DenoiseMethod m : kMethods) {
    const std::vector<float> out = DenoiseCpu(in, m);
    double nearError = 0.0;
    for (int y = 0; y < layout.height; ++y) {
      int below = 0;
      for (int x = 0; x < layout.width; ++x) below += out[3 * (y * layout.width + x)] < 0.5f;
      EXPECT_LE(std::abs(below - edge), 1) << DenoiseMethodName(m) << " row " << y;
      nearError += std::fabs(out[3 * (y * layout.width + edge - 2)] - 0.2f) / 0.2f;
      nearError += std::fabs(out[3 * (y * layout.width + edge + 1)] - 0.8f) / 0.8f;
    }
    nearError /= 2.0 * layout.height;
    std::printf("albedo step: %s mean relative error two pixels from the edge %.4f\n", DenoiseMethodName(m), nearError);
    EXPECT_LT(nearError, 0.1) << DenoiseMethodName(m);
  }
}

// The regression over tiles (each offset's patch terms once per tile, box-summed) is the per-pixel reference bit for
// bit: the same terms added in the same order. On a noisy frame whose sides are not multiples of the tile (partial
// tiles, clamped patch edges in every corner), with the default window and patch and with others.
TEST(Denoise, TiledRegressionIsThePerPixelReferenceBitForBit) {
  const DenoiseImages in = test::NoisyBlocksFrame(37, 29, 0.7f, 5);
  for (const int radius : {5, 3, 8})
    for (const int patch : {1, 2, 0}) {
      DenoiseSettings tiled;
      tiled.nforRadius = radius;
      tiled.nforPatch = patch;
      DenoiseSettings naive = tiled;
      naive.nforPerPixel = true;
      const std::vector<float> a = DenoiseCpu(in, DenoiseMethod::kNfor, 2, tiled);
      const std::vector<float> b = DenoiseCpu(in, DenoiseMethod::kNfor, 1, naive);
      EXPECT_EQ(a, b) << "radius " << radius << ", patch " << patch;
      EXPECT_NE(a, in.color) << "radius " << radius << ", patch " << patch;
    }
}

// relMSE, mean of (x - r)^2 / (r^2 + 0.01) over the values.
double RelMse(const std::vector<float>& x, const std::vector<float>& r) {
  double s = 0.0;
  for (size_t i = 0; i < x.size(); ++i) s += (x[i] - r[i]) * (x[i] - r[i]) / (static_cast<double>(r[i]) * r[i] + 0.01);
  return s / static_cast<double>(x.size());
}

// Fireflies in one half (1 pixel in 60 at 100 times its value, in a frame with +-30% noise in each half): the
// regression comes closer to the noise-free frame than the raw image and than the a-trous twin. Without the clamp
// (nforOutlier 0) each firefly enters its half's fit at full weight, spread over the window, and the regression loses
// to the twin: the clamp is what wins.
TEST(Denoise, FirefliesInOneHalfAreClampedBeforeTheFit) {
  const DenoiseImages clean = test::NoisyBlocksFrame(48, 48, 0.0f, 1);
  DenoiseImages in = test::NoisyBlocksFrame(48, 48, 0.3f, 13);
  test::AddFireflies(in, 60, 100.0f, 17);
  const double raw = RelMse(in.color, clean.color);
  const double atrous = RelMse(DenoiseCpu(in, DenoiseMethod::kAtrous), clean.color);
  const double nfor = RelMse(DenoiseCpu(in, DenoiseMethod::kNfor), clean.color);
  DenoiseSettings off;
  off.nforOutlier = 0.0f;
  const double unclamped = RelMse(DenoiseCpu(in, DenoiseMethod::kNfor, 0, off), clean.color);
  std::printf("fireflies: relMSE raw %.4f, atrous %.4f, nfor %.4f (without the clamp %.4f)\n", raw, atrous, nfor,
              unclamped);
  EXPECT_LT(nfor, 0.1 * raw);
  EXPECT_LT(nfor, atrous);
  EXPECT_GT(unclamped, atrous);
}

SceneData Cornell(int size) {
  return test::BuildWithSceneCamera(LoadScene(test::ProjectScenesDir() + "/cornell.obj"), size, size);
}

// The film with half-buffers is the film without them, bit for bit, and its halves hold what they should: the odd
// samples' sums are neither 0 nor everything, and each half's mean, weighted by its samples, is the image. The
// halves do not depend on the thread count or the pass size (5 spp: uneven halves, 3 and 2 samples).
TEST(Denoise, HalfBuffersAddUpToTheFilm) {
  const SceneData d = Cornell(24);
  RenderOptions opt = test::QuietRender(24, 24, 5, 4);
  const RenderResult plain = RenderCpu(d, opt);
  EXPECT_TRUE(plain.film.odd.empty());
  opt.halfBuffers = true;
  const RenderResult split = RenderCpu(d, opt);
  EXPECT_EQ(split.film.sum, plain.film.sum);
  EXPECT_EQ(split.rgb, plain.rgb);
  ASSERT_EQ(split.film.odd.size(), split.film.sum.size());
  unsigned long long odd = 0, all = 0;
  for (size_t i = 0; i < split.film.sum.size(); ++i) {
    ASSERT_LE(split.film.odd[i], split.film.sum[i]);
    odd += split.film.odd[i];
    all += split.film.sum[i];
  }
  EXPECT_GT(odd, all / 4);  // 2 of 5 samples: about 40%
  EXPECT_LT(odd, all * 3 / 5);
  std::vector<float> a, b;
  ResolveHalves(split.film, a, b);
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR((3.0f * a[i] + 2.0f * b[i]) / 5.0f, split.rgb[i], 1e-5f) << i;
  RenderOptions other = opt;
  other.threads = 1;
  other.pathsInFlight = 24 * 24;  // one sample per pixel and pass
  const RenderResult again = RenderCpu(d, other);
  EXPECT_EQ(again.film.sum, split.film.sum);
  EXPECT_EQ(again.film.odd, split.film.odd);
}

// The Cornell box at 64x64 and 1024 spp, cached beside the tests (a few seconds on two cores), per build version.
std::vector<float> CornellReference(const SceneData& d) {
  std::string version = VersionString();
  for (char& ch : version)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  const std::string path = std::string(TRACER_TEST_CACHE_DIR) + "/denoise_reference_cornell64_" + version + ".pfm";
  int w = 0, h = 0;
  if (test::FileExists(path)) return ReadPfm(path, w, h);
  RenderOptions opt = test::QuietRender(64, 64, 1024, 8);
  opt.seed = 1234;
  const RenderResult ref = RenderCpu(d, opt);
  WriteImage(path, ref.rgb, 64, 64);
  return ref.rgb;
}

// A noisy Cornell box (64x64, 16 spp) comes closer to the reference with either filter, and closer with the
// regression than with the a-trous twin.
TEST(Denoise, BothFiltersBeatTheRawCornellBoxAndTheRegressionBeatsTheTwin) {
  const SceneData d = Cornell(64);
  const std::vector<float> reference = CornellReference(d);
  RenderOptions opt = test::QuietRender(64, 64, 16, 8);
  opt.seed = 11;
  opt.halfBuffers = true;
  const RenderResult r = RenderCpu(d, opt);
  AovImages aov;
  ComputeFirstHitAovs(d, opt, kFirstHitAovs, 8, aov);
  const DenoiseImages in = DenoiseInputs(r, aov);
  const double raw = RelMse(r.rgb, reference);
  const double nfor = RelMse(DenoiseCpu(in, DenoiseMethod::kNfor), reference);
  const double atrous = RelMse(DenoiseCpu(in, DenoiseMethod::kAtrous), reference);
  std::printf("Cornell box 64x64, 16 spp, relMSE against 1024 spp: raw %.5f, atrous %.5f, nfor %.5f\n", raw, atrous,
              nfor);
  EXPECT_LT(atrous, 0.75 * raw);
  EXPECT_LT(nfor, 0.85 * atrous);
}

// The command line: --denoise's image differs from the raw one, which --aov noisy writes byte for byte as a render
// without --denoise; "--denoise atrous" takes its value from the next word; bad combinations are refused (exit 2).
TEST(Denoise, CommandLine) {
  const std::string dir = test::MakeTempDir();
  const std::string scene = test::ProjectScenesDir() + "/cornell.obj";
  const std::string common = scene + " --backend cpu --width 16 --height 16 --spp 4 --seed 5 ";
  const std::string args = common + "-q ";
  ASSERT_EQ(test::RunTracer(args + "-o " + dir + "/plain.pfm").exitCode, 0);
  const test::CommandResult dn = test::RunTracer(args + "--denoise --aov noisy -o " + dir + "/dn.pfm");
  ASSERT_EQ(dn.exitCode, 0) << dn.output;
  EXPECT_EQ(test::ReadFile(dir + "/dn.noisy.pfm"), test::ReadFile(dir + "/plain.pfm"));
  EXPECT_NE(test::ReadFile(dir + "/dn.pfm"), test::ReadFile(dir + "/plain.pfm"));
  const test::CommandResult at = test::RunTracer(args + "--denoise atrous -o " + dir + "/at.pfm");
  ASSERT_EQ(at.exitCode, 0) << at.output;
  EXPECT_NE(test::ReadFile(dir + "/at.pfm"), test::ReadFile(dir + "/dn.pfm"));
  const test::CommandResult verbose = test::RunTracer(common + "--denoise=atrous --verbose -o " + dir + "/v.pfm");
  EXPECT_NE(verbose.output.find("denoised (atrous)"), std::string::npos) << verbose.output;
  EXPECT_EQ(test::ReadFile(dir + "/v.pfm"), test::ReadFile(dir + "/at.pfm"));
  for (const char* bad : {"--denoise=bilateral", "--aov noisy", "--aov halves", "--denoise --spp 1"}) {
    const test::CommandResult r = test::RunTracer(args + bad + " -o " + dir + "/bad.pfm");
    EXPECT_EQ(r.exitCode, 2) << bad << ": " << r.output;
  }
  EXPECT_FALSE(test::FileExists(dir + "/bad.pfm"));
  test::RemoveTree(dir);
}

// --adaptive and --denoise together: each pixel's halves are resolved with its own sample count, and the film is
// the adaptive render's own: --aov noisy and the sample map are a render's without --denoise byte for byte, while the
// pixels did stop at different counts.
TEST(Denoise, WithAdaptiveSampling) {
  const std::string dir = test::MakeTempDir();
  const std::string args = test::ProjectScenesDir() +
                           "/cornell.obj --backend cpu --width 24 --height 24 --spp 64 --adaptive 0.3 "
                           "--adaptive-min-spp 8 --seed 5 ";
  const test::CommandResult plain = test::RunTracer(args + "--aov samples -o " + dir + "/plain.pfm");
  ASSERT_EQ(plain.exitCode, 0) << plain.output;
  const size_t at = plain.output.find("spp on average (from ");
  ASSERT_NE(at, std::string::npos) << plain.output;
  int lo = 0, hi = 0;
  ASSERT_EQ(std::sscanf(plain.output.c_str() + at, "spp on average (from %d to %d)", &lo, &hi), 2) << plain.output;
  EXPECT_LT(lo, hi) << "no pixel stopped early: the test does not exercise per-pixel counts";
  const test::CommandResult dn = test::RunTracer(args + "-q --denoise --aov noisy,samples -o " + dir + "/dn.pfm");
  ASSERT_EQ(dn.exitCode, 0) << dn.output;
  EXPECT_EQ(test::ReadFile(dir + "/dn.noisy.pfm"), test::ReadFile(dir + "/plain.pfm"));
  EXPECT_EQ(test::ReadFile(dir + "/dn.samples.pfm"), test::ReadFile(dir + "/plain.samples.pfm"));
  EXPECT_NE(test::ReadFile(dir + "/dn.pfm"), test::ReadFile(dir + "/plain.pfm"));
  test::RemoveTree(dir);
}

}  // namespace
