// @file denoise.h: the denoisers' per-pixel code (--denoise), run by the host's threads (host/denoise.h) and by one
// CUDA thread per pixel (kernels/denoise.cu), so that both run the same arithmetic.
//
// Inputs: the image, its two half-buffers (the means of the even- and of the odd-numbered samples, which the film
// keeps apart under --denoise) and the first-hit features of --aov (albedo, normal, position, depth, emission).
//  1. DenoiseVariancePixel: each pixel's noise, from the halves: (A - B)^2 / 2 estimates the variance of one half's
//     mean (A and B are independent estimates of the same mean), averaged over 3x3 pixels.
//  2a. AtrousPixel (the naive twin, --denoise atrous): one level of the edge-avoiding a-trous wavelet filter
//     (Dammertz, Sewtz, Hanika and Lensch 2010): a 5x5 B3-spline kernel with holes (2^level pixels apart), five
//     levels, edge-stopping weights from the colour (normalised by the variance, which each level filters along,
//     as Schied et al. 2017 guide theirs), the normal, the albedo and the distance from the pixel's tangent plane.
//  2b. the regression (the default, --denoise nfor), in core/denoise_nfor.h: first-order regression of the colour on
//     the features in a 9x9 window, weighted by non-local means of the OTHER half-buffer.
#pragma once
#include "tracer/core/film.h"
#include "tracer/core/math.h"

namespace tracer {

// A depth at or beyond this is a pixel whose rays all left the scene (first_hit.h writes kAovMissDepth, 1e10).
constexpr float kDenoiseMissDepth = 1e9f;
constexpr int kAtrousLevels = 5;
constexpr int kNforFeatures = 8;  // 1, albedo (3), normal (3), depth
constexpr int kNforEntries = kNforFeatures * (kNforFeatures + 1) / 2;

// The filters' parameters (the defaults are what --denoise uses; tests and experiments may change them).
struct DenoiseSettings {
  // a-trous edge-stopping scales
  float atrousColor = 2.0f;   // colour differences, in standard deviations of the difference's noise
  float atrousNormal = 0.3f;  // |n_p - n_q|
  float atrousAlbedo = 0.1f;  // |a_p - a_q|
  float atrousPlane = 1.0f;   // PlaneDistance, in footprints
  float emission = 0.2f;      // EmissionWeight's scale (both filters)
  // the regression
  int nforRadius = 4;       // the window: (2r + 1)^2 pixels (5, 11x11: up to 21% lower relMSE, 1.4x the time)
  int nforPatch = 1;        // non-local means patches: (2f + 1)^2 pixels
  float nforK = 1.0f;       // non-local means bandwidth: larger averages more
  float nforRidge = 1e-2f;  // the ridge on each slope, times the weight sum
  // The regression's loop: false, over tiles, each pixel pair's patch term computed once per offset (the host's
  // threads, the GPU's shared memory); true, NforPixel for each pixel (the naive twin: the same image, the host's
  // bit for bit, (2f + 1)^2 times the terms).
  bool nforPerPixel = false;
  // Fireflies (NforClampOutliersPixel): a pixel's squared difference between its halves beyond this many times the
  // mean of its 5x5 neighbours' is clamped to it, the brighter half moved toward the other (0: off).
  float nforOutlier = 49.0f;
};

// Every image is row-major, row 0 at the top; colours and vectors 3 floats a pixel, depth and scalars one.
struct DenoiseView {
  int32_t width, height;
  const float* color;   // the mean of every sample (the raw image)
  const float* halfA;   // the mean of the even-numbered samples
  const float* halfB;   // the mean of the odd-numbered samples
  const float* albedo;  // first-hit features (first_hit.h)
  const float* normal;
  const float* position;
  const float* depth;
  const float* emission;  // the emitted radiance seen at the first hit (3 a pixel)
  const float* variance;  // DenoiseVariancePixel's (3 a pixel): the variance of one half's mean
  DenoiseSettings settings;
};

TRACER_HD Vec3 PixelRgb(const float* image, int p) { return Vec3(image[3 * p], image[3 * p + 1], image[3 * p + 2]); }
TRACER_HD void StoreRgb(float* image, int p, Vec3 c) {
  image[3 * p] = c.x;
  image[3 * p + 1] = c.y;
  image[3 * p + 2] = c.z;
}
TRACER_HD float Sum3(Vec3 c) { return c.x + c.y + c.z; }
TRACER_HD int ClampInt(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }
TRACER_HD bool SeesSurface(const DenoiseView& v, int p) { return v.depth[p] < kDenoiseMissDepth; }

// ---- 0. the inputs, from the film ----------------------------------------------------------------------------------
// One value of the half-buffers from the film's fixed-point sums (core/film.h) of n samples: the even-numbered
// samples' sum (sum - odd) over their count, and the odd ones' over theirs; with no odd sample (n = 1) its one sample
// is in both halves. The host (host/denoise.h's ResolveHalves) and the GPU resolve a film with it.
TRACER_HD void HalfBufferValues(unsigned long long sum, unsigned long long odd, unsigned n, float& a, float& b) {
  const unsigned oddCount = n / 2, evenCount = n - oddCount;  // samples 0, 2, 4, ... are even
  a = evenCount ? static_cast<float>(static_cast<double>(sum - odd) / (kFilmScale * evenCount)) : 0.0f;
  b = oddCount ? static_cast<float>(static_cast<double>(odd) / (kFilmScale * oddCount)) : a;
}

// ---- 1. the noise of each pixel --------------------------------------------------------------------------------
// var3: the variance of a half's mean per channel; varMean: the variance of the image's mean (half a half's: it
// holds both), averaged over the channels, which is what the a-trous filter carries. The 3x3 average turns a
// one-pair estimate (chi-square with one degree of freedom, often near 0 by chance) into one that can weigh colours.
TRACER_HD void DenoiseVariancePixel(const DenoiseView& v, int p, float* var3, float* varMean) {
  const int x = p % v.width, y = p / v.width;
  Vec3 sum(0.0f);
  int n = 0;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      const int qx = x + dx, qy = y + dy;
      if (qx < 0 || qy < 0 || qx >= v.width || qy >= v.height) continue;
      const int q = qy * v.width + qx;
      const Vec3 d = PixelRgb(v.halfA, q) - PixelRgb(v.halfB, q);
      sum += d * d * 0.5f;
      ++n;
    }
  const Vec3 var = sum / static_cast<float>(n);
  StoreRgb(var3, p, var);
  varMean[p] = Sum3(var) * (0.5f / 3.0f);
}

// ---- geometry shared by both filters ------------------------------------------------------------------------------
// How far apart neighbouring pixels' surface points are at p: the smallest distance to a 4-neighbour's position
// (the smallest, so that a neighbour across an edge does not count). Distances along the surface in these units do
// not depend on the scene's scale or the image's size. At a pixel without neighbours on a surface: 1e-3 of its depth.
TRACER_HD float PixelFootprint(const DenoiseView& v, int x, int y) {
  const int p = y * v.width + x;
  const Vec3 xp = PixelRgb(v.position, p);
  float best = kInf;
  const int nx[4] = {x - 1, x + 1, x, x};
  const int ny[4] = {y, y, y - 1, y + 1};
  for (int k = 0; k < 4; ++k) {
    if (nx[k] < 0 || ny[k] < 0 || nx[k] >= v.width || ny[k] >= v.height) continue;
    const int q = ny[k] * v.width + nx[k];
    if (!SeesSurface(v, q)) continue;
    const float d = Length(PixelRgb(v.position, q) - xp);
    if (d > 0.0f) best = Fminf(best, d);
  }
  return best < kInf ? best : Fmaxf(1e-3f * v.depth[p], 1e-20f);
}

// The distance of q's surface point from p's tangent plane, in p's footprints: 0 along a plane seen at any angle,
// large across a depth edge. `np` is p's normal made unit.
TRACER_HD float PlaneDistance(const DenoiseView& v, int p, int q, Vec3 np, float footprint) {
  return fabsf(Dot(np, PixelRgb(v.position, q) - PixelRgb(v.position, p))) / footprint;
}

// Directly seen emitters: where a lamp ends, its albedo, normal and depth may be the ceiling's, so only its emission
// tells them apart, and a lamp's radiance spread over the ceiling around it is the worst error a filter can make. The
// difference of the emission seen, relative to the two together: 0 between two pixels without any, 1 between a lamp
// and the ceiling.
// `ep`, `eq`: the pixels' Sum3 of the emission seen.
TRACER_HD float EmissionWeightOf(float ep, float eq, float scale) {
  if (ep == eq) return 1.0f;
  return expf(-Sqr((ep - eq) / ((ep + eq) * scale)));
}
TRACER_HD float EmissionWeight(const DenoiseView& v, int p, int q) {
  return EmissionWeightOf(Sum3(PixelRgb(v.emission, p)), Sum3(PixelRgb(v.emission, q)), v.settings.emission);
}

TRACER_HD Vec3 UnitOrZero(Vec3 n) {
  const float l = Length(n);
  return l > 0.0f ? n / l : Vec3(0.0f);
}

// ---- 2a. the naive twin: edge-avoiding a-trous wavelets (Dammertz et al. 2010) ------------------------------------
// The edge-stopping weight of neighbour q for p: 0 between a surface and the background, 1 between two background
// pixels (their colour alone decides).
TRACER_HD float AtrousEdgeWeight(const DenoiseView& v, int p, int q, Vec3 np, float footprint) {
  const DenoiseSettings& s = v.settings;
  const bool hp = SeesSurface(v, p), hq = SeesSurface(v, q);
  if (hp != hq) return 0.0f;
  if (!hp) return 1.0f;  // (the background emits nothing here: it is the environment, which misses show)
  const Vec3 dn = PixelRgb(v.normal, p) - PixelRgb(v.normal, q);
  const Vec3 da = PixelRgb(v.albedo, p) - PixelRgb(v.albedo, q);
  const float dx = PlaneDistance(v, p, q, np, footprint);
  return EmissionWeight(v, p, q) *
         expf(-Dot(dn, dn) / Sqr(s.atrousNormal) - Dot(da, da) / Sqr(s.atrousAlbedo) - dx * dx / Sqr(s.atrousPlane));
}

// Level `level` (0 to kAtrousLevels - 1) at pixel p: `in` and its variance `inVar` (one a pixel) to `out`, `outVar`.
// A weighted mean of the 5x5 taps 2^level pixels apart, each weighted by the B3 spline (1, 4, 6, 4, 1) / 16 in x and
// y and its edge-stopping weights; taps outside the image are left out and the weights renormalised. The variance
// of the result is sum w^2 var / (sum w)^2 (the taps' noise taken as independent), so the colour test of the next
// level, whose taps are farther apart and already smoother, compares with the smaller noise that is left.
TRACER_HD void AtrousPixel(const DenoiseView& v, const float* in, const float* inVar, int level, int p, float* out,
                           float* outVar) {
  const float h[5] = {1.0f / 16.0f, 1.0f / 4.0f, 3.0f / 8.0f, 1.0f / 4.0f, 1.0f / 16.0f};
  const int x = p % v.width, y = p / v.width, step = 1 << level;
  const Vec3 cp = PixelRgb(in, p), np = UnitOrZero(PixelRgb(v.normal, p));
  const float vp = inVar[p];
  const float footprint = SeesSurface(v, p) ? PixelFootprint(v, x, y) : 1.0f;
  // 1e-10 keeps a noise-free pair (variance 0) from dividing 0 by 0: equal colours weigh fully, others not at all.
  const float colorScale = 1.0f / (3.0f * Sqr(v.settings.atrousColor));
  Vec3 sum(0.0f);
  float wsum = 0.0f, varSum = 0.0f;
  for (int j = 0; j < 5; ++j)
    for (int i = 0; i < 5; ++i) {
      const int qx = x + (i - 2) * step, qy = y + (j - 2) * step;
      if (qx < 0 || qy < 0 || qx >= v.width || qy >= v.height) continue;
      const int q = qy * v.width + qx;
      const Vec3 cq = PixelRgb(in, q), dc = cp - cq;
      const float colorW = expf(-Dot(dc, dc) * colorScale / (vp + inVar[q] + 1e-10f));
      const float w = h[i] * h[j] * colorW * (q == p ? 1.0f : AtrousEdgeWeight(v, p, q, np, footprint));
      sum += cq * w;
      wsum += w;
      varSum += w * w * inVar[q];
    }
  // wsum >= h[2]^2 > 0: the centre tap always weighs 1 in its edge and colour tests.
  StoreRgb(out, p, sum / wsum);
  outVar[p] = varSum / (wsum * wsum);
}

}  // namespace tracer
