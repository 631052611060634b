// @file image_io.cpp: PNG/HDR/PFM output through stb_image_write and a small PFM writer, written atomically.
#include "tracer/host/image_io.h"

#include <stb_image_write.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "tracer/host/file_util.h"

namespace tracer {

static std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

ImageFormat FormatFromPath(const std::string& path) {
  std::string p = Lower(path);
  auto ends = [&](const char* e) {
    return p.size() >= std::strlen(e) && p.compare(p.size() - std::strlen(e), std::string::npos, e) == 0;
  };
  if (ends(".png")) return ImageFormat::kPng;
  if (ends(".hdr")) return ImageFormat::kHdr;
  if (ends(".pfm")) return ImageFormat::kPfm;
  return ImageFormat::kUnknown;
}

float LinearToSrgb(float v) {
  v = std::min(std::max(v, 0.0f), 1.0f);
  return v <= 0.0031308f ? 12.92f * v : 1.055f * std::pow(v, 1.0f / 2.4f) - 0.055f;
}

static bool WritePfm(const std::string& path, const std::vector<float>& rgb, int w, int h) {
  std::ofstream f(path, std::ios::binary);
  if (!f) return false;
  f << "PF\n" << w << " " << h << "\n-1.0\n";  // negative scale: little-endian
  for (int y = h - 1; y >= 0; --y)             // PFM stores the bottom row first
    f.write(reinterpret_cast<const char*>(&rgb[static_cast<size_t>(y) * w * 3]),
            static_cast<std::streamsize>(w) * 3 * 4);
  f.flush();
  return static_cast<bool>(f);
}

std::vector<float> ReadPfm(const std::string& path, int& w, int& h) {
  std::ifstream f(path, std::ios::binary);
  std::string magic;
  float scale;
  if (!(f >> magic >> w >> h >> scale) || magic != "PF" || w <= 0 || h <= 0)
    throw std::runtime_error(path + ": not a colour PFM file");
  f.get();
  std::vector<float> rgb(static_cast<size_t>(w) * h * 3);
  for (int y = h - 1; y >= 0; --y)
    f.read(reinterpret_cast<char*>(&rgb[static_cast<size_t>(y) * w * 3]), static_cast<std::streamsize>(w) * 3 * 4);
  if (!f) throw std::runtime_error(path + ": truncated PFM file");
  return rgb;
}

size_t WriteImage(const std::string& path, const std::vector<float>& rgbIn, int w, int h, float exposure) {
  ImageFormat fmt = FormatFromPath(path);
  if (fmt == ImageFormat::kUnknown)
    throw std::runtime_error(path + ": unknown image extension (use .png, .hdr or .pfm)");
  if (rgbIn.size() != static_cast<size_t>(w) * h * 3) throw std::runtime_error("image size mismatch");
  std::vector<float> rgb = rgbIn;
  size_t nonFinite = 0;
  for (float& v : rgb)
    if (!std::isfinite(v)) {
      v = 0.0f;
      ++nonFinite;
    }
  AtomicWriteFile(path, [&](const std::string& tmp) {
    bool ok = false;
    if (fmt == ImageFormat::kPng) {
      float gain = std::exp2(exposure);
      std::vector<unsigned char> px(rgb.size());
      for (size_t i = 0; i < rgb.size(); ++i)
        px[i] = static_cast<unsigned char>(std::lround(255.0f * LinearToSrgb(rgb[i] * gain)));
      ok = stbi_write_png(tmp.c_str(), w, h, 3, px.data(), w * 3) != 0;
    } else if (fmt == ImageFormat::kHdr) {
      ok = stbi_write_hdr(tmp.c_str(), w, h, 3, rgb.data()) != 0;
    } else {
      ok = WritePfm(tmp, rgb, w, h);
    }
    if (!ok) {
      // Thrown here, not returned as false, so the message says "image" as it always has; AtomicWriteFile
      // removes its temporary file only on a false return, so this removes it.
      const int err = errno;
      std::remove(tmp.c_str());
      throw std::runtime_error(path + ": cannot write image (" + std::strerror(err) + ")");
    }
    return true;
  });
  return nonFinite;
}

}  // namespace tracer
