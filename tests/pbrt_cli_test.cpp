// @file pbrt_cli_test.cpp: `tracer scene.pbrt` from the command line: the file's Film, Sampler and Integrator are the
// render's defaults (size, spp, depth, output name) where no flag gives them, flags win, its infinite light is the
// environment unless --env or --env-map names one, and its field of view follows the image's shorter axis.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "pbrt_features_scene.h"
#include "test_util.h"
#include "tracer/host/image_io.h"

namespace tracer {
namespace {

using test::MakeTempDir;
using test::PbrtHeader;
using test::RemoveTree;
using test::RunTracer;

// A grey floor under a constant sky, 40x30 by the file, `spp` samples, depth 3, written as "sky.pfm".
std::string WriteSkyScene(const std::string& dir, const std::string& light, int spp = 2) {
  const std::string path = dir + "/sky.pbrt";
  std::ofstream f(path);
  f << PbrtHeader("0 2 6  0 0 0  0 1 0", 40, 40, 30, "sky.pfm", spp, 3) << light
    << "Material \"diffuse\" \"rgb reflectance\" [0.5 0.5 0.5]\n"
       "Shape \"trianglemesh\" \"point3 P\" [-5 0 -5  5 0 -5  5 0 5  -5 0 5] \"integer indices\" [0 1 2 0 2 3]\n";
  return path;
}

double MeanOf(const std::vector<float>& rgb) {
  double sum = 0.0;
  for (float v : rgb) sum += v;
  return rgb.empty() ? 0.0 : sum / static_cast<double>(rgb.size());
}

TEST(PbrtCli, TheFilesFilmSamplerAndIntegratorAreTheDefaults) {
  const std::string dir = MakeTempDir();
  const std::string scene = WriteSkyScene(dir, "LightSource \"infinite\" \"rgb L\" [0.5 0.6 0.7]\n");
  // No -o: the file's name in the default output folder (made beside the working directory).
  const test::CommandResult r = RunTracer("'" + scene + "' --backend cpu", 120, "");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("at 40x30, 2 spp"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("wrote output/sky.pfm"), std::string::npos) << r.output;
  int w = 0, h = 0;
  const std::vector<float> lit = ReadPfm("output/sky.pfm", w, h);
  EXPECT_EQ(w, 40);
  EXPECT_EQ(h, 30);
  EXPECT_GT(MeanOf(lit), 0.05) << "the file's infinite light should light the floor";
  std::remove("output/sky.pfm");

  // Flags win over the file, and --env replaces its sky.
  const test::CommandResult f =
      RunTracer("'" + scene + "' --backend cpu --width 20 --height 10 --spp 1 --env 0,0,0 -o '" + dir + "/f.pfm'");
  ASSERT_EQ(f.exitCode, 0) << f.output;
  EXPECT_NE(f.output.find("at 20x10, 1 spp"), std::string::npos) << f.output;
  const std::vector<float> dark = ReadPfm(dir + "/f.pfm", w, h);
  EXPECT_EQ(w, 20);
  EXPECT_EQ(h, 10);
  EXPECT_EQ(MeanOf(dark), 0.0) << "--env 0,0,0 should replace the file's sky";
  RemoveTree(dir);
}

TEST(PbrtCli, TheFieldOfViewFollowsTheShorterAxisAtAnotherSize) {
  const std::string dir = MakeTempDir();
  const std::string scene = WriteSkyScene(dir, "LightSource \"infinite\" \"rgb L\" [1 1 1]\n");
  // 40x30: the shorter axis is the vertical one, so fov 40 is vertical; at 30x40 it becomes the horizontal one and
  // the vertical field grows: 2 atan(tan(20 deg) * 40 / 30).
  const test::CommandResult wide = RunTracer("'" + scene + "' --backend cpu --spp 1 --verbose -o '" + dir + "/a.pfm'");
  ASSERT_EQ(wide.exitCode, 0) << wide.output;
  EXPECT_NE(wide.output.find("fov 40\n"), std::string::npos) << wide.output;
  const test::CommandResult tall =
      RunTracer("'" + scene + "' --backend cpu --spp 1 --width 30 --height 40 --verbose -o '" + dir + "/b.pfm'");
  ASSERT_EQ(tall.exitCode, 0) << tall.output;
  const double expected = 2.0 * std::atan(std::tan(20.0 * M_PI / 180.0) * 40.0 / 30.0) * 180.0 / M_PI;
  const size_t at = tall.output.find("\nfov ");
  ASSERT_NE(at, std::string::npos) << tall.output;
  EXPECT_NEAR(std::stod(tall.output.substr(at + 5)), expected, 0.01) << tall.output;
  RemoveTree(dir);
}

TEST(PbrtCli, DenoisingAOneSampleFileIsAUsageErrorAndRayFilesKeepTheirSize) {
  const std::string dir = MakeTempDir();
  const std::string scene = WriteSkyScene(dir, "LightSource \"infinite\" \"rgb L\" [1 1 1]\n", 1);
  const test::CommandResult r = RunTracer("'" + scene + "' --backend cpu --denoise -o '" + dir + "/x.png'");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("--denoise needs two halves"), std::string::npos) << r.output;
  // --make-rays keeps its documented 1920x1080 camera rays whatever the file's film says.
  const test::CommandResult m =
      RunTracer("'" + scene + "' --backend cpu --make-rays primary '" + dir + "/p.rays' --seed 1");
  ASSERT_EQ(m.exitCode, 0) << m.output;
  std::ifstream rays(dir + "/p.rays", std::ios::binary | std::ios::ate);
  EXPECT_EQ(static_cast<long long>(rays.tellg()), 1920LL * 1080 * 32);
  RemoveTree(dir);
}

TEST(PbrtCli, AFileThatDoesNotParseIsAnErrorWithItsLine) {
  const std::string dir = MakeTempDir();
  {
    std::ofstream f(dir + "/bad.pbrt");
    f << "Film \"rgb\"\n\"integer xresolution\" [40 50 x]\n";
  }
  const test::CommandResult r = RunTracer("'" + dir + "/bad.pbrt' --backend cpu -o '" + dir + "/x.png'");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("bad.pbrt:2"), std::string::npos) << r.output;
  EXPECT_FALSE(std::ifstream(dir + "/x.png").good());
  RemoveTree(dir);
}

}  // namespace
}  // namespace tracer
