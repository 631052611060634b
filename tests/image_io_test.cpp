// @file image_io_test.cpp: written images read back: PNG pixels, size and row order against the PFM's values
// tone-mapped, the PFM's bottom-up rows, and PNGs tall enough to be deflated in several strips.
#include "tracer/host/image_io.h"

#include <gtest/gtest.h>
#include <stb_image.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"

namespace tracer {
namespace {

// Every row and every column differs (red follows x, green follows y, blue mixes both), values run past 1
// (clamped by the tone map) and below 0, so a transposed, flipped or shifted image cannot match.
std::vector<float> DistinctImage(int w, int h) {
  std::vector<float> rgb(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float* p = &rgb[(static_cast<size_t>(y) * w + x) * 3];
      p[0] = (x + 0.5f) / w;
      p[1] = 1.2f * (y + 0.5f) / h - 0.1f;
      p[2] = static_cast<float>((x * 7 + y * 13) % 29) / 28.0f;
    }
  return rgb;
}

struct Png {
  int w = 0, h = 0, channels = 0;
  std::vector<uint8_t> px;
};

Png ReadPng(const std::string& path) {
  Png png;
  unsigned char* data = stbi_load(path.c_str(), &png.w, &png.h, &png.channels, 0);
  EXPECT_NE(data, nullptr) << path << ": " << stbi_failure_reason();
  if (data) {
    png.px.assign(data, data + static_cast<size_t>(png.w) * png.h * png.channels);
    stbi_image_free(data);
  }
  return png;
}

// Writes rgb as PNG and PFM, reads both back, and checks the PNG, row by row, against the PFM's values
// tone-mapped with the same function and exposure.
void CheckPngAgainstPfm(int w, int h, float exposure) {
  const std::vector<float> rgb = DistinctImage(w, h);
  const std::string dir = test::MakeTempDir();
  WriteImage(dir + "/a.png", rgb, w, h, exposure);
  WriteImage(dir + "/a.pfm", rgb, w, h);
  int pw = 0, ph = 0;
  const std::vector<float> pfm = ReadPfm(dir + "/a.pfm", pw, ph);
  ASSERT_EQ(pw, w);
  ASSERT_EQ(ph, h);
  ASSERT_EQ(pfm, rgb);
  const Png png = ReadPng(dir + "/a.png");
  ASSERT_EQ(png.w, w);
  ASSERT_EQ(png.h, h);
  ASSERT_EQ(png.channels, 3);
  const float gain = std::exp2(exposure);
  for (int y = 0; y < h; ++y) {
    std::vector<uint8_t> expected(static_cast<size_t>(w) * 3);
    for (size_t i = 0; i < expected.size(); ++i) expected[i] = ToneMapToSrgb8(pfm[y * expected.size() + i], gain);
    const std::vector<uint8_t> row(png.px.begin() + y * expected.size(), png.px.begin() + (y + 1) * expected.size());
    ASSERT_EQ(row, expected) << "PNG row " << y << " of " << w << "x" << h;
  }
}

TEST(ImageIo, ToneMapIsSrgbRoundedToNearest) {
  EXPECT_EQ(ToneMapToSrgb8(0.0f, 1.0f), 0);
  EXPECT_EQ(ToneMapToSrgb8(-1.0f, 1.0f), 0);
  EXPECT_EQ(ToneMapToSrgb8(1.0f, 1.0f), 255);
  EXPECT_EQ(ToneMapToSrgb8(7.0f, 1.0f), 255);
  EXPECT_EQ(ToneMapToSrgb8(0.5f, 1.0f), 188);   // 255 * (1.055 * 0.5^(1/2.4) - 0.055) = 187.52
  EXPECT_EQ(ToneMapToSrgb8(0.25f, 2.0f), 188);  // one stop of exposure doubles the value
  EXPECT_EQ(ToneMapToSrgb8(0.001f, 1.0f), 3);   // linear segment: 255 * 12.92 * 0.001 = 3.29
}

TEST(ImageIo, PngReadsBackAsThePfmToneMapped) { CheckPngAgainstPfm(37, 23, 0.0f); }

TEST(ImageIo, PngWithExposureReadsBackAsThePfmToneMapped) { CheckPngAgainstPfm(23, 37, 1.0f); }

// Taller than one deflate strip (64 rows; image_io.cpp): several strips with a partial last one, and a
// single-row image, must each decode as one stream.
TEST(ImageIo, PngOfSeveralStripsReadsBack) {
  CheckPngAgainstPfm(13, 150, 0.0f);
  CheckPngAgainstPfm(5, 128, 0.0f);
  CheckPngAgainstPfm(41, 1, 0.0f);
}

TEST(ImageIo, PngTopRowIsImageRowZero) {
  const int w = 4, h = 3;
  std::vector<float> rgb(w * h * 3, 0.0f);
  for (int x = 0; x < w; ++x) rgb[x * 3] = 1.0f;  // row 0 red, the rest black
  const std::string path = test::MakeTempDir() + "/top.png";
  WriteImage(path, rgb, w, h);
  const Png png = ReadPng(path);
  ASSERT_EQ(png.px.size(), static_cast<size_t>(w * h * 3));
  EXPECT_EQ(png.px[0], 255);              // first pixel in the file: top left, red
  EXPECT_EQ(png.px[(w * h - 1) * 3], 0);  // last: bottom right, black
}

// The PFM spec stores rows bottom to top: the first row of data after the header is the image's last row.
TEST(ImageIo, PfmStoresTheBottomRowFirst) {
  const int w = 5, h = 3;
  const std::vector<float> rgb = DistinctImage(w, h);
  const std::string path = test::MakeTempDir() + "/a.pfm";
  WriteImage(path, rgb, w, h);
  const std::string file = test::ReadFile(path);
  const std::string header = "PF\n5 3\n-1.0\n";
  ASSERT_EQ(file.substr(0, header.size()), header);
  ASSERT_EQ(file.size(), header.size() + rgb.size() * sizeof(float));
  std::vector<float> firstRow(static_cast<size_t>(w) * 3);
  std::memcpy(firstRow.data(), file.data() + header.size(), firstRow.size() * sizeof(float));
  EXPECT_EQ(firstRow, std::vector<float>(rgb.end() - w * 3, rgb.end()));
}

TEST(ImageIo, NonFiniteValuesAreWrittenAsZero) {
  std::vector<float> rgb(2 * 1 * 3, 0.5f);
  rgb[0] = std::numeric_limits<float>::quiet_NaN();
  rgb[4] = std::numeric_limits<float>::infinity();
  const std::string dir = test::MakeTempDir();
  EXPECT_EQ(WriteImage(dir + "/nf.png", rgb, 2, 1), 2u);
  const Png png = ReadPng(dir + "/nf.png");
  EXPECT_EQ(png.px, (std::vector<uint8_t>{0, 188, 188, 188, 0, 188}));
}

}  // namespace
}  // namespace tracer
