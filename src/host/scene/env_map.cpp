// @file env_map.cpp: see env_map.h.
#include "tracer/host/env_map.h"

#include <stb/stb_image.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "tracer/host/image_io.h"

namespace tracer {
namespace {

std::string LowerExtension(const std::string& path) {
  const size_t dot = path.find_last_of('.'), slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// Radiance RGBE through stb_image (stbi_loadf: linear floats, row 0 at the top).
EnvImage ReadHdrEnvImage(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error(path + ": cannot open environment map (" + std::strerror(errno) + ")");
  if (!stbi_is_hdr_from_file(f)) {
    std::fclose(f);
    throw std::runtime_error(path + ": not a Radiance .hdr image (no #?RADIANCE / #?RGBE header)");
  }
  int w = 0, h = 0, channels = 0;
  float* px = stbi_loadf_from_file(f, &w, &h, &channels, 3);
  std::fclose(f);
  if (!px) throw std::runtime_error(path + ": cannot decode environment map (" + stbi_failure_reason() + ")");
  EnvImage img;
  img.width = w;
  img.height = h;
  img.rgb.assign(px, px + static_cast<size_t>(w) * static_cast<size_t>(h) * 3);
  stbi_image_free(px);
  return img;
}

// OpenEXR's R, G, B (any pixel type) through image_io's ReadExr, which names the file in its errors and says
// when this build has no OpenEXR.
EnvImage ReadExrEnvImage(const std::string& path) {
  EnvImage img;
  img.rgb = ReadExr(path, img.width, img.height);
  return img;
}

}  // namespace

EnvImage ReadEnvImage(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    throw std::runtime_error(path + ": cannot open environment map (" + std::strerror(errno) + ")");
  if (!S_ISREG(st.st_mode)) throw std::runtime_error(path + ": environment map is not a regular file");
  const std::string ext = LowerExtension(path);
  EnvImage img;
  if (ext == ".hdr")
    img = ReadHdrEnvImage(path);
  else if (ext == ".exr")
    img = ReadExrEnvImage(path);
  else
    throw std::runtime_error(path + ": unknown environment map format '" + ext + "' (use a lat-long .hdr or .exr)");
  if (img.width < 2 || img.height < 1)
    throw std::runtime_error(path + ": environment map of " + std::to_string(img.width) + "x" +
                             std::to_string(img.height) + " texels is too small (at least 2x1)");
  for (size_t i = 0; i < img.rgb.size(); ++i)
    if (!std::isfinite(img.rgb[i]) || img.rgb[i] < 0.0f)
      throw std::runtime_error(path + ": environment map texel " + std::to_string(i / 3 % size_t(img.width)) + "," +
                               std::to_string(i / 3 / size_t(img.width)) + " holds a negative or non-finite value");
  return img;
}

void SetEnvironmentMap(SceneData& d, const EnvImage& image, float scale, float rotateDegrees) {
  const int w = image.width, h = image.height;
  EnvMap& env = d.env;
  env.texels.assign(static_cast<size_t>(w) * h, Float4{0, 0, 0, 0});
  env.marginalCdf.assign(static_cast<size_t>(h) + 1, 0.0f);
  env.conditionalCdf.assign(static_cast<size_t>(h) * (w + 1), 0.0f);
  // Texel weights luminance x sin(theta of the row centre), summed per row in double.
  std::vector<double> rowSum(static_cast<size_t>(h), 0.0), weight(static_cast<size_t>(w) * h, 0.0);
  for (int y = 0; y < h; ++y) {
    const double sinTheta = std::sin(kPi * (y + 0.5) / h);
    for (int x = 0; x < w; ++x) {
      const size_t i = static_cast<size_t>(y) * w + x;
      const Vec3 c = Vec3(image.rgb[3 * i], image.rgb[3 * i + 1], image.rgb[3 * i + 2]) * scale;
      env.texels[i] = Float4{c.x, c.y, c.z, 0.0f};
      weight[i] = static_cast<double>(Luminance(c)) * sinTheta;
      rowSum[static_cast<size_t>(y)] += weight[i];
    }
  }
  const double total = std::accumulate(rowSum.begin(), rowSum.end(), 0.0);
  // Cumulative sums in double, stored as floats with the last entry exactly 1. A row (or a map) of weight 0 gets a
  // uniform cdf: it is then never picked (row) or its radiance is black anyway.
  auto buildCdf = [](const double* f, int n, double sum, float* cdf) {
    double acc = 0.0;
    cdf[0] = 0.0f;
    for (int i = 0; i < n; ++i) {
      acc += sum > 0.0 ? f[i] / sum : 1.0 / n;
      cdf[i + 1] = static_cast<float>(std::min(acc, 1.0));
    }
    cdf[n] = 1.0f;
  };
  buildCdf(rowSum.data(), h, total, env.marginalCdf.data());
  for (int y = 0; y < h; ++y)
    buildCdf(&weight[static_cast<size_t>(y) * w], w, rowSum[static_cast<size_t>(y)],
             &env.conditionalCdf[static_cast<size_t>(y) * (w + 1)]);
  // Each texel's pmf from the float cdfs themselves: exactly the probability that SampleCdf picks it (up to the
  // 2^-24 grid of the random numbers), so the pdf a sample reports is the one it was drawn with.
  for (int y = 0; y < h; ++y) {
    const double pRow = static_cast<double>(env.marginalCdf[y + 1]) - env.marginalCdf[y];
    const float* cdf = &env.conditionalCdf[static_cast<size_t>(y) * (w + 1)];
    for (int x = 0; x < w; ++x)
      env.texels[static_cast<size_t>(y) * w + x].w =
          total > 0.0 ? static_cast<float>(pRow * (static_cast<double>(cdf[x + 1]) - cdf[x])) : 0.0f;
  }
  const double a = static_cast<double>(rotateDegrees) * kPi / 180.0;
  env.params.width = w;
  env.params.height = h;
  env.params.cosRot = static_cast<float>(std::cos(a));
  env.params.sinRot = static_cast<float>(std::sin(a));
  d.environment = Vec3(0.0f);
  UpdateEnvironmentShare(d);
}

double EnvConcentration(const EnvMap& env) {
  const int w = env.params.width, h = env.params.height;
  if (w == 0) return 0.0;
  struct Texel {
    double radiance, solidAngle;
  };
  std::vector<Texel> texels;
  texels.reserve(static_cast<size_t>(w) * h);
  double power = 0.0;
  for (int y = 0; y < h; ++y) {
    const double solidAngle = (std::cos(kPi * y / h) - std::cos(kPi * (y + 1) / h)) * 2.0 * kPi / w;
    for (int x = 0; x < w; ++x) {
      const Float4& t = env.texels[static_cast<size_t>(y) * w + x];
      texels.push_back(Texel{Luminance(Vec3(t.x, t.y, t.z)), solidAngle});
      power += texels.back().radiance * solidAngle;
    }
  }
  if (!(power > 0.0)) return 0.0;
  std::sort(texels.begin(), texels.end(), [](const Texel& a, const Texel& b) { return a.radiance > b.radiance; });
  const double budget = 0.01 * 4.0 * kPi;  // 1% of the sphere; the last texel counts in part
  double covered = 0.0, held = 0.0;
  for (const Texel& t : texels) {
    const double part = std::min(t.solidAngle, budget - covered);
    held += t.radiance * part;
    covered += part;
    if (covered >= budget) break;
  }
  return std::clamp((held / power - 0.01) / 0.99, 0.0, 1.0);
}

void UpdateEnvironmentShare(SceneData& d) {
  EnvMap& env = d.env;
  // Mean luminance over the sphere: each texel weighted by the solid angle it covers, 2 pi / W (cos t0 - cos t1).
  double mean = Luminance(d.environment);
  if (env.params.width > 0) {
    const int w = env.params.width, h = env.params.height;
    double sum = 0.0;
    for (int y = 0; y < h; ++y) {
      const double band = std::cos(kPi * y / h) - std::cos(kPi * (y + 1) / h);
      double row = 0.0;
      for (int x = 0; x < w; ++x) {
        const Float4& t = env.texels[static_cast<size_t>(y) * w + x];
        row += Luminance(Vec3(t.x, t.y, t.z));
      }
      sum += row * band * 2.0 * kPi / w;
    }
    mean = sum / (4.0 * kPi);
  }
  const double radius = SceneRadius(d);
  env.power = kPi * kPi * std::max(radius * radius, 1e-12) * mean;
  const double emitters = std::accumulate(d.emitterPower.begin(), d.emitterPower.end(), 0.0);
  double delta = 0.0;
  for (const DeltaLight& light : d.deltaLights) delta += DeltaLightPower(light, radius);
  env.params.pick = env.power > 0.0 ? static_cast<float>(env.power / (env.power + emitters + delta)) : 0.0f;
  env.params.portalMix = kPortalMixMax * static_cast<float>(std::max(0.0, 1.0 - 2.0 * EnvConcentration(env)));
  d.deltaShare = delta > 0.0 ? static_cast<float>(delta / (delta + emitters)) : 0.0f;
}

}  // namespace tracer
