// @file bsdf_test_util.h: what the BSDF sampling tests share (bsdf_test.cpp, bsdf_lobes_test.cpp): uniform numbers,
// the theta x phi binning of the sphere, the histogram of a BSDF's samples and the pdf's expected one, the p-value
// report, and the albedo estimate. Each test file sets its own significance (its Sidak family).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "chi2.h"
#include "tracer/core/material.h"

namespace tracer::test {

constexpr double kPiD = 3.14159265358979323846;

// One line per hypothesis test, so that a run prints the p-value table.
inline void Report(const std::string& name, const char* kind, double stat, int dof, double p, double significance) {
  std::printf("[ p-value  ] %-44s %-8s stat=%12.3f dof=%4d p=%.4g (reject below %.3g)\n", name.c_str(), kind, stat, dof,
              p, significance);
}

inline void ExpectChi2Passes(const std::string& name, const std::vector<double>& observed,
                             const std::vector<double>& expected, double significance) {
  Chi2Outcome r = Chi2Test(observed, expected);
  Report(name, "chi2", r.stat, r.dof, r.p, significance);
  EXPECT_TRUE(r.error.empty()) << name << ": " << r.error;
  EXPECT_GT(r.dof, 10) << name << ": too few cells for a meaningful test";
  EXPECT_GE(r.p, significance) << name << ": chi2 = " << r.stat << " with " << r.dof << " dof";
}

// ---- random numbers and binning -----------------------------------------------------------------------------
// A float in [0, 1) with 24 random bits, like tracer::Random. (std::uniform_real_distribution<float> can return
// 1.0 through rounding, LWG issue 2524.)
inline float Uniform(std::mt19937& rng) { return static_cast<float>(rng() >> 8) * (1.0f / 16777216.0f); }

constexpr int kThetaRes = 20, kPhiRes = 40;  // whole sphere; theta = pi/2 is a bin edge (thetaRes even)

inline Vec3 DirectionFromAngles(double theta, double phi) {
  return Vec3(static_cast<float>(std::sin(theta) * std::cos(phi)), static_cast<float>(std::sin(theta) * std::sin(phi)),
              static_cast<float>(std::cos(theta)));
}

// cos(theta) at the bin edges, descending: theta bin t holds cosEdges[t + 1] < cos(theta) <= cosEdges[t].
inline const std::vector<double>& CosThetaEdges() {
  static const std::vector<double> edges = [] {
    std::vector<double> e(kThetaRes + 1);
    for (int t = 0; t <= kThetaRes; ++t) e[t] = std::cos(t * kPiD / kThetaRes);
    e[kThetaRes / 2] = 0.0;  // exactly the horizon
    return e;
  }();
  return edges;
}

inline int SphereBin(Vec3 w) {
  const std::vector<double>& edges = CosThetaEdges();
  double len = std::sqrt(double(w.x) * w.x + double(w.y) * w.y + double(w.z) * w.z);
  double z = w.z / len;
  // A float acos guesses the theta bin, and exact comparisons with the edges settle it (cheaper than a search).
  int t = std::clamp(static_cast<int>(std::acos(static_cast<float>(z)) * (kThetaRes / kPi)), 0, kThetaRes - 1);
  while (t > 0 && z > edges[t]) --t;
  while (t < kThetaRes - 1 && z <= edges[t + 1]) ++t;
  // z = 0 exactly (the cosine warp reaches the rim) is the upper hemisphere's limit, as in SameHemisphere.
  if (z == 0.0) t = kThetaRes / 2 - 1;
  // Float atan2: its ~1e-7 rad error can move a sample only if it lies that close to a phi edge.
  float phi = std::atan2(w.y, w.x);
  if (phi < 0.0f) phi += 2.0f * kPi;
  int p = std::clamp(static_cast<int>(phi * (kPhiRes / (2.0f * kPi))), 0, kPhiRes - 1);
  return t * kPhiRes + p;
}

// Integrates g(w) dw over each bin of the theta x phi grid by composite Simpson's rule in (theta, phi) with
// `sub` intervals per bin side. (theta, phi) rather than (cos theta, phi): g(w) sin(theta) is smooth in theta at
// the poles, while w(cos theta) has an infinite derivative there. Nodes are nudged 1e-6 of a bin into the bin so
// that a node on theta = pi/2 sees the bin's own side of the horizon, where reflective pdfs jump to zero.
// sub = 32 is needed: at alpha 0.2 and cos(wo) 0.1 the lobe at the horizon is ~0.04 rad wide in phi, and sub = 8
// misplaced 2% of a bin's count (a false chi2 failure, p = 5e-14). ExpectedHistogram checks convergence.
template <class G>
inline std::vector<double> IntegrateSphereBins(G g, int sub = 32) {
  std::vector<double> out(kThetaRes * kPhiRes, 0.0);
  const double dTheta = kPiD / kThetaRes, dPhi = 2.0 * kPiD / kPhiRes;
  const double h = dTheta / sub, k = dPhi / sub;
  auto weight = [sub](int i) { return (i == 0 || i == sub) ? 1.0 : (i % 2 ? 4.0 : 2.0); };
  for (int t = 0; t < kThetaRes; ++t) {
    for (int p = 0; p < kPhiRes; ++p) {
      double sum = 0.0;
      for (int a = 0; a <= sub; ++a) {
        double theta = std::clamp(t * dTheta + a * h, t * dTheta + 1e-6 * dTheta, (t + 1) * dTheta - 1e-6 * dTheta);
        for (int b = 0; b <= sub; ++b) {
          double phi = std::clamp(p * dPhi + b * k, p * dPhi + 1e-6 * dPhi, (p + 1) * dPhi - 1e-6 * dPhi);
          sum += weight(a) * weight(b) * g(DirectionFromAngles(theta, phi)) * std::sin(theta);
        }
      }
      out[t * kPhiRes + p] = sum * h * k / 9.0;
    }
  }
  return out;
}

inline bool RelClose(double a, double b, double rel, double absTol = 1e-7) {
  return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b)) + absTol;
}

inline Vec3 DirectionFromCos(float cosTheta, float phi) {
  float s = std::sqrt(std::max(0.0f, 1.0f - cosTheta * cosTheta));
  return Vec3(s * std::cos(phi), s * std::sin(phi), cosTheta);
}

// Draws `n` BSDF samples at wo and returns the histogram over the sphere bins, plus one last cell for invalid
// samples. Also checks, for each non-delta sample, that f and pdf are what BsdfEval and BsdfPdf return.
inline std::vector<double> SampleHistogram(const SurfaceBsdf& b, Vec3 wo, int n, uint32_t seed,
                                           const std::string& name) {
  std::mt19937 rng(seed);
  std::vector<double> hist(kThetaRes * kPhiRes + 1, 0.0);
  int badF = 0, badPdf = 0, badOther = 0;
  for (int i = 0; i < n; ++i) {
    float uLobe = Uniform(rng), u1 = Uniform(rng), u2 = Uniform(rng);
    BsdfSample s = BsdfSampleDir(b, wo, uLobe, u1, u2);
    if (!s.valid) {
      hist.back() += 1.0;
      continue;
    }
    hist[SphereBin(s.wi)] += 1.0;
    // Estimate consistency: relative 1e-4 allows for float rounding in f and pdf, nothing more.
    Vec3 f = BsdfEval(b, wo, s.wi);
    float pdf = BsdfPdf(b, wo, s.wi);
    if (!RelClose(s.f.x, f.x, 1e-4) || !RelClose(s.f.y, f.y, 1e-4) || !RelClose(s.f.z, f.z, 1e-4)) ++badF;
    if (!RelClose(s.pdf, pdf, 1e-4)) ++badPdf;
    if (s.delta || !(s.pdf > 0.0f) || !IsFinite(s.f) || std::fabs(Length(s.wi) - 1.0f) > 1e-4f) ++badOther;
  }
  EXPECT_EQ(badF, 0) << name << ": sampled f differs from BsdfEval";
  EXPECT_EQ(badPdf, 0) << name << ": sampled pdf differs from BsdfPdf";
  EXPECT_EQ(badOther, 0) << name << ": delta flag, non-positive pdf, non-finite f or non-unit wi";
  return hist;
}

// SampleHistogram for a BSDF with a delta lobe beside its others (a smooth coat's mirror reflection): the delta
// samples and the invalid ones share the last cell, which ExpectedHistogram expects with what the pdf leaves to them.
// checkDelta(sample) says whether a delta sample is right (its direction and weight); the others are checked as
// SampleHistogram checks them.
template <class CheckDelta>
inline std::vector<double> SampleHistogramWithDelta(const SurfaceBsdf& b, Vec3 wo, int n, uint32_t seed,
                                                    const std::string& name, CheckDelta checkDelta) {
  std::mt19937 rng(seed);
  std::vector<double> observed(kThetaRes * kPhiRes + 1, 0.0);
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    const BsdfSample s = BsdfSampleDir(b, wo, Uniform(rng), Uniform(rng), Uniform(rng));
    if (!s.valid || s.delta) {
      observed.back() += 1.0;
      if (s.valid && !checkDelta(s)) ++bad;
    } else {
      observed[SphereBin(s.wi)] += 1.0;
      if (!RelClose(s.pdf, BsdfPdf(b, wo, s.wi), 1e-4) || !RelClose(s.f.x, BsdfEval(b, wo, s.wi).x, 1e-4)) ++bad;
    }
  }
  EXPECT_EQ(bad, 0) << name << ": delta samples off the mirror direction or weight, or f and pdf not BsdfEval's";
  return observed;
}

// Expected counts for SampleHistogram: n times the pdf's integral over each bin (Simpson with `sub` intervals per
// bin side), and n times the missing mass for the invalid cell.
inline std::vector<double> ExpectedHistogram(const SurfaceBsdf& b, Vec3 wo, int n, const std::string& name,
                                             int sub = 32) {
  auto pdf = [&](Vec3 wi) { return double(BsdfPdf(b, wo, wi)); };
  std::vector<double> e = IntegrateSphereBins(pdf, sub), coarse = IntegrateSphereBins(pdf, sub / 2);
  // Quadrature convergence: Simpson's error falls 16x per halving, so if the chi2 distance between the sub / 2 and
  // sub grids is below 1, the error of the finer grid adds < 1/256 to the statistic.
  double quadChi2 = 0.0;
  for (size_t i = 0; i < e.size(); ++i)
    if (e[i] > 0.0) quadChi2 += n * (e[i] - coarse[i]) * (e[i] - coarse[i]) / e[i];
  EXPECT_LT(quadChi2, 1.0) << name << ": the expected counts are not converged; refine IntegrateSphereBins";
  double total = std::accumulate(e.begin(), e.end(), 0.0);
  // Quadrature error is far below 1e-4 (checked against finer grids); more than that means pdf mass > 1.
  EXPECT_LE(total, 1.0 + 1e-4) << name << ": the pdf integrates to more than one";
  for (double& v : e) v *= n;
  // The invalid cell is never "impossible": the cosine warp reaches the rim (z = 0, pdf 0) about once per 1e6
  // draws, so a diffuse sample can be rejected even though its pdf integrates to 1. A tiny floor lets such a
  // sample be pooled instead of tripping the zero-pdf failure.
  e.push_back(std::max(1.0 - total, 1e-9) * n);
  return e;
}

inline std::string FloatName(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  std::string s(buf);
  std::replace(s.begin(), s.end(), '.', 'p');
  std::replace(s.begin(), s.end(), '-', 'm');
  return s;
}

// Albedo at wo by Monte Carlo with the BSDF's own sampling (red channel): mean and standard error. Unbiased where
// the pdf covers f, which the chi-square tests check; the weights are near 1 for white surfaces, so the error is
// small even for lobes too sharp for quadrature (at alpha 0.05 and cos 0.02, 16 Simpson points per bin are 4%
// off).
struct McAlbedo {
  double mean, se;
};
inline McAlbedo SampledAlbedo(const SurfaceBsdf& b, Vec3 wo, uint32_t seed, int n = 100000) {
  std::mt19937 rng(seed);
  double sum = 0.0, sum2 = 0.0;
  for (int i = 0; i < n; ++i) {
    BsdfSample s = BsdfSampleDir(b, wo, Uniform(rng), Uniform(rng), Uniform(rng));
    double w = s.valid ? double(s.f.x) * AbsCosTheta(s.wi) / s.pdf : 0.0;
    sum += w;
    sum2 += w * w;
  }
  double mean = sum / n;
  return {mean, std::sqrt(std::max(0.0, sum2 / n - mean * mean) / n)};
}

}  // namespace tracer::test
