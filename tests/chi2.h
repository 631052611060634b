// @file chi2.h: the statistics of the sampling tests: Pearson's chi-square with pooling and its p-value, and the
// two-sided p-value of a normal deviate.
#pragma once
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace tracer::test {

// Regularised upper incomplete gamma Q(a, x) = Gamma(a, x) / Gamma(a): the series for P = 1 - Q when x < a + 1,
// otherwise the continued fraction for Q by the modified Lentz method (Press et al. 2007, Numerical Recipes,
// 3rd ed., sec. 6.2, gser and gcf).
inline double GammaQ(double a, double x) {
  if (x <= 0.0) return 1.0;
  const double logPrefix = a * std::log(x) - x - std::lgamma(a);
  if (x < a + 1.0) {
    double ap = a, del = 1.0 / a, sum = del;
    for (int n = 0; n < 100000; ++n) {
      ap += 1.0;
      del *= x / ap;
      sum += del;
      if (std::fabs(del) < std::fabs(sum) * 1e-16) break;
    }
    return std::max(0.0, 1.0 - sum * std::exp(logPrefix));
  }
  const double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    double del = d * c;
    h *= del;
    if (std::fabs(del - 1.0) < 1e-16) break;
  }
  return std::exp(logPrefix) * h;
}

// Two-sided p-value of a standard normal deviate.
inline double NormalTwoSidedP(double z) { return std::erfc(std::fabs(z) / std::sqrt(2.0)); }

struct Chi2Outcome {
  double stat = 0.0;
  int dof = 0;
  double p = 1.0;
  std::string error;  // a hard failure: samples where the pdf integrates to zero
};

// Pearson's chi-square with pbrt-v3's pooling: cells are visited in order of expected count, and those expected
// below 5 (where the chi-square approximation breaks down) are merged until the pool reaches 5.
inline Chi2Outcome Chi2Test(const std::vector<double>& observed, const std::vector<double>& expected) {
  Chi2Outcome r;
  std::vector<size_t> order(observed.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return expected[a] < expected[b]; });
  double pooledObs = 0.0, pooledExp = 0.0;
  int cells = 0;
  for (size_t i : order) {
    if (expected[i] <= 0.0) {
      if (observed[i] > 0.0 && r.error.empty())
        r.error = std::to_string(observed[i]) + " samples in cell " + std::to_string(i) + " where the pdf is zero";
    } else if (expected[i] < 5.0 || (pooledExp > 0.0 && pooledExp < 5.0)) {
      pooledObs += observed[i];
      pooledExp += expected[i];
    } else {
      double d = observed[i] - expected[i];
      r.stat += d * d / expected[i];
      ++cells;
    }
  }
  if (pooledExp > 0.0) {
    double d = pooledObs - pooledExp;
    r.stat += d * d / pooledExp;
    ++cells;
  }
  r.dof = cells - 1;
  r.p = r.dof > 0 ? GammaQ(0.5 * r.dof, 0.5 * r.stat) : 1.0;
  return r;
}

}  // namespace tracer::test
