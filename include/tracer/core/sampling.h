// @file sampling.h: warps from the unit square, MIS weights and the alias table used to pick lights.
#pragma once
#include "tracer/core/math.h"

namespace tracer {

// A uniform point (x, y) on the unit disk by the concentric mapping of the square (Shirley and Chiu 1997), which keeps
// strata compact and has no discontinuity inside the disk.
TRACER_HD void SampleConcentricDisk(float u1, float u2, float& x, float& y) {
  float a = 2.0f * u1 - 1.0f, b = 2.0f * u2 - 1.0f;
  float r, phi;
  if (a == 0.0f && b == 0.0f) {
    r = 0.0f;
    phi = 0.0f;
  } else if (a * a > b * b) {
    r = a;
    phi = (kPi / 4.0f) * (b / a);
  } else {
    r = b;
    phi = (kPi / 2.0f) - (kPi / 4.0f) * (a / b);
  }
  x = r * cosf(phi);
  y = r * sinf(phi);
}

// Cosine-weighted hemisphere around +z by Malley's method: a concentric disk point lifted to the hemisphere.
TRACER_HD Vec3 SampleCosineHemisphere(float u1, float u2) {
  float x, y;
  SampleConcentricDisk(u1, u2, x, y);
  return Vec3(x, y, SafeSqrt(1.0f - x * x - y * y));
}
TRACER_HD float CosineHemispherePdf(float cosTheta) { return cosTheta > 0.0f ? cosTheta * kInvPi : 0.0f; }

// Uniform barycentrics on a triangle (the square-root parameterisation, Shirley and Chiu 1997).
TRACER_HD void SampleTriangle(float u1, float u2, float& b1, float& b2) {
  float su = sqrtf(u1);
  b1 = 1.0f - su;
  b2 = u2 * su;
}

// Power heuristic with beta = 2 (Veach 1997), written to stay finite when either pdf is infinite.
TRACER_HD float PowerHeuristic(float pdfA, float pdfB) {
  float a = pdfA * pdfA, b = pdfB * pdfB;
  if (a > 3.402823466e+38f) return 1.0f;  // pdfA infinite, or so large its square overflows (not inf / inf)
  return a + b > 0.0f ? a / (a + b) : 0.0f;
}

// Alias table (Walker 1977, Vose 1991): O(1) sampling of a discrete distribution.
// Entry i keeps probability prob[i] of itself and otherwise redirects to alias[i].
struct AliasEntry {
  float prob;     // probability of keeping bin i
  int32_t alias;  // bin taken otherwise
  float pmf;      // normalised probability of bin i, for MIS
  float pad;
};
static_assert(sizeof(AliasEntry) == 16, "one alias entry is one 16-byte load");

// Picks a bin with one uniform number: the integer part selects the bin, the fraction decides alias.
TRACER_HD int SampleAlias(const AliasEntry* table, int n, float u, float& pmf) {
  float scaled = u * static_cast<float>(n);
  int i = static_cast<int>(scaled);
  if (i >= n) i = n - 1;
  float frac = scaled - static_cast<float>(i);
  AliasEntry e = table[i];
  int pick = frac < e.prob ? i : e.alias;
  pmf = table[pick].pmf;
  return pick;
}

}  // namespace tracer
