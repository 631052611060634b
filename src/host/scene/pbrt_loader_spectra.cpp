// @file pbrt_loader_spectra.cpp: RGB values from pbrt-v4's spectrum parameters (see pbrt_loader_spectra.h).
#include "pbrt_loader_spectra.h"

#include <algorithm>
#include <cmath>

namespace tracer::pbrtload {
namespace {

// The wavelengths (nm) at which a spectrum stands for the R, G and B channels: near the peaks of the sRGB primaries'
// dominant wavelengths (red 630, green 532, blue 465).
constexpr double kChannelNm[3] = {630.0, 532.0, 465.0};

// pbrt-v4's named spectra (src/pbrt/util/spectrum.cpp, GetNamedSpectrum: its tables Ag_eta ... TiO2_k and
// GlassBK7_eta ... GlassSF11_eta, piecewise linear in wavelength), evaluated at 630, 532 and 465 nm by linear
// interpolation of those tables. Normal-incidence reflectances ((n-1)^2+k^2)/((n+1)^2+k^2) of the metals come out
// as Ag (0.968, 0.955, 0.931), Al (0.914, 0.922, 0.924), Au (0.932, 0.769, 0.387), Cu (0.924, 0.610, 0.567).
struct NamedSpectrum {
  const char* name;
  float rgb[3];
};
constexpr NamedSpectrum kNamedSpectra[] = {
    {"metal-Ag-eta", {0.1342f, 0.1297f, 0.1395f}},   {"metal-Ag-k", {3.9628f, 3.1942f, 2.6135f}},
    {"metal-Al-eta", {1.3571f, 0.8843f, 0.6605f}},   {"metal-Al-k", {7.5878f, 6.4700f, 5.6536f}},
    {"metal-Au-eta", {0.1837f, 0.4573f, 1.3724f}},   {"metal-Au-k", {3.0663f, 2.4084f, 1.8250f}},
    {"metal-Cu-eta", {0.2459f, 1.0723f, 1.1569f}},   {"metal-Cu-k", {3.3784f, 2.5907f, 2.4572f}},
    {"metal-CuZn-eta", {0.4450f, 0.5682f, 0.9470f}}, {"metal-CuZn-k", {3.5220f, 2.5880f, 1.9200f}},
    {"metal-MgO-eta", {1.7348f, 1.7422f, 1.7502f}},  {"metal-MgO-k", {0.0f, 0.0f, 0.0f}},
    {"metal-TiO2-eta", {2.8750f, 2.9685f, 3.1176f}}, {"metal-TiO2-k", {0.0f, 0.0f, 0.0f}},
    {"glass-BK7", {1.5152f, 1.5195f, 1.5240f}},      {"glass-BAF10", {1.6672f, 1.6748f, 1.6830f}},
    {"glass-FK51A", {1.4854f, 1.4885f, 1.4917f}},    {"glass-LASF9", {1.8451f, 1.8590f, 1.8748f}},
    {"glass-F5", {1.6687f, 1.6796f, 1.6921f}},       {"glass-F10", {1.7234f, 1.7367f, 1.7520f}},
    {"glass-F11", {1.7789f, 1.7948f, 1.8135f}},
};

// One lobe of the Wyman-Sloan-Shirley fit: a Gaussian with different widths left and right of its peak.
double Lobe(double nm, double peak, double left, double right) {
  const double t = (nm - peak) / (nm < peak ? left : right);
  return std::exp(-0.5 * t * t);
}

// XYZ to linear sRGB (IEC 61966-2-1, D65 white), the matrix of pbrt-v4's sRGB colour space.
Vec3 XyzToLinearSrgb(double x, double y, double z) {
  return Vec3(static_cast<float>(3.2404542 * x - 1.5371385 * y - 0.4985314 * z),
              static_cast<float>(-0.9692660 * x + 1.8760108 * y + 0.0415560 * z),
              static_cast<float>(0.0556434 * x - 0.2040259 * y + 1.0572252 * z));
}

// A piecewise-linear spectrum of (wavelength, value) pairs at wavelength nm (the end values outside, as pbrt's
// PiecewiseLinearSpectrum gives zero there: its files cover the visible range).
double PiecewiseAt(const std::vector<double>& pairs, double nm) {
  const size_t n = pairs.size() / 2;
  if (n == 0) return 0.0;
  if (nm <= pairs[0]) return pairs[1];
  for (size_t i = 1; i < n; ++i)
    if (nm <= pairs[2 * i]) {
      const double l0 = pairs[2 * i - 2], l1 = pairs[2 * i];
      const double t = l1 > l0 ? (nm - l0) / (l1 - l0) : 1.0;
      return pairs[2 * i - 1] + t * (pairs[2 * i + 1] - pairs[2 * i - 1]);
    }
  return pairs[2 * n - 1];
}

// An illuminant's colour scaled to luminance 1 (what pbrt-v4's photometric normalisation of a light makes of it).
Vec3 UnitLuminance(Vec3 c) {
  const float y = Luminance(c);
  return y > 0.0f ? c / y : Vec3(1.0f);
}

}  // namespace

bool NamedSpectrumRgb(const std::string& name, Vec3* rgb) {
  for (const NamedSpectrum& s : kNamedSpectra)
    if (name == s.name) {
      *rgb = Vec3(s.rgb[0], s.rgb[1], s.rgb[2]);
      return true;
    }
  return false;
}

Vec3 BlackbodyRgb(double kelvin) {
  // Planck's law, B(lambda, T) = 2 h c^2 / lambda^5 / (exp(h c / (lambda k T)) - 1); its scale cancels below.
  constexpr double kHcOverK = 1.438776877e-2;  // h c / k in metre kelvin
  double x = 0.0, y = 0.0, z = 0.0;
  for (double nm = 360.0; nm <= 830.0; nm += 1.0) {
    const double m = nm * 1e-9;
    const double b = 1.0 / (std::pow(m, 5.0) * (std::exp(kHcOverK / (m * kelvin)) - 1.0));
    x += b * (1.056 * Lobe(nm, 599.8, 37.9, 31.0) + 0.362 * Lobe(nm, 442.0, 16.0, 26.7) -
              0.065 * Lobe(nm, 501.1, 20.4, 26.2));
    y += b * (0.821 * Lobe(nm, 568.8, 46.9, 40.5) + 0.286 * Lobe(nm, 530.9, 16.3, 31.1));
    z += b * (1.217 * Lobe(nm, 437.0, 11.8, 36.0) + 0.681 * Lobe(nm, 459.0, 26.0, 13.8));
  }
  if (!(y > 0.0)) return Vec3(0.0f);
  const Vec3 c = XyzToLinearSrgb(x / y, 1.0, z / y);
  return Max(c, Vec3(0.0f));
}

bool SpectrumRgb(PbrtLoad& load, const PbrtParams& params, const std::string& name, SpectrumUse use, Vec3* rgb) {
  const PbrtParam* p = params.Find(name);
  if (!p) return false;
  Vec3 c(0.0f);
  switch (p->type) {
    case PbrtParamType::kRgb:
      if (p->floats.size() < 3) return false;
      c = Vec3(float(p->floats[0]), float(p->floats[1]), float(p->floats[2]));
      break;
    case PbrtParamType::kFloat:
      if (p->floats.empty()) return false;
      c = Vec3(float(p->floats[0]));
      break;
    case PbrtParamType::kBlackbody:
      if (p->floats.empty()) return false;
      c = BlackbodyRgb(p->floats[0]);
      if (use != SpectrumUse::kIlluminant)
        load.WarnKind("blackbody-not-light", p->loc,
                      "\"blackbody " + name + "\" on other than a light: read as its colour at luminance 1");
      break;
    case PbrtParamType::kSpectrum:
      if (!p->strings.empty()) {
        const std::string& s = p->strings[0];
        if (NamedSpectrumRgb(s, &c)) break;
        if (s == "stdillum-D65") {  // the sRGB white: renders as (1, 1, 1)
          c = Vec3(1.0f);
          break;
        }
        load.WarnKind("spectrum-name:" + s, p->loc,
                      "spectrum \"" + s + "\" (\"" + name +
                          "\"): not a named spectrum the tracer knows (metals, glasses, stdillum-D65), and spectrum "
                          "files are not read; the parameter is ignored");
        return false;
      }
      for (int i = 0; i < 3; ++i) c[i] = static_cast<float>(PiecewiseAt(p->floats, kChannelNm[i]));
      load.WarnKind("spectrum-sampled", p->loc,
                    "spectrum given by wavelengths (\"" + name +
                        "\"): sampled at 630, 532 and 465 nm for R, G and B (an approximation of its colour)");
      if (use == SpectrumUse::kIlluminant) c = UnitLuminance(c);
      break;
    default:
      load.WarnKind("spectrum-type:" + name, p->loc,
                    "\"" + std::string(PbrtParamTypeName(p->type)) + " " + name +
                        "\": not a spectrum type (rgb, spectrum, blackbody, float); ignored");
      return false;
  }
  if (!IsFinite(c)) return false;
  if (use == SpectrumUse::kAlbedo) c = Min(Max(c, Vec3(0.0f)), Vec3(1.0f));
  if (use != SpectrumUse::kUnbounded) c = Max(c, Vec3(0.0f));
  *rgb = c;
  return true;
}

}  // namespace tracer::pbrtload
