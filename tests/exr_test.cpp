// @file exr_test.cpp: OpenEXR output (-o FILE.exr, --exr-half): what is written reads back with OpenEXR, as 32-bit
// floats exactly and as 16-bit floats to half precision, with the render's settings in the header; a render's EXR
// holds the same pixels as its PFM.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "test_util.h"
#include "tracer/core/rng.h"
#include "tracer/host/image_io.h"

using namespace tracer;

namespace {

#define TRACER_REQUIRE_EXR() \
  if (!ExrSupported()) GTEST_SKIP() << "built without OpenEXR (apt-get install libopenexr-dev)"

std::vector<float> TestImage(int w, int h) {
  std::vector<float> rgb(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < rgb.size(); ++i)  // values over many octaves, a distinct one in every channel
    rgb[i] = std::ldexp(Random(3, static_cast<uint32_t>(i), 0, 0), static_cast<int>(i % 31) - 15);
  rgb[0] = 0.0f;
  return rgb;
}

TEST(Exr, FloatRoundTripIsExactWithAttributes) {
  TRACER_REQUIRE_EXR();
  const std::string dir = test::MakeTempDir();
  const int w = 37, h = 21;  // odd sizes: rows and channels cannot line up by accident
  const std::vector<float> rgb = TestImage(w, h);
  ImageExtras extras;
  extras.attributes = {{"tracer:settings", "seed=7\nwidth=37\n"}, {"tracer:scene", "a b.obj"}};
  WriteImage(dir + "/a.exr", rgb, w, h, 0.0f, extras);
  int rw = 0, rh = 0;
  std::map<std::string, std::string> attributes;
  const std::vector<float> back = ReadExr(dir + "/a.exr", rw, rh, &attributes);
  ASSERT_EQ(rw, w);
  ASSERT_EQ(rh, h);
  EXPECT_EQ(0, std::memcmp(back.data(), rgb.data(), rgb.size() * sizeof(float)));
  EXPECT_EQ(attributes["tracer:settings"], "seed=7\nwidth=37\n");
  EXPECT_EQ(attributes["tracer:scene"], "a b.obj");
  test::RemoveTree(dir);
}

TEST(Exr, HalfKeepsHalfPrecisionAndClampsToItsRange) {
  TRACER_REQUIRE_EXR();
  const std::string dir = test::MakeTempDir();
  const int w = 16, h = 9;
  std::vector<float> rgb = TestImage(w, h);
  rgb[3] = 1.0e6f;                                   // beyond half's range: its largest finite value
  rgb[4] = std::numeric_limits<float>::infinity();   // never written as such: 0
  rgb[5] = std::numeric_limits<float>::quiet_NaN();  // 0
  ImageExtras extras;
  extras.half = true;
  EXPECT_EQ(WriteImage(dir + "/h.exr", rgb, w, h, 0.0f, extras), 2u) << "two non-finite values replaced";
  int rw = 0, rh = 0;
  const std::vector<float> back = ReadExr(dir + "/h.exr", rw, rh);
  ASSERT_EQ(back.size(), rgb.size());
  EXPECT_EQ(back[3], 65504.0f);
  EXPECT_EQ(back[4], 0.0f);
  EXPECT_EQ(back[5], 0.0f);
  for (size_t i = 6; i < rgb.size(); ++i) {
    // Normal halves keep 11 significant bits; below 2^-14 they are subnormal, with a spacing of 2^-24.
    const double tolerance = std::fmax(std::fabs(rgb[i]) * std::ldexp(1.0, -11), std::ldexp(1.0, -25));
    EXPECT_NEAR(back[i], rgb[i], tolerance) << i;
  }
  // A half file is about half the size of a float one (noise compresses poorly).
  WriteImage(dir + "/f.exr", rgb, w, h, 0.0f, {});
  EXPECT_LT(test::ReadFile(dir + "/h.exr").size(), test::ReadFile(dir + "/f.exr").size());
  test::RemoveTree(dir);
}

// The command line: the EXR of a render has the PFM's pixels bit for bit (both linear floats, same seed) and says
// how it was made.
TEST(Exr, RenderWritesThePfmsPixelsAndItsSettings) {
  TRACER_REQUIRE_EXR();
  const std::string dir = test::MakeTempDir();
  const std::string args = test::ProjectScenesDir() + "/cornell.obj --backend cpu --spp 4 --width 40 --height 30 -o ";
  const test::CommandResult a = test::RunTracer(args + dir + "/r.exr"), b = test::RunTracer(args + dir + "/r.pfm");
  ASSERT_EQ(a.exitCode, 0) << a.output;
  ASSERT_EQ(b.exitCode, 0) << b.output;
  int ew = 0, eh = 0, pw = 0, ph = 0;
  std::map<std::string, std::string> attributes;
  const std::vector<float> exr = ReadExr(dir + "/r.exr", ew, eh, &attributes);
  const std::vector<float> pfm = ReadPfm(dir + "/r.pfm", pw, ph);
  ASSERT_EQ(ew, 40);
  ASSERT_EQ(eh, 30);
  ASSERT_EQ(exr.size(), pfm.size());
  EXPECT_EQ(0, std::memcmp(exr.data(), pfm.data(), exr.size() * sizeof(float)));
  EXPECT_EQ(attributes["tracer:spp"], "4");
  EXPECT_NE(attributes["tracer:settings"].find("seed=1\n"), std::string::npos) << attributes["tracer:settings"];
  EXPECT_NE(attributes["tracer:scene"].find("cornell.obj"), std::string::npos);
  EXPECT_FALSE(attributes["tracer:version"].empty());
  test::RemoveTree(dir);
}

TEST(Exr, HalfFlagWithoutExrIsRefusedAndWritesNothing) {
  const std::string dir = test::MakeTempDir();
  const test::CommandResult r =
      test::RunTracer(test::ProjectScenesDir() +
                      "/cornell.obj --backend cpu --spp 1 --width 8 --height 8 --exr-half -o " + dir + "/x.png");
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.output.find("--exr-half applies to .exr output only"), std::string::npos) << r.output;
  EXPECT_FALSE(test::FileExists(dir + "/x.png"));
  test::RemoveTree(dir);
}

}  // namespace
